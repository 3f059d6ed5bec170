import type { SchemaModel } from '../schema/schema-model.js';
import type { EventStore, StoredEvent } from '../store/event-store.js';
import { canRead, ownerReadFilter, rowPasses } from './access-policy.js';
import type { Principal } from './principal.js';

/** One consumer of the event stream: an SSE response, a GraphQL subscription, a webhook feeder. */
export interface EventSubscriber {
  /** Whose access rules filter the events (resource read rule and owner rule). */
  principal: Principal;
  /** Only these event types (`user.created`); all when absent. */
  types?: ReadonlySet<string>;
  /**
   * Takes one event. Returns false when the consumer wants no more for now (its buffer is full):
   * delivery pauses until it calls `resume()` on its subscription, and continues from where it
   * stopped (from memory or the outbox). A consumer paused while more than `maxLag` events pile
   * up behind it is closed with reason 'slow-consumer'.
   */
  deliver(event: StoredEvent): boolean;
  /** The stream ends: the dispatcher stops, or the consumer fell too far behind. */
  close(reason: 'shutdown' | 'slow-consumer'): void;
}

export interface Subscription {
  /** Stops delivering to this subscriber (idempotent). */
  unsubscribe(): void;
  /** Delivery may go on after deliver() returned false. */
  resume(): void;
}

export interface EventDispatcherOptions {
  /** How often the outbox is read without a wake-up (writes by other processes). @default 1000 */
  pollIntervalMs?: number;
  /** Recent events kept in memory, so subscribers catch up without a query. @default 10000 */
  recentEvents?: number;
  /** Events a paused subscriber may fall behind before it is closed as too slow. @default 10000 */
  maxLag?: number;
}

interface Entry {
  subscriber: EventSubscriber;
  /** Id of the last event this subscriber has been given (or skipped). */
  cursor: number;
  busy: boolean;
  again: boolean;
  closed: boolean;
  /** Its last deliver() returned false, and it has not resumed yet. */
  paused: boolean;
}

const PAGE = 500;

/**
 * The one event path: reads the outbox (woken after each commit that wrote events, and on a
 * timer) and feeds every subscriber in event-id order, each from its own position: a new
 * subscriber may start from any past id (SSE `Last-Event-ID`) and is caught up from memory or the
 * outbox, then continues live. Each subscriber sees only the events its principal may read.
 * A subscriber that cannot take more is closed; it never holds up writes or other subscribers.
 */
export class EventDispatcher {
  readonly #store: EventStore;
  readonly #schema: SchemaModel;
  readonly #pollIntervalMs: number;
  readonly #capacity: number;
  readonly #maxLag: number;
  readonly #entries = new Set<Entry>();
  /** Recent events, oldest first, contiguous with the outbox up to #lastId. */
  #recent: StoredEvent[] = [];
  #lastId = 0;
  #timer: NodeJS.Timeout | undefined;
  #pumping: Promise<void> | undefined;
  #pumpAgain = false;
  #stopped = false;
  #onError: (error: unknown) => void = () => undefined;

  constructor(store: EventStore, schema: SchemaModel, options: EventDispatcherOptions = {}) {
    this.#store = store;
    this.#schema = schema;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.#capacity = options.recentEvents ?? 10_000;
    this.#maxLag = options.maxLag ?? 10_000;
  }

  /** Starts from the newest event already stored; `onError` hears of failed reads. */
  async start(onError: (error: unknown) => void): Promise<void> {
    this.#onError = onError;
    this.#lastId = await this.#store.lastId();
    this.#timer = setInterval(() => this.notify(), this.#pollIntervalMs);
    this.#timer.unref();
  }

  /** The id of the newest event read so far. */
  get lastId(): number {
    return this.#lastId;
  }

  /**
   * Events up to `committedId` have been committed by this process. With no subscriber there is
   * nothing to read them for: only the position moves on (and the in-memory window, no longer
   * contiguous, is dropped; late subscribers starting from older ids read the outbox).
   */
  committed(committedId: number): void {
    if (this.#entries.size === 0 && this.#pumping === undefined) {
      if (committedId > this.#lastId) {
        this.#lastId = committedId;
        this.#recent = [];
      }
      return;
    }
    this.notify();
  }

