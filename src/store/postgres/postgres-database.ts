import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { ConnectionStats, DynamicTables, SqlDatabase, SqlExecutor, SqlRow, SqlStatement } from '../sql-database.js';
import { TransientStoreError, type ConstraintViolation } from '../store-errors.js';
import { describePostgresViolation } from './postgres-violations.js';
import { explained, translatePostgresError } from './postgres-errors.js';
import { ClosingClient } from './closing-client.js';
import { PostgresSignals } from './postgres-signals.js';
import { int64Value } from '../../schema/mapped-values.js';
import { postgresDialectRules } from './postgres-dialect-rules.js';
import { OutboxGaps } from './outbox-gaps.js';

export interface PostgresDatabaseOptions {
  /** `postgres://user:password@host:port/database?…`, as `pg` reads it. */
  connectionString: string;
  /** Most connections this process opens. @default 10 */
  poolSize?: number;
  /** Called with the text of every statement run (tests count round trips with it; tracing). */
  onStatement?: (sql: string) => void;
  /** Time bounds of its connections and statements; see {@link PostgresTimeouts}. */
  timeouts?: Partial<PostgresTimeouts>;
}

/**
 * How long anything on PostgreSQL may take. Past a bound the operation fails with a
 * {@link TransientStoreError} (`unavailable` or `timeout`), which clients see as a 503.
 */
export interface PostgresTimeouts {
  /** Opening a connection, or waiting for a free one of the pool (`connectionTimeoutMillis`). @default 5000 (ms) */
  connectMs: number;
  /** The server cancels a statement running longer (`statement_timeout`); 0: no limit. @default 0 */
  statementMs: number;
  /** The server ends a session idle inside a transaction for longer (`idle_in_transaction_session_timeout`); 0: no limit. @default 0 */
  idleInTransactionMs: number;
  /**
   * This process stops waiting for a statement's answer after this long (`query_timeout`), even
   * when the server cannot say (network gone); the connection is then dropped. 0: no limit. @default 0
   */
  queryMs: number;
}

const DEFAULT_TIMEOUTS: Readonly<PostgresTimeouts> = Object.freeze({ connectMs: 5000, statementMs: 0, idleInTransactionMs: 0, queryMs: 0 });

/** A setTimeout's longest delay: the client-side query timeout of work that must not be cut short. */
const NO_QUERY_TIMEOUT_MS = 2_147_483_647;

/** Key of the session-level advisory lock that serialises schema changes between instances. */
const DDL_LOCK_KEY = 0x72677367; // "rgsg"

/** OIDs of bigint (int8), date, timestamp and timestamptz. */
const INT8_OID = 20;
const DATE_OIDS = [1082, 1114, 1184];

/**
 * How restgraph reads PostgreSQL's values: bigint columns (ids, integer fields, counts) as JS
 * numbers within ±(2^53−1), and beyond as their digits (the int64 of a mapped database's bigint
 * column, schema/mapped-values.ts: never rounded); dates and timestamps as the text the server
 * writes (a JS Date would lose microseconds, and put a date at the process's local midnight): the
 * dialect's decode turns them into restgraph's form.
 */
export function postgresTypeParsers(): pg.TypeOverrides {
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8_OID, int64Value);
  for (const oid of DATE_OIDS) types.setTypeParser(oid, (text: string) => text);
  return types;
}

/**
 * PostgreSQL through node-postgres: a pool of connections; each transaction holds one connection
 * from BEGIN to COMMIT, and reads outside transactions take any free one.
 */
/** How restgraph's write transactions begin: marked as restgraph's own for the capture triggers. */
const BEGIN_WRITE = "begin; set local restgraph.capture_skip = 'on'";

export class PostgresDatabase implements SqlDatabase {
  readonly rules = postgresDialectRules;
  readonly networked = true;
  readonly builder: Kysely<DynamicTables>;
  readonly signals: PostgresSignals;
  readonly #pool: pg.Pool;
  readonly #onStatement: ((sql: string) => void) | undefined;
  /** Names of the prepared statements (texts marked reusable: a fixed set per schema). */
  readonly #statementNames = new Map<string, string>();
  /** Set while work of {@link exclusively} runs: nested calls run inside it instead of waiting for themselves. */
  readonly #holdingLock = new AsyncLocalStorage<true>();
  /**
   * Calls of {@link exclusively} under way. When none is, #holdingLock is disabled: an enabled
   * AsyncLocalStorage makes Node track every promise the process creates from then on (hooks on
   * each one, a few per cent of the CPU of a busy server), for a schema change done at start-up.
   */
  #exclusiveRuns = 0;
  /** Exclusive work under way (schema changes): its statements run without time bounds. */
  #unbounded = 0;

