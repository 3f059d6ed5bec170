import BetterSqlite3 from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { testPostgresUrl } from '../../scripts/postgres-test-database.mjs';
import { postgresTypeParsers } from '../../src/store/postgres/postgres-database.js';

/**
 * Which database the behavioural suite runs on: SQLite unless RESTGRAPH_TEST_DB=postgres
 * (`npm test` runs the suite once on each; see scripts/test-postgres.mjs).
 */
export const TEST_DIALECT: 'sqlite' | 'postgres' = process.env.RESTGRAPH_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

/**
 * The PostgreSQL database the suite makes its schemas in: RESTGRAPH_TEST_POSTGRES_URL, by default
 * postgres://postgres@127.0.0.1:5432/test (checked before the suite runs there: test/global-setup.ts).
 */
export const TEST_POSTGRES_URL = testPostgresUrl();

/** Runs SQL text (one or several statements) on the suite's PostgreSQL database, on a connection of its own. */
export async function runOnTestPostgres(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** For tests of SQLite-only behaviour (files, paths): they run in the SQLite pass only. */
export const onlyOnSqlite = TEST_DIALECT !== 'sqlite';

/**
 * True in the PostgreSQL pass. A test that does not use the suite's database (it names SQLite
 * files of its own, or a database of each kind) runs exactly the same in both passes: it skips
 * itself in this one, `it.skipIf(ranInSqlitePass)`, as it ran in the SQLite pass already. (A file
 * none of whose modules reads RESTGRAPH_TEST_DB is left out of the PostgreSQL pass altogether:
 * scripts/database-independent-tests.mjs.)
 */
export const ranInSqlitePass = TEST_DIALECT !== 'sqlite';

/**
 * One empty database for a test, on the suite's database: a SQLite file in `dir`, or a schema of
 * its own in the PostgreSQL test database (selected through the URL's search_path). `query` and
 * `run` take SQL with `?` placeholders and double-quoted identifiers, which both databases read.
 */
export interface TestDatabase {
  readonly dialect: 'sqlite' | 'postgres';
  /** DATABASE_URL of this database. */
  readonly url: string;
  /** The SQLite file (SQLite only). */
  readonly file: string | undefined;
  query<T = Record<string, unknown>>(sql: string, parameters?: readonly unknown[]): Promise<T[]>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, parameters?: readonly unknown[]): Promise<number>;
  /** Names of the tables, sorted. */
  tables(): Promise<string[]>;
  /** Names of a table's indexes that restgraph made (rg_…), sorted. */
  indexes(table: string): Promise<string[]>;
  /** Names of a table's columns, in order. */
  columns(table: string): Promise<string[]>;
  /** Drops the database (PostgreSQL: its schema); SQLite files go with their folder. */
  drop(): Promise<void>;
}

export async function createTestDatabase(dir: string, name = 'test'): Promise<TestDatabase> {
  return createDatabaseOf(TEST_DIALECT, dir, name);
}

/** One empty database of the kind named, whichever the suite runs on (tests of moves between the two). */
export async function createDatabaseOf(dialect: 'sqlite' | 'postgres', dir: string, name = 'test'): Promise<TestDatabase> {
  return dialect === 'postgres' ? postgresTestDatabase() : sqliteTestDatabase(join(dir, `${name}.db`));
}

function sqliteTestDatabase(file: string): TestDatabase {
  const withDb = <T>(work: (db: BetterSqlite3.Database) => T): T => {
    const db = new BetterSqlite3(file, { timeout: 5000 });
    try {
      return work(db);
    } finally {
      db.close();
    }
  };
  const query = <T>(sql: string, parameters: readonly unknown[] = []): Promise<T[]> =>
    Promise.resolve(withDb((db) => db.prepare(sql).all(...parameters) as T[]));
  return {
    dialect: 'sqlite',
    url: `sqlite:${file}`,
    file,
    query,
    run: (sql, parameters = []) => Promise.resolve(withDb((db) => db.prepare(sql).run(...parameters).changes)),
    tables: async () =>
      (await query<{ name: string }>("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")).map((r) => r.name),
    indexes: async (table) =>
      (await query<{ name: string }>("select name from sqlite_master where type = 'index' and tbl_name = ? and name like 'rg_%' order by name", [table])).map((r) => r.name),
    columns: async (table) => (await query<{ name: string }>('select name from pragma_table_info(?) order by cid', [table])).map((r) => r.name),
    drop: () => Promise.resolve(),
  };
}

