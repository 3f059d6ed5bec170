import type { FastifyInstance } from 'fastify';
import type { EventDispatcher } from '../core/event-dispatcher.js';
import type { WorkerLog } from '../retry-backoff.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import type { ResolvedOptions } from './app-options.js';
import type { Lifecycle } from './lifecycle.js';
import type { Storage } from './storage.js';

const PRUNE_INTERVAL_MS = 60 * 60 * 1000; // 1 h

export interface EventWorkParts {
  options: ResolvedOptions;
  storage: Storage;
  dispatcher: EventDispatcher;
  webhooks: WebhookService;
  workerLog: WorkerLog;
  /** Ends the connections on which no byte has arrived (see HttpServer). */
  closeUnusedConnections: () => void;
}

/**
 * Starts the app's background work: the event dispatcher reading the outbox, webhook feeding and
 * attempts, and the hourly pruning of what is past its retention (idempotency keys, events,
 * finished deliveries, one-time tokens; also once before the first request). At shutdown the
 * streams and webhook work end before the connections close; everything is undone through
 * `lifecycle`.
 */
export async function startEventWork(app: FastifyInstance, parts: EventWorkParts, lifecycle: Lifecycle): Promise<void> {
  const { options, storage, dispatcher, webhooks } = parts;
  const prune = async (): Promise<void> => {
    const before = new Date(Date.now() - options.events.retentionMs).toISOString();
    await Promise.all([
      storage.idempotency.prune().catch((error: unknown) => app.log.warn({ err: error }, 'pruning idempotency keys failed')),
      storage.events.prune(before).catch((error: unknown) => app.log.warn({ err: error }, 'pruning events failed')),
      // Finished webhook deliveries (and their attempt logs) are kept as long as events.
      storage.webhooks.pruneFinished(before).catch((error: unknown) => app.log.warn({ err: error }, 'pruning webhook deliveries failed')),
      storage.oneTimeTokens.prune().catch((error: unknown) => app.log.warn({ err: error }, 'pruning one-time tokens failed')),
    ]);
  };
  const pruneTimer = setInterval(() => void prune(), PRUNE_INTERVAL_MS);
  pruneTimer.unref();
  lifecycle.add(() => clearInterval(pruneTimer));
  // What is past its retention is gone before the first request is served.
  app.addHook('onReady', prune);

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    try {
      await webhooks.stop();
    } finally {
      dispatcher.stop();
    }
  };
  await dispatcher.start(parts.workerLog);
  lifecycle.add(stop);
  await webhooks.start();
  // Event streams never end by themselves: end them first, so close() can finish. In a scope of
  // its own, registered last: Fastify runs a scope's preClose hooks after those of the scopes
  // registered before it, so the GraphQL transports close their connections first (clients see
  // the server go away and reconnect, rather than a completed subscription).
  void app.register((scope, _options, done) => {
    scope.addHook('preClose', async () => {
      await stop();
      // Fastify closes the idle keep-alive connections next; connections not used yet are ours to end.
      parts.closeUnusedConnections();
    });
    done();
  });
}