  constructor(options: PostgresDatabaseOptions) {
    this.#onStatement = options.onStatement;
    const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.#pool = new pg.Pool({
      Client: ClosingClient,
      connectionString: options.connectionString,
      // Two at least: exclusively() holds one connection while its work runs on another.
      max: Math.max(2, options.poolSize ?? 10),
      types: postgresTypeParsers(),
      connectionTimeoutMillis: timeouts.connectMs,
      // A server gone without a word (a network partition) is noticed by TCP keepalive.
      keepAlive: true,
      ...(timeouts.statementMs > 0 ? { statement_timeout: timeouts.statementMs } : {}),
      ...(timeouts.idleInTransactionMs > 0 ? { idle_in_transaction_session_timeout: timeouts.idleInTransactionMs } : {}),
      ...(timeouts.queryMs > 0 ? { query_timeout: timeouts.queryMs } : {}),
    });
    this.signals = new PostgresSignals(options.connectionString, timeouts.connectMs);
    // An idle connection that fails (server restart) is dropped by the pool; the next query reconnects.
    this.#pool.on('error', () => undefined);
    // A connection that fails while taken from the pool (its backend terminated between two
    // statements of a transaction) emits 'error' too, and the pool listens only to idle ones: with
    // no listener that would be an uncaught exception. The failure reaches the connection's next
    // statement anyway ("not queryable"), which drops it.
    this.#pool.on('connect', (client) => client.on('error', () => undefined));
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
    // Schema changes may take long on big tables: exclusive work is not cut short.
    // restgraph's changes have their events already: the capture triggers of a mapped database
    // (capture-triggers.ts) leave them out. Sent with BEGIN, in its round trip.
    return this.#inTransaction(this.#unbounded > 0 ? `${BEGIN_WRITE}; set local statement_timeout = 0` : BEGIN_WRITE, work);
  }

  async snapshot<T>(work: (reader: SqlExecutor) => Promise<T>): Promise<T> {
    return this.#inTransaction('begin isolation level repeatable read read only; set local statement_timeout = 0', work);
  }

  async #inTransaction<T>(begin: string, work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.#connect();
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
      await this.#query(client, { sql: begin, parameters: [] });
      try {
        const result = await work(tx);
        await this.#query(client, { sql: 'commit', parameters: [] });
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

  async describeViolation(violation: ConstraintViolation): Promise<ConstraintViolation> {
    return describePostgresViolation(this, violation);
  }

  async exec(script: string): Promise<void> {
    // The simple query protocol runs a script of several statements.
    await this.#pooled({ sql: script, parameters: [] });
  }

  /**
   * Holds a session advisory lock on a connection of its own while `work` runs on the others.
   * Where the database has no advisory locks (CockroachDB), `work` runs without one: start one
   * instance first there (docs/scaling.md). A call from inside such work runs at once (the lock is
   * held, by another connection: waiting for it would wait forever).
   */
  async exclusively<T>(work: () => Promise<T>): Promise<T> {
    if (this.#holdingLock.getStore() === true) return work();
    const client = await this.#connect();
    this.#unbounded++;
    let broken: Error | undefined;
    try {
      // Waiting for another instance's schema change is not cut short either (the setting is reset
      // before the connection goes back to the pool).
      const locked = await client.query(unboundedQuery({ sql: 'set statement_timeout = 0', parameters: [] })).then(
        () => client.query(unboundedQuery({ sql: 'select pg_advisory_lock($1)', parameters: [DDL_LOCK_KEY] })).then(() => true),
        () => false,
      ).catch(() => false);
      this.#exclusiveRuns++;
      try {
        return await this.#holdingLock.run(true, work);
      } finally {
        if (--this.#exclusiveRuns === 0) this.#holdingLock.disable();
        if (locked) await client.query('select pg_advisory_unlock($1)', [DDL_LOCK_KEY]);
        await client.query('reset statement_timeout').catch((error: unknown) => {
          broken = error instanceof Error ? error : new Error(String(error));
        });
      }
    } finally {
      this.#unbounded--;
      client.release(broken);
    }
  }

  /** Transactions commit side by side, so outbox ids may become visible out of order: see OutboxGaps. */
  commitOrderGuard(): OutboxGaps {
    return new OutboxGaps(this);
  }

  async ping(): Promise<void> {
    await this.#pooled({ sql: 'select 1', parameters: [] });
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
    const client = await this.#connect();
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

  /** A connection of the pool; any failure to get one (refused, timed out, the database not accepting connections) means the database is out of reach. */
  async #connect(): Promise<pg.PoolClient> {
    try {
      return await this.#pool.connect();
    } catch (error) {
      throw new TransientStoreError('no connection to the database could be made', { cause: explained(error), reason: 'unavailable' });
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
    if (this.#unbounded > 0) return on.query<SqlRow>(unboundedQuery(statement));
    // Reusable texts go as named prepared statements: each connection parses and plans them once.
    if (statement.reuse === true) return on.query<SqlRow>({ name: this.#nameOf(statement.sql), text: statement.sql, values: statement.parameters as unknown[] });
    return on.query<SqlRow>(statement.sql, statement.parameters as unknown[]);
  }
}

/** A statement of exclusive work: node-postgres reads `query_timeout` from a query's config too (its types omit it). */
function unboundedQuery(statement: SqlStatement): pg.QueryConfig {
  const config: pg.QueryConfig & { query_timeout: number } = { text: statement.sql, values: statement.parameters as unknown[], query_timeout: NO_QUERY_TIMEOUT_MS };
  return config;
}