async function postgresTestDatabase(): Promise<TestDatabase> {
  const schema = `rg_t_${process.pid}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`create schema "${schema}"`);
  } finally {
    await admin.end();
  }
  const separator = TEST_POSTGRES_URL.includes('?') ? '&' : '?';
  const url = `${TEST_POSTGRES_URL}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  let pool: pg.Pool | undefined;
  // `?` placeholders become PostgreSQL's $1, $2, …
  const execute = async (sql: string, parameters: readonly unknown[]): Promise<pg.QueryResult> => {
    pool ??= new pg.Pool({ connectionString: url, max: 2, types: postgresTypeParsers() });
    let n = 0;
    return pool.query(sql.replace(/\?/g, () => `$${++n}`), [...parameters]);
  };
  const query = async <T>(sql: string, parameters: readonly unknown[] = []): Promise<T[]> => (await execute(sql, parameters)).rows as T[];
  return {
    dialect: 'postgres',
    url,
    file: undefined,
    query,
    run: async (sql, parameters = []) => (await execute(sql, parameters)).rowCount ?? 0,
    tables: async () =>
      (await query<{ name: string }>('select table_name as name from information_schema.tables where table_schema = ? order by table_name', [schema])).map((r) => r.name),
    indexes: async (table) =>
      (await query<{ name: string }>("select indexname as name from pg_indexes where schemaname = ? and tablename = ? and indexname like 'rg\\_%' order by indexname", [schema, table])).map(
        (r) => r.name,
      ),
    columns: async (table) =>
      (await query<{ name: string }>('select column_name as name from information_schema.columns where table_schema = ? and table_name = ? order by ordinal_position', [schema, table])).map(
        (r) => r.name,
      ),
    drop: async () => {
      await pool?.end();
      pool = undefined;
      await dropSchema(schema);
    },
  };
}

/** How often a schema's drop is tried when it deadlocks or waits too long for a lock. */
const DROP_ATTEMPTS = 5;

/**
 * Drops a test's schema and everything in it. `drop schema … cascade` locks each of the schema's
 * tables in turn; a transaction still running there — the server side of a connection whose
 * process a test killed, which runs until it next talks to its client — can hold one table while
 * it waits for another the drop already holds: PostgreSQL ends one of the two with
 * deadlock_detected (40P01). The drop then tries again after a pause, and never waits more than
 * 2 s for a lock (lock_timeout, 55P03) at a time; before it tries again it ends the sessions that
 * still hold locks in the schema (the test is over: they are leftovers).
 */
async function dropSchema(schema: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    try {
      await client.query("set lock_timeout = '2s'");
      if (attempt > 1) {
        await client.query(
          `select pg_terminate_backend(l.pid) from pg_locks l join pg_class c on c.oid = l.relation join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = $1 and l.pid <> pg_backend_pid() group by l.pid`,
          [schema],
        );
      }
      await client.query(`drop schema if exists "${schema}" cascade`);
      return;
    } catch (error) {
      const code = error instanceof Error && 'code' in error ? error.code : undefined;
      if (attempt >= DROP_ATTEMPTS || (code !== '40P01' && code !== '55P03')) throw error;
    } finally {
      await client.end();
    }
    await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt * (0.5 + Math.random())));
  }
}

/** Inserts an API key row directly (as the store would), for states the API refuses to create. */
export async function insertApiKeyRow(
  db: TestDatabase,
  key: string,
  fields: { scopes: string[]; subject?: string; expiresAt?: string; revokedAt?: string },
): Promise<void> {
  await db.run(
    'insert into "_restgraph_api_keys" ("name", "prefix", "hash", "scopes", "subject", "createdAt", "expiresAt", "revokedAt") values (?, ?, ?, ?, ?, ?, ?, ?)',
    [
      'inserted',
      key.slice(0, 11),
      createHash('sha256').update(key).digest('hex'),
      fields.scopes.join(' '),
      fields.subject ?? null,
      new Date(Date.now() - 7_200_000).toISOString(),
      fields.expiresAt ?? null,
      fields.revokedAt ?? null,
    ],
  );
}
