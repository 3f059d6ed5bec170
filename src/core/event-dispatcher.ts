import { LRUCache } from 'lru-cache';
import type { SchemaModel } from '../schema/schema-model.js';
import type { EventStore, StoredEvent } from '../store/event-store.js';
import { visibilityKey } from './access-policy.js';
import { eventSeenBy } from './access-rules/event-access.js';
import type { Principal } from './principal.js';
import type { WorkerLog } from '../retry-backoff.js';
import { DeliveryQueue } from './delivery-queue.js';
import { LiveSubscribers } from './live-subscribers.js';
import { OUTBOX_PAGE, OutboxReader } from './outbox-reader.js';
import { RecentEvents } from './recent-events.js';
import type { EventDispatcherOptions, EventSubscriber, Subscription } from './event-subscriber.js';

export type { EventDispatcherOptions, EventSubscriber, Subscription } from './event-subscriber.js';

interface Entry {
  subscriber: EventSubscriber;
  /**
   * Live: caught up, and given each new event as the dispatcher reads it (through the type index,
   * so events of other types cost it nothing). Otherwise it catches up from `cursor` on its own.
   */
  live: boolean;
  /** Id of the last event this subscriber has been given (or skipped), when not live. */
  cursor: number;
  busy: boolean;
  again: boolean;
  closed: boolean;
  /** Its last deliver() returned false, and it has not resumed yet. */
  paused: boolean;
  /** When it was paused last (performance.now()). */
  pausedAt: number;
}

/**
 * The one event path: takes the committed events in id order from its {@link OutboxReader} and
 * feeds every subscriber in event-id order, each from its own position: a new subscriber may start
 * from any past id (SSE `Last-Event-ID`) and is caught up from memory or the outbox, then continues live.
 * Live subscribers are indexed by event type, so an event costs only the subscribers that want
 * it. Each subscriber sees only the events its principal may read, as it may read them (see
 * seenBy). A subscriber that cannot take more is paused, and closed once too far behind; it never
 * holds up writes or other subscribers.
 */
export class EventDispatcher {
  readonly #store: EventStore;
  readonly #schema: SchemaModel;
  readonly #reader: OutboxReader;
  readonly #maxLag: number;
  readonly #maxPausedMs: number;
  readonly #maxLagReading: number;
  readonly #entries = new Set<Entry>();
  readonly #live = new LiveSubscribers<Entry>();
  readonly #deliveries: DeliveryQueue;
  readonly #paused = new Set<Entry>();
  /** Recent events, oldest first, contiguous with the outbox up to the reader's lastId. */
  readonly #recent: RecentEvents;
  /** Id of the last event handed to every live subscriber: where the live walk is. */
  #delivered = 0;
  /** The live walk is queued or under way. */
  #walking = false;
  #stopped = false;
  /** Subscribers whose catching up failed: fed again at the next retry. */
  readonly #stalled = new Set<Entry>();
  /**
   * The views of the event handed out last that hide something, by visibility key (see seenBy): the
   * ones used last (per-subject views, one per subscriber, share nothing).
   */
  readonly #views = new LRUCache<string, StoredEvent>({ max: 64 });
  /** The id of the event #views are of. */
  #viewsOf = 0;

  constructor(store: EventStore, schema: SchemaModel, options: EventDispatcherOptions = {}) {
    this.#store = store;
    this.#schema = schema;
    const target = {
      take: (events: readonly StoredEvent[]) => this.#dispatch(events),
      restartAfter: (id: number) => {
        this.#delivered = id;
        this.#recent.restartAfter(id);
      },
      polled: () => this.#closeStalled(),
      retrying: () => this.#feedStalled(),
    };
    this.#reader = new OutboxReader(store, target, options);
    this.#recent = new RecentEvents(options.recentEvents ?? 10_000, options.recentBytes ?? 32 * 1024 * 1024);
    this.#maxLag = options.maxLag ?? 10_000;
    this.#maxPausedMs = options.maxPausedMs ?? 10_000;
    this.#maxLagReading = options.maxLagReading ?? 4 * this.#maxLag;
    this.#deliveries = new DeliveryQueue(options.deliveriesPerTurn ?? 1000);
  }

  /** How many events a paused subscriber may fall behind before it is closed as too slow. */
  get maxLag(): number {
    return this.#maxLag;
  }

  /** How long such a subscriber may take nothing before it is closed (see EventDispatcherOptions.maxPausedMs). */
  get maxPausedMs(): number {
    return this.#maxPausedMs;
  }

  /** How far behind a subscriber that reads, but too slowly, may fall before it is closed (see EventDispatcherOptions.maxLagReading). */
  get maxLagReading(): number {
    return this.#maxLagReading;
  }

  /**
   * Where fan-out work is queued, a bounded number of steps per event-loop turn: live deliveries,
   * and what subscribers do for their own listeners (GraphQL subscriptions sharing one execution).
   */
  get deliveries(): DeliveryQueue {
    return this.#deliveries;
  }

