import BetterSqlite3 from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { ConnectionStats, DynamicTables, ImmediateExecutor, SqlDatabase, SqlExecutor, SqlRow, SqlStatement } from '../sql-database.js';
import { TransientStoreError } from '../store-errors.js';
import { sqliteDialectRules } from './sqlite-dialect-rules.js';
import type { PromiseOrValue } from '../../promise-or-value.js';
import { isBusy, LOCKED, openConnection, prepare, retryWhileLocked, runAll, runOne, runRun, translateSqliteError, type SqliteSynchronous, type Statement } from './sqlite-connection.js';

export type { SqliteSynchronous } from './sqlite-connection.js';

export interface SqliteDatabaseOptions {
  /** File path, or `:memory:`. Parent folders are created. */
  filename: string;
  /**
   * How long a write waits for another process's write lock before failing with a
   * {@link TransientStoreError} (`unavailable`). The wait is on timers: the event loop serves
   * meanwhile. @default 5000 (ms)
   */
  lockTimeoutMs?: number;
  /** Durability of commits. @default 'FULL' */
  synchronous?: SqliteSynchronous;
  /** Called with the text of every statement run (tests count round trips with it; tracing). */
  onStatement?: (sql: string) => void;
}

/**
 * SQLite through better-sqlite3: one writer connection for transactions and writes, one reader
 * connection for reads outside them (WAL lets it read the last committed state while a
 * transaction is open), and a cache of prepared statements on each.
 *
 * better-sqlite3 is synchronous; transactions may await (hooks in the core), so writers queue on
 * an in-process lock, and a statement outside a transaction never runs inside someone else's.
 *
 * SQLite's own busy handler would wait for another process's lock synchronously, freezing the
 * event loop (health checks included) for as long as it waits: it is off (busy timeout 0), and a
 * write that finds the lock taken tries again on timers, for up to `lockTimeoutMs`.
 */
export class SqliteDatabase implements SqlDatabase {
  readonly rules = sqliteDialectRules;
  readonly networked = false;
  /** Processes sharing a SQLite file find each other's events by polling. */
  readonly signals = undefined;
  readonly builder: Kysely<DynamicTables>;
  readonly #writer: BetterSqlite3.Database;
  readonly #reader: BetterSqlite3.Database;
  readonly #writerCache = new Map<string, Statement>();
  readonly #readerCache = new Map<string, Statement>();
  /** Transaction control, prepared once (exec would parse the text on every write). */
  readonly #begin: BetterSqlite3.Statement;
  readonly #commit: BetterSqlite3.Statement;
  readonly #rollback: BetterSqlite3.Statement;
  readonly #savepoint: BetterSqlite3.Statement;
  readonly #release: BetterSqlite3.Statement;
  readonly #rollbackToSavepoint: BetterSqlite3.Statement;
  /** Work of {@link transactionShared} waiting for the end of this turn, in the order handed in. */
  #shared: SharedWork[] = [];
  #lock: Promise<void> | undefined;
  /** Transactions waiting for their group commit, in arrival order (see {@link transaction}). */
  #queued: QueuedTransaction[] = [];
  /** A runner of #queued is under way. */
  #grouping = false;
  readonly #onStatement: ((sql: string) => void) | undefined;
  readonly #lockTimeoutMs: number;
  /**
   * The last write failed because the database could not write (locked elsewhere for too long,
   * read-only, full, failing): {@link ping} then checks that it can write again.
   */
  #writesFailing = false;
  /** The statements of {@link transactionShared}'s work, on the writer. */
  readonly #immediate: ImmediateExecutor = {
    one: (statement) => runOne(this.#prepare(this.#writer, this.#writerCache, statement.sql), statement.parameters),
  };

  constructor(options: SqliteDatabaseOptions) {
    this.#onStatement = options.onStatement;
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 5000;
    const memory = options.filename === ':memory:';
    if (!memory) mkdirSync(dirname(options.filename), { recursive: true });
    const synchronous = options.synchronous ?? 'FULL';
    this.#writer = openConnection(options.filename, this.#lockTimeoutMs, synchronous);
    this.#reader = memory ? this.#writer : openConnection(options.filename, this.#lockTimeoutMs, synchronous);
    this.#begin = this.#writer.prepare('BEGIN IMMEDIATE');
    this.#commit = this.#writer.prepare('COMMIT');
    this.#rollback = this.#writer.prepare('ROLLBACK');
    this.#savepoint = this.#writer.prepare('SAVEPOINT "rg_shared"');
    this.#release = this.#writer.prepare('RELEASE "rg_shared"');
    this.#rollbackToSavepoint = this.#writer.prepare('ROLLBACK TO "rg_shared"');
    this.builder = new Kysely<DynamicTables>({
      dialect: {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new SqliteIntrospector(db),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      },
    });
  }

