import type { StoredEvent } from '../store/event-store.js';

/**
 * The most recent events, oldest first and contiguous up to the newest, so subscribers catch up
 * from memory instead of the outbox. Bounded in count and in bytes (estimated by
 * {@link eventBytes}): records of up to a megabyte each would otherwise keep gigabytes here.
 * Trimmed a quarter at a time, not on every event; what was dropped is read from the outbox.
 */
export class RecentEvents {
  #events: StoredEvent[] = [];
  /** What #events take, by {@link eventBytes}. */
  #bytes = 0;
  readonly #capacity: number;
  readonly #maxBytes: number;
  /** Id of the newest event dropped (the window holds none at or below it). */
  #trimmedUpTo = 0;

  constructor(capacity: number, maxBytes: number) {
    this.#capacity = capacity;
    this.#maxBytes = maxBytes;
  }

  /** Id of the newest event dropped from the window: readers behind it read the outbox. */
  get trimmedUpTo(): number {
    return this.#trimmedUpTo;
  }

  /** Empties the window; it goes on after `id` (events up to it are the outbox's). */
  restartAfter(id: number): void {
    this.#events = [];
    this.#bytes = 0;
    this.#trimmedUpTo = id;
  }

  /** Appends the next events (in id order, following the newest held). */
  push(events: readonly StoredEvent[]): void {
    this.#events.push(...events);
    for (const event of events) this.#bytes += eventBytes(event);
    if (this.#events.length > this.#capacity * 1.25 || this.#bytes > this.#maxBytes) this.#trim();
  }

  /** The event with id `id`, or the first after it; undefined when none is held. */
  atOrAfter(id: number): StoredEvent | undefined {
    return this.#events[lowerBound(this.#events, id)];
  }

  /**
   * Up to `limit` events after `afterId`, from memory; undefined when the window does not reach
   * back that far (the outbox has them).
   */
  after(afterId: number, limit: number): StoredEvent[] | undefined {
    const first = this.#events[0];
    if (first === undefined || afterId < first.id - 1) return undefined;
    const start = lowerBound(this.#events, afterId + 1);
    return this.#events.slice(start, start + limit);
  }

  /** Forgets the oldest events, down to the capacity in count and three quarters of it in bytes. */
  #trim(): void {
    let drop = Math.max(0, this.#events.length - this.#capacity);
    let bytes = this.#bytes;
    for (let i = 0; i < drop; i++) bytes -= eventBytes(this.#events[i] as StoredEvent);
    while (bytes > this.#maxBytes * 0.75 && drop < this.#events.length) bytes -= eventBytes(this.#events[drop++] as StoredEvent);
    if (drop > 0) this.#trimmedUpTo = (this.#events[drop - 1] as StoredEvent).id;
    this.#events = this.#events.slice(drop);
    this.#bytes = bytes;
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

/** What an event takes in memory, estimated from its values: text by its length, json by its JSON text. */
export function eventBytes(event: StoredEvent): number {
  return 128 + valuesBytes(event.data.object) + (event.data.previous === undefined ? 0 : valuesBytes(event.data.previous));
}

function valuesBytes(record: Record<string, unknown>): number {
  let bytes = 0;
  for (const value of Object.values(record)) {
    if (typeof value === 'string') bytes += 16 + value.length;
    else if (typeof value === 'object' && value !== null) bytes += 16 + JSON.stringify(value).length;
    else bytes += 16;
  }
  return bytes;
}
