import BetterSqlite3 from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { ConnectionStats, DynamicTables, ImmediateExecutor, SqlDatabase, SqlExecutor, SqlRow, SqlStatement } from '../sql-database.js';
import { ConstraintViolation, TransientStoreError } from '../store-errors.js';
import type { PromiseOrValue } from '../../promise-or-value.js';

type Statement = BetterSqlite3.Statement<unknown[], SqlRow>;

export interface SqliteDatabaseOptions {
  /** File path, or `:memory:`. Parent folders are created. */
  filename: string;
  /** How long a write waits for another process's lock before failing. @default 5000 (ms) */
  busyTimeoutMs?: number;
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
 */
export class SqliteDatabase implements SqlDatabase {
  readonly dialect = 'sqlite' as const;
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
  /** Transactions waiting for #lock. */
  #waiting = 0;
  readonly #onStatement: ((sql: string) => void) | undefined;
  /** The statements of {@link transactionShared}'s work, on the writer. */
  readonly #immediate: ImmediateExecutor = {
    one: (statement) => runOne(this.#prepare(this.#writer, this.#writerCache, statement.sql), statement.parameters),
  };

  constructor(options: SqliteDatabaseOptions) {
    this.#onStatement = options.onStatement;
    const memory = options.filename === ':memory:';
    if (!memory) mkdirSync(dirname(options.filename), { recursive: true });
    this.#writer = openConnection(options.filename, options.busyTimeoutMs ?? 5000);
    this.#reader = memory ? this.#writer : openConnection(options.filename, options.busyTimeoutMs ?? 5000);
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

  /** Synchronous (the hot read path), except on `:memory:` while a transaction holds the one connection. */
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

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    // The lock is taken in the same tick the loop sees it free (no await between), so two waiters
    // woken together cannot both take it. Waiters are counted for metrics.
    while (this.#lock !== undefined) {
      this.#waiting++;
      try {
        await this.#lock;
      } finally {
        this.#waiting--;
      }
    }
    let release!: () => void;
    this.#lock = new Promise<void>((resolve) => (release = resolve));
    const writer = this.#writer;
    const cache = this.#writerCache;
    let open = true;
    const tx: SqlExecutor = {
      all: (statement) => {
        if (!open) return Promise.reject(new Error('transaction already finished'));
        return Promise.resolve(runAll(this.#prepare(writer, cache, statement.sql), statement.parameters));
      },
      one: (statement) => {
        if (!open) return Promise.reject(new Error('transaction already finished'));
        return runOne(this.#prepare(writer, cache, statement.sql), statement.parameters);
      },
      run: (statement) => {
        if (!open) return Promise.reject(new Error('transaction already finished'));
        return Promise.resolve(runRun(this.#prepare(writer, cache, statement.sql), statement.parameters));
      },
    };
    try {
      this.#begin.run();
      try {
        const result = await work(tx);
        this.#commit.run();
        return result;
      } catch (error) {
        if (writer.inTransaction) this.#rollback.run();
        throw error;
      }
    } finally {
      open = false;
      this.#lock = undefined;
      release();
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
      this.#shared.push({ work, resolve: resolve as (value: unknown) => void, reject });
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
    const outcomes: { ok: boolean; value: unknown }[] = [];
    // A work alone needs no savepoint: the transaction is its own.
    const isolate = batch.length > 1;
    try {
      this.#begin.run();
      for (const item of batch) {
        if (isolate) this.#savepoint.run();
        const outcome = attempt(item.work, this.#immediate);
        if (isolate) {
          if (!outcome.ok) this.#rollbackToSavepoint.run();
          this.#release.run();
        }
        outcomes.push(outcome);
      }
      if (outcomes.some((o) => o.ok)) this.#commit.run();
      else this.#rollback.run();
    } catch (error) {
      // The transaction itself failed (begin, a savepoint or the commit): none of it is stored.
      if (this.#writer.inTransaction) this.#rollback.run();
      const reason = translateSqliteError(error);
      for (const item of batch) item.reject(reason);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok === true) item.resolve(outcome.value);
      else item.reject(outcome?.value);
    });
  };

  async exec(sql: string): Promise<void> {
    while (this.#lock !== undefined) await this.#lock;
    this.#writer.exec(sql);
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

  async ping(): Promise<void> {
    await this.all({ sql: 'select 1 as ok', parameters: [] });
  }

  /** The writer is in use while a transaction holds the lock; the reader is never held across an await. */
  connectionStats(): ConnectionStats {
    const open = this.#reader === this.#writer ? 1 : 2;
    return { open, idle: open - (this.#lock === undefined ? 0 : 1), waiting: this.#waiting, max: open };
  }

  async close(): Promise<void> {
    while (this.#lock !== undefined) await this.#lock;
    this.#flushShared(); // work handed in this turn is committed, not lost
    if (this.#reader !== this.#writer) this.#reader.close();
    this.#writer.close();
  }
}

interface SharedWork {
  work: (tx: ImmediateExecutor) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

function attempt(work: (tx: ImmediateExecutor) => unknown, tx: ImmediateExecutor): { ok: boolean; value: unknown } {
  try {
    return { ok: true, value: work(tx) };
  } catch (error) {
    return { ok: false, value: error };
  }
}

function openConnection(filename: string, busyTimeoutMs: number): BetterSqlite3.Database {
  const db = new BetterSqlite3(filename, { timeout: busyTimeoutMs });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  return db;
}

function prepare(db: BetterSqlite3.Database, cache: Map<string, Statement>, sql: string): Statement {
  let statement = cache.get(sql);
  if (statement === undefined) {
    statement = db.prepare<unknown[], SqlRow>(sql);
    if (cache.size > 500) cache.clear();
    cache.set(sql, statement);
  }
  return statement;
}

function runAll(statement: Statement, parameters: readonly unknown[]): SqlRow[] {
  try {
    return statement.reader ? statement.all(...parameters) : (statement.run(...parameters), []);
  } catch (error) {
    throw translateSqliteError(error);
  }
}

function runOne(statement: Statement, parameters: readonly unknown[]): SqlRow | undefined {
  try {
    // One parameter (a get by id) is passed as it is: spreading an array costs more than the call.
    return parameters.length === 1 ? statement.get(parameters[0]) : statement.get(...parameters);
  } catch (error) {
    throw translateSqliteError(error);
  }
}

function runRun(statement: Statement, parameters: readonly unknown[]): number {
  try {
    if (statement.reader) return statement.all(...parameters).length;
    return statement.run(...parameters).changes;
  } catch (error) {
    throw translateSqliteError(error);
  }
}

/** Turns SQLite's constraint errors into {@link ConstraintViolation}; anything else passes through. */
function translateSqliteError(error: unknown): unknown {
  if (!(error instanceof BetterSqlite3.SqliteError)) return error;
  // Another process held the write lock for longer than the busy timeout.
  if (error.code === 'SQLITE_BUSY' || error.code.startsWith('SQLITE_BUSY_')) return new TransientStoreError('the database is busy', { cause: error });
  const columns = (/constraint failed: (.*)$/.exec(error.message)?.[1] ?? '')
    .split(',')
    .map((c) => c.trim().split('.').pop() ?? '')
    .filter((c) => c !== '');
  switch (error.code) {
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
      return new ConstraintViolation('unique', columns, { cause: error });
    case 'SQLITE_CONSTRAINT_FOREIGNKEY':
      return new ConstraintViolation('foreignKey', columns, { cause: error });
    case 'SQLITE_CONSTRAINT_NOTNULL':
      return new ConstraintViolation('notNull', columns, { cause: error });
    case 'SQLITE_CONSTRAINT_CHECK':
      return new ConstraintViolation('check', columns, { cause: error });
    default:
      return error;
  }
}
