import type { EventDispatcher, Subscription } from '../core/event-dispatcher.js';
import { ADMIN_SCOPE, type Principal } from '../core/principal.js';
import { requireAdmin } from '../core/token-operations.js';
import { NotFoundError } from '../errors.js';
import type { SchemaModel } from '../schema/schema-model.js';
import type { StoredEvent } from '../store/event-store.js';
import type { AttemptRecord, DeliveryRecord, WebhookRecord, WebhookStore } from '../store/webhook-store.js';
import { newSecret } from './signing.js';
import { WebhookSender } from './webhook-sender.js';
import { parseWebhookInput } from './webhook-input.js';
import { TargetGuard } from './target-guard.js';

export interface WebhookOptions {
  /** Delays before each retry after the first attempt, in seconds (jittered ±20 %). */
  retryScheduleSeconds: readonly number[];
  /** How long one attempt may take. @default 10_000 */
  timeoutMs: number;
  /** An endpoint failing continuously for this long is disabled. @default 5 days */
  disableAfterMs: number;
  /** Hosts and CIDR ranges webhooks may target although private (tests, internal receivers). */
  allowHosts: readonly string[];
  /** Bytes of a receiver's response body kept in the delivery log. @default 1024 */
  maxResponseBytes: number;
  /** How often due deliveries are looked for. @default 500 */
  pollIntervalMs: number;
}

/** An endpoint as clients see it: never its secret (that is shown on create and rotate only). */
export type WebhookView = Omit<WebhookRecord, 'secret'>;

export interface DeliveryView extends Omit<DeliveryRecord, 'payload'> {
  attemptLog: Omit<AttemptRecord, 'deliveryId'>[];
}

const WEBHOOK_PRINCIPAL: Principal = Object.freeze({ kind: 'admin-token', scopes: new Set([ADMIN_SCOPE]), credentialId: 'webhooks' });
const CURSOR_KEY = 'webhooks.cursor';
/** Attempts in flight at once (each to a different endpoint). */
const MAX_IN_FLIGHT = 20;
/** Whether the feeder was reading when the process stopped (then it goes on from its cursor). */
const FEEDING_KEY = 'webhooks.feeding';

/**
 * Webhooks: admin management of endpoints, and their delivery. Events reach webhooks through the
 * one event dispatcher: a feeder turns each event into one delivery per subscribed endpoint, in a
 * transaction with its persisted position (so restarts and crashes lose none and duplicate none);
 * a worker attempts due deliveries, the oldest of each endpoint first, signed as Standard Webhooks
 * says, and retries failures on the schedule.
 */
export class WebhookService {
  readonly #store: WebhookStore;
  readonly #events: EventDispatcher;
  readonly #types: ReadonlySet<string>;
  readonly #options: WebhookOptions;
  readonly #guard: TargetGuard;
  readonly #sender: WebhookSender;
  readonly #log: (error: unknown, message: string) => void;
  #subscription: Subscription | undefined;
  #queue: StoredEvent[] = [];
  #draining: Promise<void> | undefined;
  #resubscribe = false;
  #timer: NodeJS.Timeout | undefined;
  #claiming = false;
  #wakeAgain = false;
  #inFlight = 0;
  #stopped = false;

  constructor(store: WebhookStore, events: EventDispatcher, schema: SchemaModel, options: WebhookOptions, log: (error: unknown, message: string) => void) {
    this.#store = store;
    this.#events = events;
    this.#options = options;
    this.#guard = new TargetGuard({ allow: options.allowHosts });
    this.#sender = new WebhookSender(this.#guard, options);
    this.#log = log;
    const types = new Set<string>();
    for (const resource of schema.resources.values()) for (const kind of ['created', 'updated', 'deleted']) types.add(`${resource.singular}.${kind}`);
    this.#types = types;
  }

  // ------------------------------------------------------------------ management (admin only)

  async create(principal: Principal, body: unknown): Promise<WebhookRecord> {
    requireAdmin(principal, 'webhooks');
    const input = await parseWebhookInput(body, true, this.#types, this.#guard);
    const record = await this.#store.create(
      { url: input.url ?? '', events: input.events ?? [], description: input.description ?? null, secret: newSecret() },
      new Date().toISOString(),
    );
    await this.#syncFeeder();
    return record;
  }

