import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { ConnectionStats } from '../store/sql-database.js';
import type { WebhookOutcome } from '../webhooks/webhook-service.js';
import { RequestMetrics } from './request-metrics.js';

/** What the metrics read when scraped: narrow views of the database, the outbox, the dispatcher and the webhook store. */
export interface MetricsSources {
  db: { connectionStats(): ConnectionStats };
  /** The newest outbox id, and when the first event after `afterId` occurred. */
  outbox: { backlogAfter(afterId: number): Promise<{ newestId: number; oldestOccurredAt: string | undefined }> };
  /** The id of the newest event handed to subscribers, and how many subscribers there are. */
  dispatcher: { readonly lastId: number; readonly subscriberCount: number };
  /** Webhook deliveries waiting for an attempt, in the whole database. */
  webhooks: { pendingCount(): Promise<number> };
  /** The GraphQL subscription groups running (subscribers sharing one execution per event), and what their members hold queued. */
  subscriptionGroups: { readonly size: number; readonly queued: { readonly bytes: number } };
}

/** Where subscriptions and event streams are served. */
export type StreamTransport = 'event-stream' | 'graphql-sse' | 'graphql-ws';

/** The text format prom-client writes (Prometheus 0.0.4). */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

let processRegistry: Registry | undefined;

/**
 * prom-client's Node.js metrics, collected once per process whatever the number of apps: they
 * describe the process, and each collection starts monitors (event loop delay, GC) that are
 * never stopped, so one per app would pile up in a process that builds many (tests).
 */
