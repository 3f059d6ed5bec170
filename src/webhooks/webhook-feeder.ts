import type { EventDispatcher, Subscription } from '../core/event-dispatcher.js';
import { eventBytes } from '../core/recent-events.js';
import { ADMIN_SCOPE, type Principal } from '../core/principal.js';
import type { StoredEvent } from '../store/event-store.js';
import type { WebhookRecord, WebhookStore } from '../store/webhook-store.js';
import { RetryBackoff, type WorkerLog } from '../retry-backoff.js';

const WEBHOOK_PRINCIPAL: Principal = Object.freeze({ kind: 'admin-token', scopes: new Set([ADMIN_SCOPE]), credentialId: 'webhooks' });
const CURSOR_KEY = 'webhooks.cursor';
/** Whether the feeder was reading when the process stopped (then it goes on from its cursor). */
const FEEDING_KEY = 'webhooks.feeding';
/** Events turned into deliveries per transaction, and their size (by eventBytes): whichever comes first, at least one event. */
const BATCH = 200;
const BATCH_BYTES = 4 * 1024 * 1024; // 4 MiB
/** Events the feeder holds in memory before it asks the dispatcher to pause, and their size. */
const MAX_QUEUED = 1000;
const MAX_QUEUED_BYTES = 16 * 1024 * 1024; // 16 MiB
/** How long the list of endpoints is trusted (changes made through this process apply at once). */
const ENDPOINTS_TTL_MS = 1000;

/**
 * Turns events into webhook deliveries: one per event and subscribed endpoint, written in a
 * transaction with the position reached (so restarts and crashes lose none and duplicate none).
 *
 * Events that concern no endpoint cost no write: their position is kept in memory and saved with
 * the next deliveries, by `flush()` (every second, before an endpoint changes, and at shutdown).
 * After a crash they are read again, and again make no delivery.
 */
export class WebhookFeeder {
  readonly #store: WebhookStore;
  readonly #events: EventDispatcher;
  /** Writing deliveries failed (the database out of reach): the feeder starts again from its saved position, after a growing delay. */
  readonly #backoff: RetryBackoff;
  /** Called when new deliveries are due. */
  readonly #onDeliveries: () => void;
  #subscription: Subscription | undefined;
  #queue: StoredEvent[] = [];
  /** What the queued events take, by eventBytes. */
  #queuedBytes = 0;
  #draining: Promise<void> | undefined;
  #resubscribe = false;
  #resubscribeTimer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** Position reached but not saved yet (only events that made no delivery lie before it). */
  #unsaved: number | undefined;
  #endpoints: { list: WebhookRecord[]; at: number } | undefined;
  /** The sync running (or the last one): syncs run one at a time. */
  #syncing: Promise<void> = Promise.resolve();
  /** The sync waiting for the one running; the calls made meanwhile all wait for it. */
  #syncWaiting: Promise<void> | undefined;

  constructor(store: WebhookStore, events: EventDispatcher, log: WorkerLog, onDeliveries: () => void) {
    this.#store = store;
    this.#events = events;
    this.#backoff = new RetryBackoff('creating webhook deliveries', log);
    this.#onDeliveries = onDeliveries;
  }

  /** Whether events are being read (some endpoint is active or paused). */
  get running(): boolean {
    return this.#subscription !== undefined;
  }

  /**
   * Reads events only while some endpoint takes deliveries (active or paused): then from the
   * persisted position; when it starts anew, from now (a new endpoint gets the events from its
   * registration on). Writes pay nothing for webhooks when there are none. Call after endpoints
   * change; resolves once a sync that began after the call has read the endpoints.
   *
   * Syncs run one at a time (two at once could both start reading, or both stop). The calls made
   * while one runs share the next, which reads the endpoints as they are after every one of them.
   */
  sync(): Promise<void> {
    this.#endpoints = undefined;
    if (this.#syncWaiting === undefined) {
      this.#syncWaiting = this.#syncAfter(this.#syncing);
      this.#syncing = this.#syncWaiting;
    }
    return this.#syncWaiting;
  }

  async #syncAfter(previous: Promise<void>): Promise<void> {
    // A failure of the previous sync is for its own callers to hear of.
    await previous.catch(() => undefined);
    this.#syncWaiting = undefined;
    if (this.#stopped) return;
    const wanted = (await this.#store.list()).some((w) => w.status !== 'disabled');
    if (wanted && this.#subscription === undefined) {
      const saved = await this.#store.state(CURSOR_KEY);
      const running = saved !== undefined && (await this.#store.state(FEEDING_KEY)) === 'yes';
      const cursor = running ? Number(saved) : this.#events.lastId;
      await this.#store.db.transaction(async (tx) => {
        await this.#store.advancePosition(tx, CURSOR_KEY, cursor);
        await this.#store.setState(tx, FEEDING_KEY, 'yes');
      });
      this.#subscribe(cursor);
    } else if (!wanted && this.#subscription !== undefined) {
      await this.flush();
      this.#unsubscribe();
      await this.#store.db.transaction((tx) => this.#store.setState(tx, FEEDING_KEY, 'no'));
    }
  }

