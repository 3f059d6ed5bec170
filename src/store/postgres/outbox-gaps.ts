import type { CommitOrderGuard, ReadTicket } from '../commit-order-guard.js';
import type { SqlDatabase } from '../sql-database.js';

/** How often, and how long, a reader waits for a gap to settle before returning what it has. */
const SETTLE_POLL_MS = 5;
const SETTLE_TRIES = 4;
/** Longest wait at start-up for the transactions running then to end. */
const START_WAIT_MS = 2000;
/** Without snapshot functions, how long a gap may stay open before its ids count as rolled back. */
const GAP_TIMEOUT_MS = 10_000;
/** Settled gaps remembered, so that other readers walking the same ids need not ask again. */
const REMEMBERED_GAPS = 10_000;

/**
 * Where several transactions write the outbox at once (PostgreSQL), ids are handed out in the
 * order the inserts ran but become visible in the order the transactions commit: a reader may see
 * event 12 while 11 is still being committed. A reader that moved past 11 would lose it.
 *
 * So a reader stops at a gap until the gap is *settled*: until every transaction that had a
 * transaction id when the gap was seen has ended. A fresh transaction id taken then is larger than
 * all of theirs; the gap has settled once the oldest transaction still running (the current
 * snapshot's xmin) is past it. (A snapshot's own xmax would not do: it is one past the newest
 * *completed* transaction, and a running one may have a larger id.)
 * Then the missing ids are either visible or will never be (rolled back). This holds because every
 * event is inserted after its change's row, so its transaction has an id before it takes an event
 * id (see core/evented-writes.ts and EventStore.append). Ids at or below the horizon, the highest id below which
 * every id is settled, are never waited for.
 */
export class OutboxGaps implements CommitOrderGuard {
  readonly #db: SqlDatabase;
  /**
   * Gaps seen and not settled yet, by first missing id: a transaction id taken when the gap was
   * seen (undefined without snapshot functions), and when.
   */
  readonly #open = new Map<number, { xid: bigint | undefined; at: number }>();
  /** Settled gaps: first missing id → the settlement count when it settled (see {@link beforeRead}). */
  readonly #settled = new Map<number, number>();
  #settlements = 0;
  #horizon = 0;
  /** false on databases without pg_current_snapshot (then gaps settle by time: GAP_TIMEOUT_MS). */
  #snapshots = true;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** Everything at or below `id` is settled (a position read at start-up, or passed by a reader). */
  #advanceHorizon(id: number): void {
    if (id > this.#horizon) this.#horizon = id;
    for (const gap of this.#open.keys()) if (gap <= this.#horizon) this.#open.delete(gap);
  }

  /**
   * What was settled when a read starts: pass it to {@link accept} with that read's rows. Readers run
   * side by side, and a gap that settled while a read was under way may have been filled after the
   * read's snapshot: only what had settled before the read may be passed in its rows.
   */
  beforeRead(): ReadTicket {
    return { horizon: this.#horizon, settlements: this.#settlements };
  }

  /**
   * The events a reader may hand out from `rows` (ascending ids, read after `afterId` by a read
   * that began at `ticket`): up to the first gap that had not settled before the read. `readAgain`
   * says that this gap has settled since: a new read shows what filled it, and then passes it.
   */
  async accept<T extends { id: number }>(afterId: number, rows: readonly T[], ticket: ReadTicket): Promise<{ events: T[]; readAgain: boolean }> {
    const events: T[] = [];
    let readAgain = false;
    let expected = afterId + 1;
    for (const row of rows) {
      // Missing ids before this row that the horizon does not cover: gapStart .. row.id - 1.
      const gapStart = Math.max(expected, ticket.horizon + 1);
      if (row.id > gapStart) {
        const settledAt = this.#settled.get(gapStart);
        if (settledAt === undefined || settledAt > ticket.settlements) {
          // Not settled, or settled only while this read was under way (then read again).
          readAgain = settledAt !== undefined || (await this.#settle(gapStart));
          break;
        }
      }
      events.push(row);
      expected = row.id + 1;
    }
    // Only a walk that started within the horizon (as it was when the read began) proves every id
    // up to its end settled.
    const last = events.at(-1);
    if (last !== undefined && afterId <= ticket.horizon) this.#advanceHorizon(last.id);
    return { events, readAgain };
  }

  /**
   * Makes `id` (just read as the newest) the horizon once every transaction running when it was
   * read has ended, waiting for that up to a limit (a transaction left open elsewhere must not stop
   * start-up; events it commits later are then read as new).
   */
  async settleUpTo(id: number): Promise<void> {
    const mark = await this.#newestXid();
    const deadline = Date.now() + START_WAIT_MS;
    if (mark !== undefined) {
      while (!(await this.#xminPassed(mark)) && Date.now() < deadline) await sleep(SETTLE_POLL_MS);
    }
    this.#advanceHorizon(id);
  }

  /** A new transaction id: larger than that of every transaction that has one now. */
  async #newestXid(): Promise<bigint | undefined> {
    if (!this.#snapshots) return undefined;
    try {
      const row = await this.#db.one({ sql: 'select pg_current_xact_id()::text as "xid"', parameters: [] });
      return BigInt(String(row?.xid));
    } catch {
      // CockroachDB and others lack the function: fall back to time.
      this.#snapshots = false;
      return undefined;
    }
  }

  /** Waits a little for a gap to settle; resolves to whether it has (it is then remembered as settled). */
  async #settle(first: number): Promise<boolean> {
    let seen = this.#open.get(first);
    if (seen === undefined) {
      // Taken after the read that found the gap: every transaction that could still fill it had
      // its transaction id by then (see the class comment), a smaller one than this.
      seen = { xid: await this.#newestXid(), at: Date.now() };
      this.#open.set(first, seen);
    }
    for (let attempt = 0; attempt < SETTLE_TRIES; attempt++) {
      if (attempt > 0) await sleep(SETTLE_POLL_MS);
      // Without snapshot functions: settled once open longer than any write transaction may take.
      const settled = seen.xid === undefined ? Date.now() - seen.at >= GAP_TIMEOUT_MS : await this.#xminPassed(seen.xid);
      if (settled) {
        this.#open.delete(first);
        if (this.#settled.size >= REMEMBERED_GAPS) this.#settled.clear();
        this.#settled.set(first, ++this.#settlements);
        return true;
      }
    }
    return false;
  }

  /** Whether every transaction with an id up to `xid` has ended. */
  async #xminPassed(xid: bigint): Promise<boolean> {
    const row = await this.#db.one({ sql: 'select pg_snapshot_xmin(pg_current_snapshot())::text as "xmin"', parameters: [] });
    return BigInt(String(row?.xmin)) > xid;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