  async list(principal: Principal): Promise<WebhookView[]> {
    requireAdmin(principal, 'webhooks');
    return (await this.#store.list()).map(view);
  }

  async get(principal: Principal, id: number): Promise<WebhookView> {
    requireAdmin(principal, 'webhooks');
    return view(await this.#existing(id));
  }

  async update(principal: Principal, id: number, body: unknown): Promise<WebhookView> {
    requireAdmin(principal, 'webhooks');
    await this.#existing(id);
    const input = await parseWebhookInput(body, false, this.#types, this.#guard);
    return view(await this.#changed(id, input));
  }

  async delete(principal: Principal, id: number): Promise<void> {
    requireAdmin(principal, 'webhooks');
    if (!(await this.#store.delete(id))) throw notFound(id);
    await this.#syncFeeder();
  }

  /** Stops deliveries to an endpoint (they queue up) or starts them again (also after it was disabled). */
  async setPaused(principal: Principal, id: number, paused: boolean): Promise<WebhookView> {
    requireAdmin(principal, 'webhooks');
    await this.#existing(id);
    const values = paused ? { status: 'paused' as const } : { status: 'active' as const, disabledReason: null, failingSince: null };
    const record = await this.#changed(id, values);
    await this.#syncFeeder();
    if (!paused) this.#wake();
    return view(record);
  }

  /** A new secret; the old one stops signing at once. */
  async rotateSecret(principal: Principal, id: number): Promise<WebhookRecord> {
    requireAdmin(principal, 'webhooks');
    await this.#existing(id);
    return this.#changed(id, { secret: newSecret() });
  }

  async deliveries(principal: Principal, id: number, limit = 100): Promise<DeliveryView[]> {
    requireAdmin(principal, 'webhooks');
    await this.#existing(id);
    const deliveries = await this.#store.deliveries(id, limit);
    const attempts = await this.#store.attempts(deliveries.map((d) => d.id));
    return deliveries.map(({ payload: _payload, ...d }) => ({
      ...d,
      attemptLog: attempts.filter((a) => a.deliveryId === d.id).map(({ deliveryId: _deliveryId, ...a }) => a),
    }));
  }

  /** Delivers again: the delivery becomes pending and due now, whatever it was. */
  async retry(principal: Principal, id: number, deliveryId: number): Promise<void> {
    requireAdmin(principal, 'webhooks');
    await this.#existing(id);
    if ((await this.#store.delivery(id, deliveryId)) === undefined) throw new NotFoundError(`Webhook ${id} has no delivery ${deliveryId}.`);
    await this.#store.retry(deliveryId, new Date().toISOString());
    this.#wake();
  }

  async #existing(id: number): Promise<WebhookRecord> {
    const record = await this.#store.get(id);
    if (record === undefined) throw notFound(id);
    return record;
  }

  async #changed(id: number, values: Parameters<WebhookStore['update']>[1]): Promise<WebhookRecord> {
    const record = await this.#store.update(id, values, new Date().toISOString());
    if (record === undefined) throw notFound(id);
    return record;
  }

  // ------------------------------------------------------------------ delivery

  /** Starts feeding deliveries from the outbox (from where the last run stopped) and attempting them. */
  async start(): Promise<void> {
    await this.#syncFeeder();
    this.#timer = setInterval(() => this.#wake(), this.#options.pollIntervalMs);
    this.#timer.unref();
    this.#wake();
  }

  /**
   * The feeder reads events only while some endpoint takes deliveries (active or paused): then
   * from its persisted position; when it starts anew, from now (a new endpoint gets the events
   * from its registration on). Writes pay nothing for webhooks when there are none.
   */
  async #syncFeeder(): Promise<void> {
    if (this.#stopped) return;
    const wanted = (await this.#store.list()).some((w) => w.status !== 'disabled');
    if (wanted && this.#subscription === undefined) {
      const saved = await this.#store.state(CURSOR_KEY);
      const running = saved !== undefined && (await this.#store.state(FEEDING_KEY)) === 'yes';
      const cursor = running ? Number(saved) : this.#events.lastId;
      await this.#store.db.transaction(async (tx) => {
        await this.#store.setState(tx, CURSOR_KEY, String(cursor));
        await this.#store.setState(tx, FEEDING_KEY, 'yes');
      });
      this.#subscribe(cursor);
    } else if (!wanted && this.#subscription !== undefined) {
      this.#subscription.unsubscribe();
      this.#subscription = undefined;
      await this.#store.db.transaction((tx) => this.#store.setState(tx, FEEDING_KEY, 'no'));
    }
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
  }

  #subscribe(afterId: number): void {
    this.#subscription = this.#events.subscribe(
      {
        principal: WEBHOOK_PRINCIPAL,
        deliver: (event) => {
          this.#queue.push(event);
          this.#drain();
          // Paused beyond this; resumed once the queue is written (the dispatcher keeps the place).
          return this.#queue.length < 1000;
        },
        close: (reason) => {
          // Too far behind: start again from the persisted position once the queue is written.
          if (reason === 'slow-consumer') this.#resubscribe = true;
        },
      },
      afterId,
    );
  }

  /** Writes queued events as deliveries, in batches, each with the position it reached. */
  #drain(): void {
    if (this.#draining !== undefined) return;
    this.#draining = (async () => {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, 200);
        const webhooks = (await this.#store.list()).filter((w) => w.status !== 'disabled');
        const now = new Date().toISOString();
        const deliveries = batch.flatMap((event) =>
          webhooks
            .filter((w) => w.events.includes('*') || w.events.includes(event.type))
            .map((w) => ({
              webhookId: w.id,
              eventId: event.id,
              eventType: event.type,
              payload: JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: event.data }),
              status: 'pending' as const,
              attempts: 0,
              nextAttemptAt: now,
              leaseUntil: null,
              createdAt: now,
            })),
        );
        const last = batch[batch.length - 1];
        await this.#store.db.transaction(async (tx) => {
          await this.#store.addDeliveries(tx, deliveries);
          if (last !== undefined) await this.#store.setState(tx, CURSOR_KEY, String(last.id));
        });
        if (deliveries.length > 0) this.#wake();
      }
    })()
      .catch((error: unknown) => {
        this.#log(error, 'creating webhook deliveries failed');
        // Start again from the last position written, so no event is skipped.
        this.#queue = [];
        this.#subscription?.unsubscribe();
        this.#resubscribe = true;
      })
      .finally(async () => {
        this.#draining = undefined;
        if (this.#resubscribe && !this.#stopped) {
          this.#resubscribe = false;
          this.#subscribe(Number((await this.#store.state(CURSOR_KEY)) ?? this.#events.lastId));
        } else if (this.#queue.length > 0) this.#drain();
        else this.#subscription?.resume();
      });
  }

  /**
   * Starts attempts for the deliveries that are due, up to 20 at a time, each endpoint's oldest
   * first; each finished attempt looks again. A slow endpoint holds up only its own deliveries.
   */
  #wake(): void {
    // Without an active or paused endpoint there is nothing to attempt.
    if (this.#stopped || this.#subscription === undefined) return;
    if (this.#claiming) {
      this.#wakeAgain = true;
      return;
    }
    this.#claiming = true;
    void (async () => {
      while (this.#inFlight < MAX_IN_FLIGHT && !this.#stopped) {
        const now = Date.now();
        const lease = new Date(now + this.#options.timeoutMs + 5000).toISOString();
        const due = await this.#store.claimDue(new Date(now).toISOString(), lease, MAX_IN_FLIGHT - this.#inFlight);
        if (due.length === 0) break;
        for (const delivery of due) {
          this.#inFlight++;
          void this.#attempt(delivery)
            .catch((error: unknown) => this.#log(error, 'attempting a webhook delivery failed'))
            .finally(() => {
              this.#inFlight--;
              this.#wake();
            });
        }
      }
    })()
      .catch((error: unknown) => this.#log(error, 'claiming webhook deliveries failed'))
      .finally(() => {
        this.#claiming = false;
        if (this.#wakeAgain) {
          this.#wakeAgain = false;
          this.#wake();
        }
      });
  }

  async #attempt(delivery: DeliveryRecord): Promise<void> {
    const webhook = await this.#store.get(delivery.webhookId);
    if (webhook === undefined) return;
    const started = Date.now();
    const outcome = await this.#sender.send(webhook, delivery);
    const finished = Date.now();
    const attempt = {
      attemptedAt: new Date(started).toISOString(),
      durationMs: finished - started,
      responseStatus: outcome.status ?? null,
      error: outcome.error ?? null,
    };
    const ok = outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
    const attempts = delivery.attempts + 1;
    const schedule = this.#options.retryScheduleSeconds;
    let next: { status: 'pending' | 'succeeded' | 'failed'; nextAttemptAt: string };
    if (ok) next = { status: 'succeeded', nextAttemptAt: attempt.attemptedAt };
    else if (attempts > schedule.length) next = { status: 'failed', nextAttemptAt: attempt.attemptedAt };
    else {
      const jittered = (schedule[attempts - 1] ?? 0) * 1000 * (0.8 + Math.random() * 0.4);
      const delayMs = outcome.retryAfterMs ?? jittered;
      next = { status: 'pending', nextAttemptAt: new Date(finished + delayMs).toISOString() };
    }
    await this.#store.recordAttempt(delivery, attempt, next);
    if (ok) {
      if (webhook.failingSince !== null) await this.#store.update(webhook.id, { failingSince: null }, new Date().toISOString());
    } else if (webhook.failingSince === null) {
      await this.#store.update(webhook.id, { failingSince: attempt.attemptedAt }, new Date().toISOString());
    } else if (finished - Date.parse(webhook.failingSince) >= this.#options.disableAfterMs) {
      const reason = `Disabled at ${new Date(finished).toISOString()}: every delivery failed since ${webhook.failingSince} (last: ${outcome.error ?? `HTTP ${outcome.status ?? '?'}`}).`;
      await this.#store.update(webhook.id, { status: 'disabled', disabledReason: reason }, new Date().toISOString());
      this.#log(undefined, `webhook ${webhook.id} disabled: ${reason}`);
    }
  }
}

function view(record: WebhookRecord): WebhookView {
  return {
    id: record.id,
    url: record.url,
    events: record.events,
    description: record.description,
    status: record.status,
    disabledReason: record.disabledReason,
    failingSince: record.failingSince,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

function notFound(id: number): NotFoundError {
  return new NotFoundError(`There is no webhook with id ${id}.`);
}