  /**
   * Starts from the newest event already stored; `log` hears of reads of the outbox that fail
   * (they are retried with backoff until they work again) and of their recovery.
   */
  async start(log: WorkerLog): Promise<void> {
    await this.#reader.start(log);
  }

  /** The id of the newest event read so far. */
  get lastId(): number {
    return this.#reader.lastId;
  }

  /**
   * Events this process has just committed, as stored. When they follow the last event read, they
   * are dispatched at once, with no read of the outbox; otherwise (events of another process in
   * between, a read under way) the outbox is read. With no subscriber only the position moves on.
   */
  committed(events: readonly StoredEvent[]): void {
    this.#reader.committed(events, this.#entries.size > 0);
  }

  /** New events may have been committed: read them and feed the subscribers (coalesced). */
  notify(): void {
    this.#reader.notify();
  }

  /**
   * Adds a subscriber that gets the events after `afterId` (default: from now on), first those
   * already stored, then live.
   */
  subscribe(subscriber: EventSubscriber, afterId?: number): Subscription {
    const entry: Entry = { subscriber, live: false, cursor: afterId ?? this.#reader.lastId, busy: false, again: false, closed: false, paused: false, pausedAt: 0 };
    if (this.#stopped) {
      subscriber.close('shutdown');
      return { unsubscribe: () => undefined, resume: () => undefined };
    }
    this.#entries.add(entry);
    if (entry.cursor < this.#reader.lastId) this.#feed(entry);
    else this.#goLive(entry);
    return {
      unsubscribe: () => {
        entry.closed = true;
        this.#remove(entry);
      },
      resume: () => {
        if (!entry.paused || entry.closed) return;
        entry.paused = false;
        this.#paused.delete(entry);
        this.#feed(entry);
      },
    };
  }

  /**
   * `event` as `principal` may see it (read access to its resource, the owner and read rules on its
   * row, field access; see eventSeenBy), or undefined when it may not see it.
   */
  seenBy(principal: Principal, event: StoredEvent): StoredEvent | undefined {
    const resource = this.#schema.resources.get(event.resource);
    const seen = resource === undefined ? undefined : eventSeenBy(principal, resource, event);
    if (seen === undefined || seen === event) return seen;
    // Principals with the same visibility key see the same view: the one object for all of them,
    // so a transport encodes it once (an event stream's frame), not once per subscriber.
    if (this.#viewsOf !== event.id) {
      this.#viewsOf = event.id;
      this.#views.clear();
    }
    const key = visibilityKey(principal, this.#schema);
    const known = this.#views.get(key);
    if (known !== undefined) return known;
    this.#views.set(key, seen);
    return seen;
  }

  /** Ends every subscription (with reason 'shutdown') and stops reading. */
  stop(): void {
    this.#stopped = true;
    this.#reader.stop();
    this.#deliveries.clear();
    this.#stalled.clear();
    for (const entry of this.#entries) this.#close(entry, 'shutdown');
  }

  /** The clients the events go to: each subscriber counts its listeners (one, or a group's members). */
  get subscriberCount(): number {
    let count = 0;
    for (const entry of this.#entries) count += entry.subscriber.listeners?.() ?? 1;
    return count;
  }

  /**
   * Takes the next events in id order: remembers them, has the live walk hand them to the live
   * subscribers (off the write path, see {@link DeliveryQueue}), checks the paused ones.
   */
  #dispatch(events: readonly StoredEvent[]): void {
    this.#recent.push(events);
    if (!this.#walking) {
      if (this.#live.empty) this.#delivered = this.#reader.lastId;
      else {
        this.#walking = true;
        this.#deliveries.add(this.#walkLive());
      }
    }
    this.#closeStalled();
  }

  /**
   * The live walk: gives each event from #delivered on to the live subscribers that want it, one
   * step per subscriber (those of its type and those of every type, each of every record or of
   * its record), until it reaches the newest. It reads the events from memory, so what waits for
   * delivery is bounded as the recent events are; should it fall behind them (deliveries slower
   * than writes for long), the live subscribers catch up from the outbox on their own instead. A
   * subscriber that went live meanwhile has these events already (its cursor says so).
   */
  *#walkLive(): Generator<void> {
    try {
      while (!this.#stopped && this.#delivered < this.#reader.lastId) {
        if (this.#delivered < this.#recent.trimmedUpTo) {
          this.#fallBehind();
          return;
        }
        const event = this.#recent.atOrAfter(this.#delivered + 1);
        if (event === undefined) return;
        for (const entry of this.#live.of(event.type, event.recordId)) {
          this.#deliverLive(entry, event);
          yield;
        }
        this.#delivered = event.id;
      }
    } finally {
      this.#walking = false;
    }
  }

  /** The live walk fell behind the events kept in memory: every live subscriber catches up on its own. */
  #fallBehind(): void {
    for (const entry of this.#live.all()) {
      this.#leaveLive(entry, Math.max(entry.cursor, this.#delivered));
      this.#feed(entry);
    }
    this.#delivered = this.#reader.lastId;
  }

  #deliverLive(entry: Entry, event: StoredEvent): void {
    // A subscriber may start ahead of this process (a Last-Event-ID seen through another instance
    // sharing the database): it already has the events up to its cursor.
    if (entry.closed || event.id <= entry.cursor) return;
    const seen = this.seenBy(entry.subscriber.principal, event);
    if (seen === undefined) return;
    if (!entry.subscriber.deliver(seen)) {
      // deliver() may have unsubscribed it (the consumer went away).
      if (!this.#entries.has(entry)) return;
      this.#leaveLive(entry, event.id);
      this.#pause(entry);
    }
  }

  #goLive(entry: Entry): void {
    entry.live = true;
    this.#live.add(entry);
  }

  /** A live subscriber leaves the index: it has been given every event up to `cursor`. */
  #leaveLive(entry: Entry, cursor: number): void {
    if (!entry.live) return;
    entry.live = false;
    entry.cursor = cursor;
    this.#live.delete(entry);
  }

  /** Brings one subscriber that is not live up to the reader's lastId, from memory when it can, else from the outbox; then it goes live. */
  #feed(entry: Entry): void {
    if (entry.busy) {
      entry.again = true;
      return;
    }
    entry.busy = true;
    void this.#catchUpOrRetry(entry);
  }

