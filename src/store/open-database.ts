import { resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import type { SqlDatabase } from './sql-database.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';
// Types only: the PostgreSQL driver (pg and its protocol modules) is loaded when a postgres:// URL
// is opened, so a SQLite server or CLI call does not pay for it at start-up.
import type { PostgresTimeouts } from './postgres/postgres-database.js';
import { SqliteDatabase, type SqliteSynchronous } from './sqlite/sqlite-database.js';
import { sqliteDialectRules } from './sqlite/sqlite-dialect-rules.js';

export interface OpenedDatabase {
  db: SqlDatabase;
  rules: SqlDialectRules;
  /** What to print about the database: the URL without credentials. */
  description: string;
}

/** How to open the database: for instrumentation, and the settings of each kind. */
export interface OpenDatabaseOptions {
  /** Called with the text of every statement run. */
  onStatement?: (sql: string) => void;
  /** PostgreSQL: most connections. @default 10 */
  poolSize?: number;
  /** PostgreSQL: time bounds (see PostgresTimeouts). */
  postgres?: Partial<PostgresTimeouts>;
  /** SQLite: how long a write waits for another process's write lock, and the durability of commits. */
  sqlite?: { lockTimeoutMs?: number; synchronous?: SqliteSynchronous };
}

/**
 * Opens the database a `DATABASE_URL` names: `sqlite:./data/restgraph.db`, `sqlite:/abs/path.db`,
 * `sqlite::memory:`, a bare file path, or `postgres://user:password@host:port/database`.
 *
 * Resolves once the database answers.
 *
 * @throws ConfigError naming DATABASE_URL when the URL is not understood or the database cannot be reached.
 */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<OpenedDatabase> {
  const opened = await openByUrl(url, options);
  try {
    await opened.db.ping();
  } catch (error) {
    await opened.db.close().catch(() => undefined);
    const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    throw new ConfigError('DATABASE_URL', `cannot reach the database ${opened.description}: ${reason}`);
  }
  return opened;
}

async function openByUrl(url: string, options: OpenDatabaseOptions): Promise<OpenedDatabase> {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, options);
  let filename: string;
  if (url.startsWith('sqlite://')) filename = url.slice('sqlite://'.length);
  else if (url.startsWith('sqlite:')) filename = url.slice('sqlite:'.length);
  else if (url.startsWith('file:')) filename = url.slice('file:'.length);
  else if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) filename = url;
  else throw new ConfigError('DATABASE_URL', `unsupported database URL scheme in "${url.split(':')[0] ?? url}"; use sqlite:<file> or postgres://…`);
  if (filename === '') throw new ConfigError('DATABASE_URL', 'the sqlite: URL names no file');
  const path = filename === ':memory:' ? filename : resolve(filename);
  try {
    const db = new SqliteDatabase({ filename: path, ...options.sqlite, ...(options.onStatement === undefined ? {} : { onStatement: options.onStatement }) });
    return { db, rules: sqliteDialectRules, description: `sqlite:${path}` };
  } catch (error) {
    throw new ConfigError('DATABASE_URL', `cannot open SQLite database ${path}: ${(error as Error).message}`);
  }
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<OpenedDatabase> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('DATABASE_URL', 'the postgres:// URL is not a valid URL');
  }
  if (parsed.pathname.length <= 1) throw new ConfigError('DATABASE_URL', 'the postgres:// URL names no database (postgres://host:5432/<database>)');
  parsed.password = '';
  const description = parsed.toString().replace(/^(postgres(?:ql)?:\/\/)[^@/]*@/, '$1');
  const [{ PostgresDatabase }, { postgresDialectRules }] = await Promise.all([import('./postgres/postgres-database.js'), import('./postgres/postgres-dialect-rules.js')]);
  const db = new PostgresDatabase({
    connectionString: url,
    ...(options.onStatement === undefined ? {} : { onStatement: options.onStatement }),
    ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
    ...(options.postgres === undefined ? {} : { timeouts: options.postgres }),
  });
  return { db, rules: postgresDialectRules, description };
}
