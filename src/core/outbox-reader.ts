import type { EventStore, StoredEvent } from '../store/event-store.js';
import { RetryBackoff, type WorkerLog } from '../retry-backoff.js';
import type { EventDispatcherOptions } from './event-subscriber.js';

/** Most events one read of the outbox takes. */
export const OUTBOX_PAGE = 500;

/** What an {@link OutboxReader} hands the events to, and tells of its timers: the event dispatcher. */
export interface OutboxReaderTarget {
  /** The next events, in id order, following those handed over before. */
  take(events: readonly StoredEvent[]): void;
  /** The events up to `id` are not handed over (those stored at start, or skipped with nobody to feed): the next follow it. */
  restartAfter(id: number): void;
  /** The poll timer fired. */
  polled(): void;
  /** The delay after a failure ran out: what failed may try again (the outbox is read again too). */
  retrying(): void;
}

/**
 * The event dispatcher's reading of the outbox: takes the committed events in id order and hands
 * them over. Events committed here are handed over directly; the outbox is read after a gap, when
 * another process signals, and on a timer (a signal may be lost, and some databases have none).
 * Never skips an event: {@link EventStore.after} holds the reader at an id that may still appear,
 * where the database's commits can come out of order (its commit order guard). A read that fails
 * (the database out of reach) is retried with backoff.
 */
export class OutboxReader {
  readonly #store: EventStore;
  readonly #target: OutboxReaderTarget;
  readonly #pollIntervalMs: number;
  readonly #readSpacingMs: number;
  #lastId = 0;
  #timer: NodeJS.Timeout | undefined;
  #pumping: Promise<void> | undefined;
  #pumpAgain = false;
  /** When the last read of the outbox began (performance.now()). */
  #lastReadAt = -Infinity;
  /** The next read, waiting out {@link EventDispatcherOptions.readSpacingMs}. */
  #readTimer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** Reads of the outbox that failed (the database out of reach) are retried after a growing delay. */
  #backoff: RetryBackoff = new RetryBackoff('reading the event outbox', { failing: () => undefined, recovered: () => undefined });
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(store: EventStore, target: OutboxReaderTarget, options: EventDispatcherOptions = {}) {
    this.#store = store;
    this.#target = target;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.#readSpacingMs = options.readSpacingMs ?? 10;
  }

  /**
   * Starts from the newest event already stored; `log` hears of reads of the outbox that fail
   * (they are retried with backoff until they work again) and of their recovery.
   */
  async start(log: WorkerLog): Promise<void> {
    this.#backoff = new RetryBackoff('reading the event outbox', log);
    this.#lastId = await this.#store.lastId();
    this.#target.restartAfter(this.#lastId);
    // Other processes' events: read when they say so, and by polling (a signal may be lost, and
    // some databases have none: then polling alone finds them).
    await this.#store.watch(() => this.notify()).catch((error: unknown) => log.failing(error, 'listening for the events of other processes failed; polling only'));
    this.#timer = setInterval(() => {
      this.notify();
      this.#target.polled();
    }, this.#pollIntervalMs);
    this.#timer.unref();
  }

  /** The id of the newest event read so far. */
  get lastId(): number {
    return this.#lastId;
  }

  /**
   * Events this process has just committed, as stored. When they follow the last event read, they
   * are handed over at once, with no read of the outbox; otherwise (events of another process in
   * between, a read under way) the outbox is read. With nobody `listening` only the position moves on.
   */
  committed(events: readonly StoredEvent[], listening: boolean): void {
    const first = events[0];
    const last = events.at(-1);
    if (first === undefined || last === undefined || this.#stopped) return;
    if (this.#pumping === undefined && first.id === this.#lastId + 1 && isContiguous(events)) {
      this.#handOver(events);
      return;
    }
    if (!listening) {
      // Nobody to feed. A read under way finishes by itself: were each commit to ask for another,
      // reads would follow each other without end under a steady load of writes.
      if (this.#pumping === undefined && last.id > this.#lastId) {
        // The in-memory window would no longer be contiguous: late subscribers read the outbox.
        this.#lastId = last.id;
        this.#target.restartAfter(last.id);
      }
      return;
    }
    this.notify();
  }

  /** New events may have been committed: read them and hand them over (coalesced). */
  notify(): void {
    if (this.#stopped) return;
    if (this.#pumping !== undefined) {
      this.#pumpAgain = true;
      return;
    }
    // After a failed read, the retry timer reads again (a wake-up meanwhile changes nothing).
    if (this.#readTimer !== undefined || this.#backoff.waiting()) return;
    const wait = this.#lastReadAt + this.#readSpacingMs - performance.now();
    if (wait > 0) {
      this.#readTimer = setTimeout(() => {
        this.#readTimer = undefined;
        this.notify();
      }, wait).unref();
      return;
    }
    this.#lastReadAt = performance.now();
    this.#pumping = this.#pumpOrRetry();
  }

  /**
   * Another read of the outbox failed (a subscriber catching up): the backoff counts it, and
   * {@link OutboxReaderTarget.retrying} is called once its delay has run.
   */
  failed(error: unknown): void {
    this.#retryAfter(this.#backoff.failed(error));
  }

  /** Stops reading. */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#readTimer);
  }

  /** Reads and hands over the new events; never rejects: a failure schedules a retry. */
  async #pumpOrRetry(): Promise<void> {
    try {
      await this.#pump();
      this.#backoff.succeeded();
    } catch (error) {
      this.#retryAfter(this.#backoff.failed(error));
    } finally {
      this.#pumping = undefined;
      if (this.#pumpAgain) {
        this.#pumpAgain = false;
        this.notify();
      }
    }
  }

  /** Reads the outbox again, and tells the target to retry what failed, after `delayMs`. */
  #retryAfter(delayMs: number): void {
    if (this.#stopped || this.#retryTimer !== undefined) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.notify();
      this.#target.retrying();
    }, delayMs);
    this.#retryTimer.unref();
  }

  async #pump(): Promise<void> {
    for (;;) {
      const events = await this.#store.after(this.#lastId, OUTBOX_PAGE);
      if (events.length === 0) break;
      this.#handOver(events);
      if (events.length < OUTBOX_PAGE) break;
    }
  }

  #handOver(events: readonly StoredEvent[]): void {
    this.#lastId = (events.at(-1) as StoredEvent).id;
    this.#target.take(events);
  }
}

function isContiguous(events: readonly StoredEvent[]): boolean {
  for (let i = 1; i < events.length; i++) if (events[i]?.id !== (events[i - 1]?.id ?? 0) + 1) return false;
  return true;
}