function sharedProcessRegistry(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

const OUTCOME_LABELS: Record<Exclude<WebhookOutcome, 'endpoint-disabled'>, string> = {
  succeeded: 'succeeded',
  'retry-scheduled': 'retry_scheduled',
  failed: 'failed',
};

/**
 * The metrics of one app, in a registry of its own (a process may build several apps): requests
 * (recorded by {@link RequestMetrics}), database connections, outbox lag, webhook outcomes,
 * open streams, plus the shared process metrics. Whatever a scrape must ask the database is
 * asked when scraped, never on a request's path.
 */
export class AppMetrics {
  readonly requests = new RequestMetrics();
  readonly #registry = new Registry();
  readonly #processMetrics: boolean;
  readonly #webhookAttempts: Counter<'outcome'>;
  readonly #endpointsDisabled: Counter;
  readonly #openStreams: Gauge<'transport'>;
  readonly #clientErrors: Counter<'status'>;
  #sample: (() => Promise<void>) | undefined;

  constructor(options: { processMetrics: boolean }) {
    this.#processMetrics = options.processMetrics;
    const registers = [this.#registry];
    this.#webhookAttempts = new Counter({
      name: 'restgraph_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts made by this instance, by outcome: succeeded, retry_scheduled (failed, another attempt to come), failed (failed, no retry left).',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of Object.values(OUTCOME_LABELS)) this.#webhookAttempts.inc({ outcome }, 0);
    this.#endpointsDisabled = new Counter({
      name: 'restgraph_webhook_endpoints_disabled_total',
      help: 'Webhook endpoints this instance disabled because every delivery to them failed for too long.',
      registers,
    });
    this.#openStreams = new Gauge({
      name: 'restgraph_open_streams',
      help: 'Open event connections, by transport: GET /v1/events streams (event-stream), graphql-sse streams (graphql-sse), graphql-ws WebSocket connections (graphql-ws).',
      labelNames: ['transport'],
      registers,
    });
    for (const transport of ['event-stream', 'graphql-sse', 'graphql-ws'] satisfies StreamTransport[]) this.#openStreams.set({ transport }, 0);
    this.#clientErrors = new Counter({
      name: 'restgraph_http_client_errors_total',
      help: "Requests answered by Node.js's HTTP parser before any route saw them, by status: 431 (headers or URL too large), 408 (sent too slowly), 400 (not valid HTTP).",
      labelNames: ['status'],
      registers,
    });
  }

  /** Starts reporting the database, the outbox and the dispatcher (read when scraped). */
  watch(sources: MetricsSources): void {
    const registers = [this.#registry];
    const connections = new Gauge({
      name: 'restgraph_db_connections',
      help: 'Database connections, by state (idle, in_use). PostgreSQL: the pool; SQLite: the writer and the reader.',
      labelNames: ['state'],
      registers,
    });
    const maxConnections = new Gauge({ name: 'restgraph_db_connections_max', help: 'Most database connections there may be.', registers });
    const waiting = new Gauge({
      name: 'restgraph_db_waiting',
      help: 'Queries waiting for a pool connection (PostgreSQL), or write transactions waiting for the write lock (SQLite).',
      registers,
    });
    const up = new Gauge({ name: 'restgraph_db_up', help: "1 when this scrape's outbox and webhook queries succeeded, 0 when they failed (the gauges they feed keep their last values).", registers });
    const lagEvents = new Gauge({
      name: 'restgraph_outbox_lag_events',
      help: 'Outbox ids committed but not yet dispatched by this instance (the newest id minus the last dispatched; ids may have gaps).',
      registers,
    });
    const lagSeconds = new Gauge({ name: 'restgraph_outbox_lag_seconds', help: 'Age of the oldest committed event this instance has not dispatched yet; 0 when none.', registers });
    const pending = new Gauge({
      name: 'restgraph_webhook_deliveries_pending',
      help: 'Webhook deliveries waiting for an attempt (due now or scheduled for a retry), of every instance sharing the database.',
      registers,
    });
    const subscribers = new Gauge({
      name: 'restgraph_event_subscribers',
      help: 'Consumers the event dispatcher feeds: /v1/events streams, GraphQL subscriptions of either transport, and the webhook feeder (one while any endpoint is active).',
      registers,
    });
    const groups = new Gauge({
      name: 'restgraph_subscription_groups',
      help: 'GraphQL subscription groups running: subscribers asking the same thing share one group, which executes each event once for them all.',
      registers,
    });
    const queued = new Gauge({
      name: 'restgraph_subscription_queued_bytes',
      help: 'Bytes GraphQL subscriptions hold queued for connections that do not take their messages (each message once), bounded by RESTGRAPH_SUBSCRIPTION_QUEUE_BYTES.',
      registers,
    });
    this.#sample = async () => {
      const stats = sources.db.connectionStats();
      connections.set({ state: 'idle' }, stats.idle);
      connections.set({ state: 'in_use' }, stats.open - stats.idle);
      maxConnections.set(stats.max);
      waiting.set(stats.waiting);
      subscribers.set(sources.dispatcher.subscriberCount);
      groups.set(sources.subscriptionGroups.size);
      queued.set(sources.subscriptionGroups.queued.bytes);
      const dispatched = sources.dispatcher.lastId;
      try {
        const [backlog, pendingCount] = await Promise.all([sources.outbox.backlogAfter(dispatched), sources.webhooks.pendingCount()]);
        lagEvents.set(Math.max(0, backlog.newestId - dispatched));
        lagSeconds.set(backlog.oldestOccurredAt === undefined ? 0 : Math.max(0, (Date.now() - Date.parse(backlog.oldestOccurredAt)) / 1000));
        pending.set(pendingCount);
        up.set(1);
      } catch {
        // The scrape still reports everything else; /readyz and the request log tell the rest.
        up.set(0);
      }
    };
  }

  /** Counts one webhook attempt's outcome (the service's callback). */
  readonly webhookOutcome = (outcome: WebhookOutcome): void => {
    if (outcome === 'endpoint-disabled') this.#endpointsDisabled.inc();
    else this.#webhookAttempts.inc({ outcome: OUTCOME_LABELS[outcome] });
  };

  /** A counter of the streams open on `transport`, for its routes to move. */
  openStreams(transport: StreamTransport): { inc(): void; dec(): void } {
    const gauge = this.#openStreams;
    return { inc: () => gauge.inc({ transport }), dec: () => gauge.dec({ transport }) };
  }

  /** Counts a request Node.js's parser answered (`status`); undefined when the socket was gone. */
  clientError(status: number | undefined): void {
    if (status !== undefined) this.#clientErrors.inc({ status: String(status) });
  }

  /** Every metric of this app (and of the process), sampled now, in the Prometheus text format. */
  async exposition(): Promise<string> {
    await this.#sample?.();
    const own = await this.#registry.metrics();
    const process = this.#processMetrics ? `\n${await sharedProcessRegistry().metrics()}` : '';
    return `${own}\n${this.requests.render()}${process}`;
  }
}
