import { sql } from 'kysely';
import type { SqlDatabase } from './sql-database.js';

/** What a counter holds after an addition was tried. */
export interface Counted {
  /** Units used in the window, including this addition when it was made. */
  used: number;
  /** False when the addition would have passed the limit (and was not made). */
  added: boolean;
}

/**
 * Rate-limit counters, one per key (policy, partition and window). An addition is made only when
 * it fits under the limit, atomically, so concurrent requests on several instances never let more
 * through than the limit. Keys carry their window, so a counter is never reset, only forgotten
 * after `expiresAt` (epoch ms).
 */
export interface CounterStore {
  add(key: string, units: number, limit: number, expiresAt: number): Counted | Promise<Counted>;
  close(): Promise<void>;
}

/** What a counter costs besides its key's characters: the map entry and its object (estimate). */
const COUNTER_OVERHEAD_BYTES = 96;

/**
 * Counters in this process: the default, for one instance. Synchronous, so the request path awaits
 * nothing. Bounded in bytes: every anonymous client network has counters of its own, and clients
 * from many addresses must not grow the heap without end. Past the bound the counters of ended
 * windows go first, then the oldest (a forgotten counter starts again from zero: its client gets
 * more than its quota, never less).
 */
export class MemoryCounters implements CounterStore {
  readonly #counters = new Map<string, { used: number; expiresAt: number }>();
  readonly #sweeper: NodeJS.Timeout;
  readonly #maxBytes: number;
  #bytes = 0;

  /** `maxBytes`: @default 32 MiB (about 200,000 counters) */
  constructor(sweepIntervalMs = 10_000, maxBytes = 32 * 1024 * 1024) {
    this.#maxBytes = maxBytes;
    this.#sweeper = setInterval(() => this.sweep(Date.now()), sweepIntervalMs);
    this.#sweeper.unref();
  }

  /** Bytes the counters take, as estimated for the bound. */
  get bytes(): number {
    return this.#bytes;
  }

  add(key: string, units: number, limit: number, expiresAt: number): Counted {
    let counter = this.#counters.get(key);
    if (counter === undefined) {
      counter = { used: 0, expiresAt };
      this.#counters.set(key, counter);
      this.#bytes += key.length + COUNTER_OVERHEAD_BYTES;
      if (this.#bytes > this.#maxBytes) this.#shrink(key);
    }
    if (counter.used + units > limit) return { used: counter.used, added: false };
    counter.used += units;
    return { used: counter.used, added: true };
  }

  /** Forgets the counters of windows that have ended. */
  sweep(now: number): void {
    for (const [key, counter] of this.#counters) if (counter.expiresAt <= now) this.#forget(key);
  }

  /** Back to nine tenths of the bound: ended windows first, then the oldest counters (never `keep`). */
  #shrink(keep: string): void {
    this.sweep(Date.now());
    const target = this.#maxBytes * 0.9;
    for (const key of this.#counters.keys()) {
      if (this.#bytes <= target) break;
      if (key !== keep) this.#forget(key);
    }
  }

  #forget(key: string): void {
    if (this.#counters.delete(key)) this.#bytes -= key.length + COUNTER_OVERHEAD_BYTES;
  }

  close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#counters.clear();
    this.#bytes = 0;
    return Promise.resolve();
  }
}

const TABLE = '_restgraph_rate_limits';

/**
 * Counters in the database every instance shares (PostgreSQL; SQLite works too, for instances
 * sharing a file). One statement per addition: an upsert that adds only while the sum fits.
 */
export class SqlCounters implements CounterStore {
  readonly #db: SqlDatabase;
  readonly #sweeper: NodeJS.Timeout;
  #addSql: string | undefined;
  #usedSql: string | undefined;

  constructor(db: SqlDatabase, sweepIntervalMs = 60_000) {
    this.#db = db;
    this.#sweeper = setInterval(() => void this.sweep(Date.now()).catch(() => undefined), sweepIntervalMs);
    this.#sweeper.unref();
  }

  async add(key: string, units: number, limit: number, expiresAt: number): Promise<Counted> {
    if (units <= limit) {
      // The text is the same for every request (values are bound): compiled once, kept prepared.
      this.#addSql ??= sql`
        insert into ${sql.table(TABLE)} as c ("key", "used", "expiresAt") values (${''}, ${0}, ${0})
        on conflict ("key") do update set "used" = c."used" + excluded."used"
        where c."used" + excluded."used" <= ${0}
        returning "used"`.compile(this.#db.builder).sql;
      const row = await this.#db.one({ sql: this.#addSql, parameters: [key, units, expiresAt, limit], reuse: true });
      if (row !== undefined) return { used: Number(row.used), added: true };
    }
    this.#usedSql ??= this.#db.builder.selectFrom(TABLE).select('used').where('key', '=', '').compile().sql;
    const current = await this.#db.one({ sql: this.#usedSql, parameters: [key], reuse: true });
    return { used: current === undefined ? 0 : Number(current.used), added: false };
  }

  /** Deletes the counters of windows that have ended. */
  async sweep(now: number): Promise<void> {
    await this.#db.run(this.#db.builder.deleteFrom(TABLE).where('expiresAt', '<=', now).compile());
  }

  close(): Promise<void> {
    clearInterval(this.#sweeper);
    return Promise.resolve();
  }
}
