import type { StoredEvent } from '../store/event-store.js';
import type { Principal } from './principal.js';
import type { RecordId } from '../schema/record-key.js';

/** One consumer of the event stream: an SSE response, a GraphQL subscription, a webhook feeder. */
export interface EventSubscriber {
  /** Whose access rules filter the events (resource read rule and owner rule). */
  principal: Principal;
  /** Only these event types (`user.created`); all when absent. */
  types?: ReadonlySet<string>;
  /** Only the events of this record (by id); of every record when absent. */
  recordId?: RecordId;
  /** How many clients it passes the events on to (a GraphQL subscription group's members). @default 1 */
  listeners?: () => number;
  /**
   * Takes one event. Returns false when the consumer wants no more for now (its buffer is full):
   * delivery pauses until it calls `resume()` on its subscription, and continues from where it
   * stopped (from memory or the outbox). A consumer that stays paused for `maxPausedMs` while more
   * than `maxLag` events pile up behind it is closed with reason 'slow-consumer'.
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
  /** Most bytes those recent events may take (estimated from their data). @default 33_554_432 (32 MiB) */
  recentBytes?: number;
  /** Events a paused subscriber may fall behind before it is closed as too slow. @default 10000 */
  maxLag?: number;
  /**
   * How long a subscriber more than `maxLag` events behind may stay paused (taking nothing) before
   * it is closed as too slow. One that keeps reading resumes within moments, however large a burst
   * (a transaction may write more events than `maxLag`). @default 10000 (ms)
   */
  maxPausedMs?: number;
  /**
   * Events a subscriber may fall behind even while it reads (too slowly to ever catch up) before it
   * is closed as too slow: a bound on what waits for it. @default 4 × maxLag
   */
  maxLagReading?: number;
  /** Deliveries to live subscribers made per event-loop turn (see {@link DeliveryQueue}). @default 1000 */
  deliveriesPerTurn?: number;
  /**
   * Least time from the start of one read of the outbox to the next: when wake-ups keep coming
   * (other instances writing all the time), each read takes several events, instead of reads
   * following each other without pause. A wake-up after a quiet spell is read at once. @default 10
   */
  readSpacingMs?: number;
}
