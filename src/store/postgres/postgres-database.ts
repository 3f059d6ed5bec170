import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { ConnectionStats, DynamicTables, SqlDatabase, SqlExecutor, SqlRow, SqlStatement } from '../sql-database.js';
import { ConstraintViolation, TransientStoreError } from '../store-errors.js';
import { PostgresSignals } from './postgres-signals.js';

export interface PostgresDatabaseOptions {
  /** `postgres://user:password@host:port/database?…`, as `pg` reads it. */
  connectionString: string;
  /** Most connections this process opens. @default 10 */
  poolSize?: number;
  /** Called with the text of every statement run (tests count round trips with it; tracing). */
  onStatement?: (sql: string) => void;
}

/** Key of the session-level advisory lock that serialises schema changes between instances. */
const DDL_LOCK_KEY = 0x72677367; // "rgsg"

/** OID of bigint (int8). */
const INT8_OID = 20;

/**
 * How restgraph reads PostgreSQL's values: bigint columns (ids, integer fields, counts) as JS
 * numbers. restgraph's integers are safe integers (the validator refuses others); a value beyond
 * that range is refused loudly here rather than silently rounded.
 */
export function postgresTypeParsers(): pg.TypeOverrides {
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8_OID, parseSafeInteger);
  return types;
}

function parseSafeInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`bigint value ${text} is beyond JavaScript's safe integers`);
  return value;
}

/**
 * PostgreSQL through node-postgres: a pool of connections; each transaction holds one connection
 * from BEGIN to COMMIT, and reads outside transactions take any free one.
 */
export class PostgresDatabase implements SqlDatabase {
  readonly dialect = 'postgres' as const;
  readonly builder: Kysely<DynamicTables>;
  readonly signals: PostgresSignals;
  readonly #pool: pg.Pool;
  readonly #onStatement: ((sql: string) => void) | undefined;
  /** Names of the prepared statements (texts marked reusable: a fixed set per schema). */
  readonly #statementNames = new Map<string, string>();
  /** Set while work of {@link exclusively} runs: nested calls run inside it instead of waiting for themselves. */
  readonly #holdingLock = new AsyncLocalStorage<true>();

  constructor(options: PostgresDatabaseOptions) {
    this.#onStatement = options.onStatement;
    // Two at least: exclusively() holds one connection while its work runs on another.
    this.#pool = new pg.Pool({ connectionString: options.connectionString, max: Math.max(2, options.poolSize ?? 10), types: postgresTypeParsers() });
    this.signals = new PostgresSignals(options.connectionString);
    // An idle connection that fails (server restart) is dropped by the pool; the next query reconnects.
    this.#pool.on('error', () => undefined);
    this.builder = new Kysely<DynamicTables>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
  }

