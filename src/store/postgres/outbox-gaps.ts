import type { SqlDatabase } from '../sql-database.js';

/** How often, and how long, a reader waits for a gap to settle before returning what it has. */
const SETTLE_POLL_MS = 5;
const SETTLE_TRIES = 4;
/** Longest wait at start-up for the transactions running then to end. */
const START_WAIT_MS = 2000;
/** Settled gaps remembered, so that other readers walking the same ids need not ask again. */
const REMEMBERED_GAPS = 10_000;

/**
 * Where several transactions write the outbox at once (PostgreSQL), ids are handed out in the
 * order the inserts ran but become visible in the order the transactions commit: a reader may see
 * event 12 while 11 is still being committed. A reader that moved past 11 would lose it.
 *
 * So a reader stops at a gap until the gap is *settled*: until every transaction that was running
 * when the gap was seen has ended (PostgreSQL's snapshot xmin has passed that snapshot's xmax).
 * Then the missing ids are either visible or will never be (rolled back). This holds because every
 * event is inserted after its change's row, so its transaction has an id before it takes an event
 * id (see ResourceOperations' write). Ids at or below the horizon, the highest id below which
 * every id is settled, are never waited for.
 */
export class OutboxGaps {
  readonly #db: SqlDatabase;
  /** Gaps seen and not settled yet: first missing id → xmax (xid8 text) of the snapshot that saw it. */
  readonly #open = new Map<number, bigint>();
  readonly #settled = new Set<number>();
  #horizon = 0;
  /** false on databases without pg_current_snapshot (then gaps settle by time: see #settledByTime). */
  #snapshots = true;
  readonly #seenAt = new Map<number, number>();

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** Everything at or below `id` is settled (a position read at start-up, or passed by a reader). */
  advanceHorizon(id: number): void {
    if (id > this.#horizon) this.#horizon = id;
    for (const gap of this.#open.keys()) if (gap <= this.#horizon) this.#open.delete(gap);
  }

  /**
   * The events a reader may hand out from `rows` (ascending ids, just read after `afterId`): up to
   * the first gap that had not settled before they were read. `readAgain` says that this gap has
   * settled since: a new read shows what filled it, and then passes it.
   */
  async accept<T extends { id: number }>(afterId: number, rows: readonly T[]): Promise<{ events: T[]; readAgain: boolean }> {
    const events: T[] = [];
    let readAgain = false;
    let expected = afterId + 1;
    for (const row of rows) {
      if (row.id > expected && expected > this.#horizon && !this.#settled.has(expected)) {
        readAgain = await this.#settle(expected);
        break;
      }
      events.push(row);
      expected = row.id + 1;
    }
    const last = events.at(-1);
    if (last !== undefined) this.advanceHorizon(last.id);
    return { events, readAgain };
  }

  /**
   * Makes `id` (just read as the newest) the horizon once every transaction running when it was
   * read has ended, waiting for that up to a limit (a transaction left open elsewhere must not stop
   * start-up; events it commits later are then read as new).
   */
  async settleUpTo(id: number): Promise<void> {
    const xmax = await this.snapshotXmax();
    const deadline = Date.now() + START_WAIT_MS;
    if (xmax !== undefined) {
      while (!(await this.#xminReached(xmax)) && Date.now() < deadline) await sleep(SETTLE_POLL_MS);
    }
    this.advanceHorizon(id);
  }

  /** The xmax of the current snapshot: transactions with ids from it on had not started. */
  async snapshotXmax(): Promise<bigint | undefined> {
    if (!this.#snapshots) return undefined;
    try {
      const row = await this.#db.one({ sql: 'select pg_snapshot_xmax(pg_current_snapshot())::text as "xmax"', parameters: [] });
      return BigInt(String(row?.xmax));
    } catch {
      // CockroachDB and others lack the function: fall back to time.
      this.#snapshots = false;
      return undefined;
    }
  }

  /** Waits a little for a gap to settle; resolves to whether it has (it is then remembered as settled). */
  async #settle(first: number): Promise<boolean> {
    let seenBy = this.#open.get(first);
    if (seenBy === undefined) {
      // Taken after the read that found the gap: every transaction that could still fill it is
      // running in this snapshot, or has ended.
      seenBy = await this.snapshotXmax();
      if (seenBy !== undefined) this.#open.set(first, seenBy);
    }
    for (let attempt = 0; attempt < SETTLE_TRIES; attempt++) {
      if (attempt > 0) await sleep(SETTLE_POLL_MS);
      const settled = seenBy === undefined ? this.#settledByTime(first) : await this.#xminReached(seenBy);
      if (settled) {
        this.#open.delete(first);
        this.#seenAt.delete(first);
        if (this.#settled.size >= REMEMBERED_GAPS) this.#settled.clear();
        this.#settled.add(first);
        return true;
      }
    }
    return false;
  }

  async #xminReached(xmax: bigint): Promise<boolean> {
    const row = await this.#db.one({ sql: 'select pg_snapshot_xmin(pg_current_snapshot())::text as "xmin"', parameters: [] });
    return BigInt(String(row?.xmin)) >= xmax;
  }

  /** Without snapshots: a gap is settled once it has stayed open longer than any write transaction may take. */
  #settledByTime(first: number): boolean {
    const now = Date.now();
    const seen = this.#seenAt.get(first);
    if (seen === undefined) {
      this.#seenAt.set(first, now);
      return false;
    }
    return now - seen >= GAP_TIMEOUT_MS;
  }
}

/** Without snapshot functions, how long a gap may stay open before its ids count as rolled back. */
export const GAP_TIMEOUT_MS = 10_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