  /** Saves the position reached, when it has moved on without deliveries. */
  async flush(): Promise<void> {
    const position = this.#unsaved;
    if (position === undefined) return;
    this.#unsaved = undefined;
    try {
      await this.#store.db.transaction((tx) => this.#store.advancePosition(tx, CURSOR_KEY, position));
    } catch (error) {
      // Kept for the next flush (the position only ever advances).
      this.#unsaved ??= position;
      throw error;
    }
  }

  /** Stops reading; saves the position reached. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe();
    await this.#draining;
    await this.flush();
  }

  /** Stops reading events (also when stop() has already). */
  #unsubscribe(): void {
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
    clearTimeout(this.#resubscribeTimer);
    this.#resubscribeTimer = undefined;
  }

  /** Reads the events after `afterId`, unless stopped (meanwhile: a sync or resubscription awaits before it subscribes). */
  #subscribe(afterId: number): void {
    if (this.#stopped) return;
    this.#subscription = this.#events.subscribe(
      {
        principal: WEBHOOK_PRINCIPAL,
        deliver: (event) => {
          this.#queue.push(event);
          this.#queuedBytes += eventBytes(event);
          this.#drain();
          // Paused beyond this; resumed once the queue is written (the dispatcher keeps the place).
          return this.#queue.length < MAX_QUEUED && this.#queuedBytes < MAX_QUEUED_BYTES;
        },
        close: (reason) => {
          // Too far behind: start again from the persisted position once the queue is written.
          if (reason !== 'slow-consumer') return;
          this.#resubscribe = true;
          if (this.#draining === undefined) this.#afterDrain();
        },
      },
      afterId,
    );
  }

  async #activeEndpoints(): Promise<WebhookRecord[]> {
    const now = Date.now();
    if (this.#endpoints === undefined || now - this.#endpoints.at > ENDPOINTS_TTL_MS) {
      this.#endpoints = { list: (await this.#store.list()).filter((w) => w.status !== 'disabled'), at: now };
    }
    return this.#endpoints.list;
  }

  /** Writes queued events as deliveries, in batches, each with the position it reached. */
  #drain(): void {
    if (this.#draining !== undefined) return;
    this.#draining = this.#writeQueued();
  }

  /** Never rejects: when writing fails, the feeder starts again from the position last written, after a delay. */
  async #writeQueued(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#nextBatch();
        const last = batch.at(-1);
        if (last === undefined) break;
        const endpoints = await this.#activeEndpoints();
        const now = new Date().toISOString();
        const deliveries = batch.flatMap((event) =>
          endpoints
            // An endpoint gets the events from its registration on, also those still queued here
            // when it was registered (occurredAt and createdAt: ISO 8601 UTC, comparable as text).
            .filter((w) => (w.events.includes('*') || w.events.includes(event.type)) && event.occurredAt >= w.createdAt)
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
        if (deliveries.length === 0) {
          this.#unsaved = last.id;
          continue;
        }
        this.#unsaved = undefined;
        await this.#store.db.transaction(async (tx) => {
          await this.#store.addDeliveries(tx, deliveries);
          await this.#store.advancePosition(tx, CURSOR_KEY, last.id);
        });
        this.#backoff.succeeded();
        this.#onDeliveries();
      }
    } catch (error) {
      // Start again from the last position written, so no event is skipped.
      this.#queue = [];
      this.#queuedBytes = 0;
      this.#unsaved = undefined;
      this.#subscription?.unsubscribe();
      this.#resubscribe = true;
      this.#backoff.failed(error);
    } finally {
      this.#draining = undefined;
    }
    this.#afterDrain();
  }

  /** The next events to write, at most BATCH of them and BATCH_BYTES (large events make smaller batches: each event's payload is copied per endpoint). */
  #nextBatch(): StoredEvent[] {
    let count = 0;
    let bytes = 0;
    for (const event of this.#queue) {
      if (count === BATCH || (count > 0 && bytes >= BATCH_BYTES)) break;
      bytes += eventBytes(event);
      count++;
    }
    this.#queuedBytes -= bytes;
    return this.#queue.splice(0, count);
  }

  /** Once the queue is written: resubscribes when asked to, drains what came meanwhile, or lets the dispatcher go on. */
  #afterDrain(): void {
    if (this.#resubscribe && !this.#stopped) {
      this.#resubscribe = false;
      this.#resubscribeLater();
    } else if (this.#queue.length > 0) this.#drain();
    else this.#subscription?.resume();
  }

  /** Whether the feeder should be reading events. */
  #feeding(): boolean {
    return !this.#stopped && this.#subscription !== undefined;
  }

  /** Subscribes again from the position last written, once the backoff allows; retried until the position can be read. */
  #resubscribeLater(): void {
    if (this.#stopped || this.#resubscribeTimer !== undefined) return;
    this.#resubscribeTimer = setTimeout(() => {
      this.#resubscribeTimer = undefined;
      void this.#resubscribeNow();
    }, this.#backoff.remainingMs());
    this.#resubscribeTimer.unref();
  }

  async #resubscribeNow(): Promise<void> {
    if (!this.#feeding()) return;
    try {
      const saved = await this.#store.state(CURSOR_KEY);
      // Stopped, or no endpoint left, meanwhile.
      if (!this.#feeding()) return;
      this.#subscription?.unsubscribe();
      this.#subscribe(Number(saved ?? this.#events.lastId));
      this.#backoff.succeeded();
    } catch (error) {
      this.#backoff.failed(error);
      this.#resubscribeLater();
    }
  }
}