  #prepare(db: BetterSqlite3.Database, cache: Map<string, Statement>, sql: string): Statement {
    this.#onStatement?.(sql);
    return prepare(db, cache, sql);
  }

  async all(statement: SqlStatement): Promise<SqlRow[]> {
    if (this.#reader === this.#writer) while (this.#lock !== undefined) await this.#lock;
    return runAll(this.#prepare(this.#reader, this.#readerCache, statement.sql), statement.parameters);
  }

  /**
   * Synchronous (the hot read path), except on `:memory:` while a transaction holds the one
   * connection. (In WAL mode another process keeps readers out only while it recovers the WAL
   * after a crash: a read that meets that fails at once, as database-unavailable.)
   */
  one(statement: SqlStatement): PromiseOrValue<SqlRow | undefined> {
    if (this.#reader === this.#writer && this.#lock !== undefined) return this.#oneAfterLock(statement);
    return runOne(this.#prepare(this.#reader, this.#readerCache, statement.sql), statement.parameters);
  }

  async #oneAfterLock(statement: SqlStatement): Promise<SqlRow | undefined> {
    while (this.#lock !== undefined) await this.#lock;
    return this.one(statement);
  }

  async run(statement: SqlStatement): Promise<number> {
    return this.transaction((tx) => tx.run(statement));
  }

  /**
   * Runs `work` in a write transaction, committed together with the transactions that queued
   * meanwhile (group commit): with synchronous FULL each commit waits for the disk, on the event
   * loop, so one commit per transaction would cap writes at the disk's flushes per second and hold
   * every request behind each one. Transactions run one after the other, each in a savepoint of
   * the group's transaction: one that fails is rolled back alone. Each is answered once the group
   * has committed (never before: an answer means stored). A group begins in the turn after its
   * first transaction came (those of the same turn join it) and ends when none is waiting, or
   * after {@link MAX_GROUP}.
   */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // The lock timeout counts from now: behind a write waiting for another process's lock, the
      // queue does not wait the timeout once each.
      this.#queued.push({ work, resolve: resolve as (value: unknown) => void, reject, deadline: Date.now() + this.#lockTimeoutMs });
      if (!this.#grouping) void this.#runGroups();
    });
  }

  /** Runs groups of queued transactions until none is left; holds the in-process lock while each runs. */
  async #runGroups(): Promise<void> {
    this.#grouping = true;
    try {
      while (this.#queued.length > 0) {
        // The lock is taken in the same tick the loop sees it free (no await between).
        while (this.#lock !== undefined) await this.#lock;
        let release!: () => void;
        this.#lock = new Promise<void>((resolve) => (release = resolve));
        try {
          await this.#runGroup();
        } finally {
          this.#lock = undefined;
          release();
        }
        // Those woken by the release (a turn's shared creates, a script) take the lock first.
        await Promise.resolve();
      }
    } finally {
      this.#grouping = false;
    }
  }

  /** One group: BEGIN, each queued transaction in a savepoint, COMMIT, then the answers. Never rejects. */
  async #runGroup(): Promise<void> {
    // The transactions of this turn's requests join before the group begins. (Waiting after BEGIN
    // instead would hold the database's write lock across a turn of the event loop.)
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      const begun = this.#beginWrite((this.#queued[0] as QueuedTransaction).deadline);
      if (begun !== undefined) await begun;
    } catch (error) {
      // Another process kept the write lock past the deadline (or the database cannot write):
      // those waiting now would meet the same.
      for (const item of this.#queued.splice(0)) item.reject(error);
      return;
    }
    const done: { item: QueuedTransaction; value: unknown }[] = [];
    const fail = (error: unknown): void => {
      try {
        if (this.#writer.inTransaction) this.#rollback.run();
      } catch {
        // SQLite rolls back what it cannot commit; a rollback failing too leaves nothing to undo.
      }
      const reason = this.#noteWriteFailure(error);
      for (const { item } of done) item.reject(reason);
    };
    for (;;) {
      const item = this.#queued.shift();
      if (item === undefined) break;
      const outcome = await this.#runInSavepoint(item);
      if (outcome.ok) done.push({ item, value: outcome.value });
      else if (this.#writer.inTransaction) item.reject(this.#noteWriteFailure(outcome.value));
      else {
        // SQLite rolled the whole transaction back (a full disk, an I/O error): the group is lost.
        item.reject(this.#noteWriteFailure(outcome.value));
        fail(outcome.value);
        return;
      }
      if (done.length >= MAX_GROUP) break;
    }
    try {
      if (done.length > 0) this.#commitWrite();
      else this.#rollback.run();
    } catch (error) {
      fail(error);
      return;
    }
    for (const { item, value } of done) item.resolve(value);
  }

  /** Runs one transaction's work in a savepoint of the group: released when it succeeds, rolled back when it throws. */
  async #runInSavepoint(item: QueuedTransaction): Promise<{ ok: boolean; value: unknown }> {
    const writer = this.#writer;
    const cache = this.#writerCache;
    let open = true;
    const finished = (): Promise<never> => Promise.reject(new Error('transaction already finished'));
    const tx: SqlExecutor = {
      all: (statement) => (open ? Promise.resolve(runAll(this.#prepare(writer, cache, statement.sql), statement.parameters)) : finished()),
      one: (statement) => (open ? runOne(this.#prepare(writer, cache, statement.sql), statement.parameters) : finished()),
      run: (statement) => (open ? Promise.resolve(runRun(this.#prepare(writer, cache, statement.sql), statement.parameters)) : finished()),
    };
    try {
      this.#savepoint.run();
    } catch (error) {
      return { ok: false, value: error };
    }
    try {
      const value = await item.work(tx);
      this.#release.run();
      return { ok: true, value };
    } catch (error) {
      try {
        if (writer.inTransaction) {
          this.#rollbackToSavepoint.run();
          this.#release.run();
        }
      } catch {
        // Left to the caller: the transaction's state says what remains.
      }
      return { ok: false, value: error };
    } finally {
      open = false;
    }
  }

  /**
   * Group commit: a commit writes every page it changed to the WAL, and the creates of one turn
   * change the same few pages (the table's last leaf, its indexes', the outbox's), so one commit
   * for all of them writes those pages once instead of once each. The turn's work runs in the
   * check phase (setImmediate), after the requests that arrived together have been parsed.
   */
  transactionShared<T>(work: (tx: ImmediateExecutor) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#shared.length === 0) setImmediate(this.#flushShared);
      this.#shared.push({ work, resolve: resolve as (value: unknown) => void, reject, deadline: Date.now() + this.#lockTimeoutMs });
    });
  }

  /** Commits the shared work of a turn; after the transaction in progress, if one is. */
  readonly #flushShared = (): void => {
    if (this.#shared.length === 0) return;
    if (this.#lock !== undefined) {
      void this.#lock.then(this.#flushShared);
      return;
    }
    const batch = this.#shared;
    this.#shared = [];
    let begun: Promise<void> | undefined;
    try {
      begun = this.#beginWrite(batch[0]?.deadline ?? Date.now());
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    if (begun === undefined) {
      this.#runShared(batch);
      return;
    }
    // Another process holds the write lock: this batch waits for it (on timers) holding the
    // in-process lock, so transactions and later batches queue behind it, in order.
    let release!: () => void;
    this.#lock = new Promise<void>((resolve) => (release = resolve));
    const done = (): void => {
      this.#lock = undefined;
      release();
    };
    begun.then(
      () => {
        try {
          this.#runShared(batch);
        } finally {
          done();
        }
      },
      (error: unknown) => {
        done();
        for (const item of batch) item.reject(error);
      },
    );
  };

  /** Runs a batch of shared work in the write transaction just begun, and commits it. Never throws: each work's promise hears how it went. */
  #runShared(batch: SharedWork[]): void {
    const outcomes: { ok: boolean; value: unknown }[] = [];
    // A work alone needs no savepoint: the transaction is its own.
    const isolate = batch.length > 1;
    try {
      for (const item of batch) {
        if (isolate) this.#savepoint.run();
        const outcome = attempt(item.work, this.#immediate);
        if (isolate) {
          if (!outcome.ok) this.#rollbackToSavepoint.run();
          this.#release.run();
        }
        outcomes.push(outcome);
      }
      if (outcomes.some((o) => o.ok)) this.#commitWrite();
      else this.#rollback.run();
    } catch (error) {
      // The transaction itself failed (a savepoint or the commit): none of it is stored.
      try {
        if (this.#writer.inTransaction) this.#rollback.run();
      } catch {
        // SQLite rolls back what it cannot commit; a rollback failing too leaves nothing to undo.
      }
      const reason = this.#noteWriteFailure(error);
      for (const item of batch) item.reject(reason);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok === true) item.resolve(outcome.value);
      else item.reject(outcome?.value);
    });
  }

  /**
   * Takes SQLite's write lock (BEGIN IMMEDIATE): undefined when taken at once; a promise when
   * another process holds it, which tries again on timers (every few ms, then every 50) and
   * rejects with a TransientStoreError at `deadline` (Date.now() time). Call with the in-process lock held.
   */
  #beginWrite(deadline: number): Promise<void> | undefined {
    if (this.#tryBegin()) return undefined;
    return this.#beginWhenFree(deadline);
  }

  async #beginWhenFree(deadline: number): Promise<void> {
    try {
      await retryWhileLocked(() => (this.#tryBegin() ? true : LOCKED), deadline, "the database's write lock");
    } catch (error) {
      this.#writesFailing = true;
      throw error;
    }
  }

  /** BEGIN IMMEDIATE: true when it took the write lock, false when another process holds it. */
  #tryBegin(): boolean {
    try {
      this.#begin.run();
      return true;
    } catch (error) {
      if (isBusy(error)) return false;
      throw this.#noteWriteFailure(error);
    }
  }

  /** COMMIT; a commit that fails (the disk) is rolled back by SQLite. */
  #commitWrite(): void {
    try {
      this.#commit.run();
    } catch (error) {
      throw this.#noteWriteFailure(error);
    }
    this.#writesFailing = false;
  }

  /** Translates a failure to write, remembering when it says the database cannot write now. */
  #noteWriteFailure(error: unknown): unknown {
    const translated = translateSqliteError(error);
    if (translated instanceof TransientStoreError && translated.reason === 'unavailable') this.#writesFailing = true;
    return translated;
  }

  /**
   * Runs a script. Its statements commit one by one; when another process holds the write lock,
   * the script is run again from its start once the lock is free (so scripts are idempotent:
   * `create … if not exists`), for up to `lockTimeoutMs`.
   */
  async exec(sql: string): Promise<void> {
    // The in-process lock is taken in the tick it is seen free (as in transaction()): the script
    // must not run inside another caller's transaction on the same connection.
    while (this.#lock !== undefined) await this.#lock;
    let release!: () => void;
    this.#lock = new Promise<void>((resolve) => (release = resolve));
    const attempt = (): true | typeof LOCKED => {
      try {
        this.#writer.exec(sql);
        return true;
      } catch (error) {
        if (isBusy(error)) return LOCKED;
        throw translateSqliteError(error);
      }
    };
    try {
      if (attempt() === LOCKED) await retryWhileLocked(attempt, Date.now() + this.#lockTimeoutMs, "the database's write lock");
    } finally {
      this.#lock = undefined;
      release();
    }
    // DDL may change what cached statements mean.
    this.#writerCache.clear();
    this.#readerCache.clear();
  }

  /**
   * In one process, work is already exclusive enough: migrations apply in one write transaction,
   * and SQLite's lock keeps a second process's migration out until it has committed.
   */
  async exclusively<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  /**
   * Resolves when the database answers a read; and, after a write failed because the database
   * could not write, once it can write again: it then rewrites the header's user_version as it is
   * (taking the write lock and committing a page). Never waits, for another process's lock nor for
   * a write of this one: either held, it rejects at once.
   */
  async ping(): Promise<void> {
    await this.all({ sql: 'select 1 as ok', parameters: [] });
    if (!this.#writesFailing) return;
    // A write of this process holds the writer: with writes failing, it is most likely waiting for
    // another process's lock (up to the lock timeout). The probe does not queue behind it.
    if (this.#lock !== undefined) throw new TransientStoreError('writes are waiting for the write lock', { reason: 'unavailable' });
    if (!this.#tryBegin()) throw new TransientStoreError('another process holds the write lock', { reason: 'unavailable' });
    try {
      const version = Number(this.#writer.pragma('user_version', { simple: true }));
      this.#writer.pragma(`user_version = ${version}`);
      this.#commitWrite();
    } catch (error) {
      if (this.#writer.inTransaction) this.#rollback.run();
      throw this.#noteWriteFailure(error);
    }
  }

  /** Resolves once no transaction holds the in-process lock. */
  async #unlocked(): Promise<void> {
    while (this.#lock !== undefined) await this.#lock;
  }

  /** The writer is in use while a transaction holds the lock; the reader is never held across an await. */
  connectionStats(): ConnectionStats {
    const open = this.#reader === this.#writer ? 1 : 2;
    return { open, idle: open - (this.#lock === undefined ? 0 : 1), waiting: this.#queued.length, max: open };
  }

  async close(): Promise<void> {
    await this.#unlocked();
    this.#flushShared(); // work handed in this turn is committed, not lost
    // (or waits for another process's lock, and fails after the lock timeout)
    await this.#unlocked();
    if (this.#reader !== this.#writer) this.#reader.close();
    this.#writer.close();
  }
}

/** Most transactions one group commit holds (they wait for its commit to be answered). */
const MAX_GROUP = 256;

interface QueuedTransaction {
  work: (tx: SqlExecutor) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** When waiting for another process's lock must give up (Date.now() time). */
  deadline: number;
}

interface SharedWork {
  work: (tx: ImmediateExecutor) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** When waiting for another process's lock must give up (Date.now() time). */
  deadline: number;
}

function attempt(work: (tx: ImmediateExecutor) => unknown, tx: ImmediateExecutor): { ok: boolean; value: unknown } {
  try {
    return { ok: true, value: work(tx) };
  } catch (error) {
    return { ok: false, value: error };
  }
}
