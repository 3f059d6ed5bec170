/**
 * Where several transactions write the outbox at once (PostgreSQL), ids are handed out in the order
 * the inserts ran but become visible in the order the transactions commit: a reader may see event
 * 12 while 11 is still being committed, and a reader that moved past 11 would lose it. A database
 * whose commits can come out of id order gives its outbox readers a guard that holds them at such
 * gaps until they settle (PostgreSQL's: postgres/outbox-gaps.ts). Where one writer at a time
 * commits (SQLite), ids become visible in order and there is no guard.
 */
export interface CommitOrderGuard {
  /** Takes note of what had settled before a read of the outbox begins. */
  beforeRead(): ReadTicket;
  /**
   * Of the rows a read returned (ids above `afterId`, in order), those up to the first gap that has
   * not settled; `readAgain` when the read stopped at such a gap that settled meanwhile.
   */
  accept<T extends { id: number }>(afterId: number, rows: readonly T[], ticket: ReadTicket): Promise<{ events: T[]; readAgain: boolean }>;
  /** Waits until every id up to `id` is settled (visible, or never to be). */
  settleUpTo(id: number): Promise<void>;
}

/** What had settled when a read began. */
export interface ReadTicket {
  readonly horizon: number;
  readonly settlements: number;
}