  async all(statement: SqlStatement): Promise<SqlRow[]> {
    return (await this.#pooled(statement)).rows;
  }

  async one(statement: SqlStatement): Promise<SqlRow | undefined> {
    return (await this.#pooled(statement)).rows[0];
  }

  async run(statement: SqlStatement): Promise<number> {
    return (await this.#pooled(statement)).rowCount ?? 0;
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    let open = true;
    const guard = (): void => {
      if (!open) throw new Error('transaction already finished');
    };
    const tx: SqlExecutor = {
      all: async (statement) => {
        guard();
        return (await this.#query(client, statement)).rows;
      },
      one: async (statement) => {
        guard();
        return (await this.#query(client, statement)).rows[0];
      },
      run: async (statement) => {
        guard();
        return (await this.#query(client, statement)).rowCount ?? 0;
      },
    };
    let broken = false;
    try {
      await client.query('begin');
      try {
        const result = await work(tx);
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => {
          broken = true;
        });
        throw translatePostgresError(error);
      }
    } finally {
      open = false;
      client.release(broken);
    }
  }

  async exec(script: string): Promise<void> {
    this.#onStatement?.(script);
    // The simple query protocol runs a script of several statements.
    await this.#pool.query(script);
  }

  /**
   * Holds a session advisory lock on a connection of its own while `work` runs on the others.
   * Where the database has no advisory locks (CockroachDB), `work` runs without one: start one
   * instance first there (docs/scaling.md). A call from inside such work runs at once (the lock is
   * held, by another connection: waiting for it would wait forever).
   */
  async exclusively<T>(work: () => Promise<T>): Promise<T> {
    if (this.#holdingLock.getStore() === true) return work();
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw translatePostgresError(error);
    }
    try {
      const locked = await client.query('select pg_advisory_lock($1)', [DDL_LOCK_KEY]).then(
        () => true,
        () => false,
      );
      try {
        return await this.#holdingLock.run(true, work);
      } finally {
        if (locked) await client.query('select pg_advisory_unlock($1)', [DDL_LOCK_KEY]);
      }
    } finally {
      client.release();
    }
  }

  async ping(): Promise<void> {
    await this.#pool.query('select 1');
  }

  /** The pool's figures (the LISTEN connection of {@link PostgresSignals} is not in it). */
  connectionStats(): ConnectionStats {
    const pool = this.#pool;
    return { open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max };
  }

  async close(): Promise<void> {
    await this.signals.close();
    await this.#pool.end();
  }

  /** A prepared statement's name: derived from its text, so every connection and instance agrees. */
  #nameOf(sql: string): string {
    let name = this.#statementNames.get(sql);
    if (name === undefined) {
      name = `rg_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
      this.#statementNames.set(sql, name);
    }
    return name;
  }

  /**
   * One statement on a connection of the pool, autocommitted. (The pool's own query() drops the
   * connection after any error: a unique conflict would cost a new connection, and every statement
   * prepared on the old one.) A connection is dropped only when the error is not the server's
   * answer to the statement; one the server closes is dropped by the pool anyway.
   */
  async #pooled(statement: SqlStatement): Promise<pg.QueryResult<SqlRow>> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw translatePostgresError(error);
    }
    let broken: Error | undefined;
    try {
      return await this.#send(client, statement);
    } catch (error) {
      if (!(error instanceof pg.DatabaseError)) broken = error instanceof Error ? error : new Error(String(error));
      throw translatePostgresError(error);
    } finally {
      client.release(broken);
    }
  }

  async #query(on: pg.PoolClient, statement: SqlStatement): Promise<pg.QueryResult<SqlRow>> {
    try {
      return await this.#send(on, statement);
    } catch (error) {
      throw translatePostgresError(error);
    }
  }

  /** Sends a statement; errors as node-postgres raises them. */
  #send(on: pg.PoolClient, statement: SqlStatement): Promise<pg.QueryResult<SqlRow>> {
    this.#onStatement?.(statement.sql);
    // Reusable texts go as named prepared statements: each connection parses and plans them once.
    if (statement.reuse === true) return on.query<SqlRow>({ name: this.#nameOf(statement.sql), text: statement.sql, values: statement.parameters as unknown[] });
    return on.query<SqlRow>(statement.sql, statement.parameters as unknown[]);
  }
}

/**
 * SQLSTATEs and socket errors after which the same request may well succeed: serialization
 * failure, deadlock, lock timeout, too many connections, the server starting or shutting down, and
 * connections refused or cut.
 */
const TRANSIENT = new Set(['40001', '40P01', '55P03', '53300', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);

/** Turns PostgreSQL's constraint errors into {@link ConstraintViolation} and passing troubles into {@link TransientStoreError}; anything else passes through. */
function translatePostgresError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TRANSIENT.has(code)) {
    return new TransientStoreError(`the database could not complete the request now (${code})`, { cause: error });
  }
  if (!(error instanceof pg.DatabaseError)) return error;
  // "Key (email)=(a@example.com) already exists." / "Key (a, b)=(…) …"
  const columns = (/^Key \(([^)]*)\)=/.exec(error.detail ?? '')?.[1] ?? error.column ?? '')
    .split(',')
    .map((c) => c.trim().replace(/^"|"$/g, ''))
    .filter((c) => c !== '');
  switch (error.code) {
    case '23505':
      return new ConstraintViolation('unique', columns, { cause: error });
    case '23503':
      return new ConstraintViolation('foreignKey', columns, { cause: error });
    case '23502':
      return new ConstraintViolation('notNull', columns, { cause: error });
    case '23514':
      return new ConstraintViolation('check', columns, { cause: error });
    default:
      return error;
  }
}