  /** New events may have been committed: read them and feed the subscribers (coalesced). */
  notify(): void {
    if (this.#stopped) return;
    if (this.#pumping !== undefined) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = this.#pump()
      .catch((error: unknown) => this.#onError(error))
      .finally(() => {
        this.#pumping = undefined;
        if (this.#pumpAgain) {
          this.#pumpAgain = false;
          this.notify();
        }
      });
  }

  /**
   * Adds a subscriber that gets the events after `afterId` (default: from now on), first those
   * already stored, then live.
   */
  subscribe(subscriber: EventSubscriber, afterId?: number): Subscription {
    const entry: Entry = { subscriber, cursor: afterId ?? this.#lastId, busy: false, again: false, closed: false, paused: false };
    if (this.#stopped) {
      subscriber.close('shutdown');
      return { unsubscribe: () => undefined, resume: () => undefined };
    }
    this.#entries.add(entry);
    if (entry.cursor < this.#lastId) this.#feed(entry);
    return {
      unsubscribe: () => {
        entry.closed = true;
        this.#entries.delete(entry);
      },
      resume: () => {
        if (!entry.paused || entry.closed) return;
        entry.paused = false;
        this.#feed(entry);
      },
    };
  }

  /** Whether `principal` may see `event` (read rule of its resource, and the owner rule). */
  visibleTo(principal: Principal, event: StoredEvent): boolean {
    const resource = this.#schema.resources.get(event.resource);
    if (resource === undefined || !canRead(principal, resource)) return false;
    return rowPasses(event.data.object, ownerReadFilter(principal, resource));
  }

  /** Ends every subscription (with reason 'shutdown') and stops reading. */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    for (const entry of this.#entries) this.#close(entry, 'shutdown');
  }

  get subscriberCount(): number {
    return this.#entries.size;
  }

  async #pump(): Promise<void> {
    for (;;) {
      const events = await this.#store.after(this.#lastId, PAGE);
      if (events.length === 0) break;
      this.#recent.push(...events);
      if (this.#recent.length > this.#capacity) this.#recent = this.#recent.slice(this.#recent.length - this.#capacity);
      this.#lastId = events[events.length - 1]?.id ?? this.#lastId;
      for (const entry of this.#entries) this.#feed(entry);
      if (events.length < PAGE) break;
    }
  }

  /** Brings one subscriber up to #lastId, from memory when it can, else from the outbox. */
  #feed(entry: Entry): void {
    if (entry.paused) {
      if (this.#lastId - entry.cursor > this.#maxLag) this.#close(entry, 'slow-consumer');
      return;
    }
    if (entry.busy) {
      entry.again = true;
      return;
    }
    entry.busy = true;
    void this.#catchUp(entry)
      .catch((error: unknown) => this.#onError(error))
      .finally(() => {
        entry.busy = false;
        if (entry.again && !entry.closed) {
          entry.again = false;
          this.#feed(entry);
        }
      });
  }

  async #catchUp(entry: Entry): Promise<void> {
    while (!entry.closed && !entry.paused && entry.cursor < this.#lastId) {
      const first = this.#recent[0];
      let batch: StoredEvent[];
      if (first !== undefined && entry.cursor >= first.id - 1) {
        const start = lowerBound(this.#recent, entry.cursor + 1);
        batch = this.#recent.slice(start, start + PAGE);
      } else {
        batch = await this.#store.after(entry.cursor, PAGE);
      }
      if (batch.length === 0) break;
      for (const event of batch) {
        // deliver() may have unsubscribed it (the consumer went away).
        if (!this.#entries.has(entry)) return;
        entry.cursor = event.id;
        const { subscriber } = entry;
        if (subscriber.types !== undefined && !subscriber.types.has(event.type)) continue;
        if (!this.visibleTo(subscriber.principal, event)) continue;
        if (!subscriber.deliver(event)) {
          entry.paused = true;
          return;
        }
      }
    }
  }

  #close(entry: Entry, reason: 'shutdown' | 'slow-consumer'): void {
    if (entry.closed) return;
    entry.closed = true;
    this.#entries.delete(entry);
    entry.subscriber.close(reason);
  }
}

/** Index of the first event with id >= `id` in an id-sorted array. */
function lowerBound(events: readonly StoredEvent[], id: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((events[mid]?.id ?? Infinity) < id) low = mid + 1;
    else high = mid;
  }
  return low;
}
