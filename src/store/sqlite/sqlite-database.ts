import BetterSqlite3 from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { ConnectionStats, DynamicTables, ImmediateExecutor, SqlDatabase, SqlExecutor, SqlRow, SqlStatement } from '../sql-database.js';
import { TransientStoreError, type ConstraintViolation } from '../store-errors.js';
import { describeSqliteViolation } from './sqlite-violations.js';
import { sqliteDialectRules } from './sqlite-dialect-rules.js';
import type { PromiseOrValue } from '../../promise-or-value.js';
import { isBusy, LOCKED, openConnection, prepare, retryWhileLocked, runAll, runOne, runRun, translateSqliteError, type SqliteSynchronous, type Statement } from './sqlite-connection.js';
import { SqliteGroupCommit } from './sqlite-group-commit.js';

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
 *
 * Transactions are committed in groups, by {@link SqliteGroupCommit}.
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
  /** The in-process lock on the writer, held while a group commit ({@link SqliteGroupCommit}) or a script ({@link exec}) runs. */
  #lock: Promise<void> | undefined;
  readonly #groupCommit: SqliteGroupCommit;
  readonly #onStatement: ((sql: string) => void) | undefined;
  readonly #lockTimeoutMs: number;
  /** The file (or `:memory:`): {@link snapshot} opens a connection of its own to it. */
  readonly #filename: string;
  /**
   * The last write failed because the database could not write (locked elsewhere for too long,
   * read-only, full, failing): {@link ping} then checks that it can write again.
   */
  #writesFailing = false;

  constructor(options: SqliteDatabaseOptions) {
    this.#onStatement = options.onStatement;
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 5000;
    this.#filename = options.filename;
    const memory = options.filename === ':memory:';
    if (!memory) mkdirSync(dirname(options.filename), { recursive: true });
    const synchronous = options.synchronous ?? 'FULL';
    this.#writer = openConnection(options.filename, this.#lockTimeoutMs, synchronous);
    this.#reader = memory ? this.#writer : openConnection(options.filename, this.#lockTimeoutMs, synchronous);
    this.#begin = this.#writer.prepare('BEGIN IMMEDIATE');
    this.#commit = this.#writer.prepare('COMMIT');
    this.#rollback = this.#writer.prepare('ROLLBACK');
    const writer = {
      connection: this.#writer,
      prepare: (sql: string) => this.#prepare(this.#writer, this.#writerCache, sql),
      held: () => this.#lock,
      take: () => this.#take(),
      beginWrite: (deadline: number) => this.#beginWrite(deadline),
      commitWrite: () => this.#commitWrite(),
      rollback: () => void this.#rollback.run(),
      noteWriteFailure: (error: unknown) => this.#noteWriteFailure(error),
    };
    this.#groupCommit = new SqliteGroupCommit(writer, this.#lockTimeoutMs);
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

  /** Runs `work` in a write transaction, committed together with those queued meanwhile: see {@link SqliteGroupCommit.transaction}. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.#groupCommit.transaction(work);
  }

  /** Runs `work` in the transaction of this turn's shared work: see {@link SqliteGroupCommit.transactionShared}. */
  transactionShared<T>(work: (tx: ImmediateExecutor) => T): Promise<T> {
    return this.#groupCommit.transactionShared(work);
  }

  /**
   * A read transaction on a connection opened for it (and closed after): in WAL mode it keeps
   * reading the state of its first read while the writer goes on committing. On `:memory:`, whose
   * one connection is the writer's, this process's writes wait until `work` is done instead.
   */
  async snapshot<T>(work: (reader: SqlExecutor) => Promise<T>): Promise<T> {
    if (this.#reader === this.#writer) {
      while (this.#lock !== undefined) await this.#lock;
      const release = this.#take();
      try {
        return await work(this.#executorOn(this.#writer, this.#writerCache));
      } finally {
        release();
      }
    }
    const connection = openConnection(this.#filename, this.#lockTimeoutMs, 'FULL');
    try {
      connection.pragma('query_only = ON');
      connection.prepare('BEGIN').run();
      // The snapshot is taken by the transaction's first read, not by BEGIN.
      connection.prepare('select count(*) from sqlite_master').get();
      return await work(this.#executorOn(connection, new Map()));
    } finally {
      if (connection.inTransaction) connection.prepare('ROLLBACK').run();
      connection.close();
    }
  }

  /** Statements on `connection`, at once (no transaction of their own). */
  #executorOn(connection: BetterSqlite3.Database, cache: Map<string, Statement>): SqlExecutor {
    const statementOf = (statement: SqlStatement): Statement => this.#prepare(connection, cache, statement.sql);
    return {
      all: (statement) => Promise.resolve().then(() => runAll(statementOf(statement), statement.parameters)),
      one: (statement) => runOne(statementOf(statement), statement.parameters),
      run: (statement) => Promise.resolve().then(() => runRun(statementOf(statement), statement.parameters)),
    };
  }

  /** Takes the in-process lock, which must be free; returns its release. */
  #take(): () => void {
    let release!: () => void;
    this.#lock = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.#lock = undefined;
      release();
    };
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
  describeViolation(violation: ConstraintViolation, table: string, deleting: boolean): Promise<ConstraintViolation> {
    // The catalog, read on the reader connection: the writer may be in the next write's transaction.
    return Promise.resolve(describeSqliteViolation(this.#reader, violation, table, deleting));
  }

  async exec(sql: string): Promise<void> {
    // The in-process lock is taken in the tick it is seen free (as in transaction()): the script
    // must not run inside another caller's transaction on the same connection.
    while (this.#lock !== undefined) await this.#lock;
    const release = this.#take();
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
    return { open, idle: open - (this.#lock === undefined ? 0 : 1), waiting: this.#groupCommit.waiting, max: open };
  }

  async close(): Promise<void> {
    await this.#unlocked();
    this.#groupCommit.flushShared(); // work handed in this turn is committed, not lost
    // (or waits for another process's lock, and fails after the lock timeout)
    await this.#unlocked();
    if (this.#reader !== this.#writer) this.#reader.close();
    this.#writer.close();
  }
}
