import BetterSqlite3 from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { testDatabaseProblem } from '../../scripts/postgres-test-database.mjs';
import { TEST_POSTGRES_URL } from '../../test/helpers/test-database.js';

/**
 * A database of a scenario's own, read directly to check what the server stored: a SQLite file,
 * or a PostgreSQL database created for it (other suites use the `test` database at the same time)
 * and dropped afterwards.
 */
export type ScratchDatabase = SqliteScratch | PostgresScratch;

interface ScratchBase {
  /** DATABASE_URL for the server. */
  readonly url: string;
  /** Runs a query; `?` placeholders on both databases. */
  query<T = Record<string, unknown>>(sql: string, parameters?: readonly unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

export interface SqliteScratch extends ScratchBase {
  readonly dialect: 'sqlite';
  /** The database file (another process may open it, e.g. to hold its write lock). */
  readonly file: string;
}

export interface PostgresScratch extends ScratchBase {
  readonly dialect: 'postgres';
  /**
   * Cuts this database off, and only it (the server's other databases are not disturbed): it
   * refuses new connections (ALTER DATABASE … ALLOW_CONNECTIONS false) and every connection open
   * to it is terminated (pg_terminate_backend). Again while cut off: terminates the connections
   * that were being opened meanwhile.
   */
  refuseConnections(): Promise<void>;
  /** Ends {@link refuseConnections}: the database accepts connections again. */
  allowConnections(): Promise<void>;
}

export function scratchDatabase(dialect: 'sqlite', dir: string): Promise<SqliteScratch>;
export function scratchDatabase(dialect: 'postgres', dir: string): Promise<PostgresScratch>;
export function scratchDatabase(dialect: 'sqlite' | 'postgres', dir: string): Promise<ScratchDatabase>;
export async function scratchDatabase(dialect: 'sqlite' | 'postgres', dir: string): Promise<ScratchDatabase> {
  return dialect === 'sqlite' ? sqliteScratch(join(dir, 'chaos.db')) : postgresScratch();
}

function sqliteScratch(file: string): SqliteScratch {
  return {
    dialect: 'sqlite',
    url: `sqlite:${file}`,
    file,
    query: <T>(sql: string, parameters: readonly unknown[] = []) => {
      const db = new BetterSqlite3(file, { readonly: true, timeout: 5000 });
      try {
        return Promise.resolve(db.prepare(sql).all(...parameters) as T[]);
      } finally {
        db.close();
      }
    },
    drop: () => Promise.resolve(),
  };
}

/** The server of the suite's PostgreSQL database, at its maintenance database. */
function adminUrl(): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = '/postgres';
  url.search = '';
  return url.toString();
}

async function onAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function postgresScratch(): Promise<PostgresScratch> {
  const name = `rg_chaos_${process.pid}_${randomBytes(4).toString('hex')}`;
  await onAdmin((client) => client.query(`create database "${name}"`));
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  url.search = '';
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  // An idle connection that refuseConnections() terminates is dropped (the next query opens
  // another); unheard, the pool's 'error' event would end the process.
  pool.on('error', () => undefined);
  return {
    dialect: 'postgres',
    url: url.toString(),
    query: async <T>(sql: string, parameters: readonly unknown[] = []) => {
      let n = 0;
      return (await pool.query(sql.replace(/\?/g, () => `$${++n}`), [...parameters])).rows as T[];
    },
    refuseConnections: () =>
      onAdmin(async (client) => {
        await client.query(`alter database "${name}" allow_connections false`);
        await client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
      }),
    allowConnections: () => onAdmin((client) => client.query(`alter database "${name}" allow_connections true`)).then(() => undefined),
    drop: async () => {
      await pool.end();
      await onAdmin((client) => client.query(`drop database if exists "${name}" with (force)`));
    },
  };
}

/**
 * Whether the suite's PostgreSQL answers, and is the test server: its test database passes the
 * suite's check (scripts/postgres-test-database.mjs). Scenarios on PostgreSQL fail with this
 * reason when not.
 */
export async function postgresProblem(): Promise<string | undefined> {
  const problem = await testDatabaseProblem(TEST_POSTGRES_URL);
  if (problem !== undefined) return problem.message;
  try {
    await onAdmin((client) => client.query('select 1'));
    return undefined;
  } catch (error) {
    return `PostgreSQL at ${adminUrl().replace(/\/\/[^@/]*@/, '//')} is not reachable: ${error instanceof Error ? error.message : String(error)}`;
  }
}