  /** Catches a subscriber up; never rejects: a failure feeds it again at the next retry. */
  async #catchUpOrRetry(entry: Entry): Promise<void> {
    try {
      await this.#catchUp(entry);
    } catch (error) {
      if (!entry.closed) this.#stalled.add(entry);
      this.#reader.failed(error);
    } finally {
      entry.busy = false;
      if (entry.again && !entry.closed && !entry.paused && !entry.live) {
        entry.again = false;
        this.#feed(entry);
      }
    }
  }

  /** The subscribers whose catching up failed are fed again (the reader's retry is due). */
  #feedStalled(): void {
    const stalled = [...this.#stalled];
    this.#stalled.clear();
    for (const entry of stalled) if (!entry.closed && !entry.paused && !entry.live) this.#feed(entry);
  }

  async #catchUp(entry: Entry): Promise<void> {
    while (!entry.closed && !entry.paused) {
      if (entry.cursor >= this.#reader.lastId) {
        // Caught up: from now on the dispatcher hands it each event as it comes.
        this.#goLive(entry);
        return;
      }
      const batch = this.#recent.after(entry.cursor, OUTBOX_PAGE) ?? (await this.#store.after(entry.cursor, OUTBOX_PAGE));
      if (batch.length === 0) {
        // Nothing stored after its position (pruned meanwhile): it is caught up.
        entry.cursor = Math.max(entry.cursor, this.#reader.lastId);
        continue;
      }
      for (const event of batch) {
        // deliver() may have unsubscribed it (the consumer went away).
        if (!this.#entries.has(entry)) return;
        entry.cursor = event.id;
        const { subscriber } = entry;
        if (subscriber.types !== undefined && !subscriber.types.has(event.type)) continue;
        if (subscriber.recordId !== undefined && subscriber.recordId !== event.recordId) continue;
        const seen = this.seenBy(subscriber.principal, event);
        if (seen === undefined) continue;
        if (!subscriber.deliver(seen)) {
          if (!this.#entries.has(entry)) return;
          this.#pause(entry);
          return;
        }
      }
    }
  }

  #pause(entry: Entry): void {
    entry.paused = true;
    entry.pausedAt = performance.now();
    this.#paused.add(entry);
  }

  /**
   * Closes the paused subscribers that are more than maxLag events behind and have taken nothing
   * for maxPausedMs: those are not reading. (Readers are paused too, for moments, while a burst
   * fills their buffers: being far behind alone says little.) And those more than maxLagReading
   * behind, reading or not: they will not catch up. On new events, and on the poll timer.
   */
  #closeStalled(): void {
    if (this.#paused.size === 0) return;
    const now = performance.now();
    for (const entry of this.#paused) {
      const lag = this.#reader.lastId - entry.cursor;
      if ((lag > this.#maxLag && now - entry.pausedAt >= this.#maxPausedMs) || lag > this.#maxLagReading) this.#close(entry, 'slow-consumer');
    }
  }

  #remove(entry: Entry): void {
    this.#stalled.delete(entry);
    this.#leaveLive(entry, entry.cursor);
    this.#paused.delete(entry);
    this.#entries.delete(entry);
  }

  #close(entry: Entry, reason: 'shutdown' | 'slow-consumer'): void {
    if (entry.closed) return;
    entry.closed = true;
    this.#remove(entry);
    entry.subscriber.close(reason);
  }
}
