import { ConfigError } from '../errors.js';
import type { DatabaseTarget } from './database-driver.js';
import { DATABASE_URL_FORMS } from './database-url.js';
import { postgresTarget, type PostgresOpenOptions } from './postgres/postgres-driver.js';
import { sqliteTarget, type SqliteOpenOptions } from './sqlite/sqlite-driver.js';
import type { SqlDatabase } from './sql-database.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';
import type { PostgresTimeouts } from './postgres/postgres-database.js';
import type { SqliteSynchronous } from './sqlite/sqlite-database.js';
import type { CatalogSelection, DatabaseCatalog } from '../schema/database-catalog.js';

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
  /**
   * Only open a database that exists: a SQLite file that is not there is not created (nor its
   * folder). For the commands that must not create one (the token commands). @default false
   */
  existing?: boolean;
}

/**
 * Opens the database a `DATABASE_URL` names: `sqlite:./data/restgraph.db`, `sqlite:/abs/path.db`,
 * `sqlite::memory:`, a bare file path, or `postgres://user:password@host:port/database`. A SQLite
 * file is created when missing, in a folder that exists (or restgraph's own ./data).
 *
 * Resolves once the database answers. Loads the driver of the database's kind only (each takes
 * time to load).
 *
 * @throws ConfigError naming DATABASE_URL when the URL is not understood or the database cannot be reached.
 * @throws DatabaseNotFoundError with `existing`, when the SQLite file does not exist.
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

/**
 * Reads the tables and views of the database a URL names (`restgraph init --from`), without
 * writing to it: PostgreSQL in a read-only transaction, a SQLite file opened read-only (a file
 * that is not there is not created).
 *
 * @throws ConfigError naming `--from`, `--schema` or `--tables`.
 */
export async function readDatabaseCatalog(url: string, selection: CatalogSelection): Promise<DatabaseCatalog> {
  const target = targetOf(url);
  if (target.file === undefined) {
    const { readPostgresCatalog } = await import('./postgres/postgres-catalog.js');
    return readPostgresCatalog(url, target.description, selection);
  }
  const { readSqliteCatalog } = await import('./sqlite/sqlite-catalog.js');
  return readSqliteCatalog(target.file, selection);
}

/**
 * Reads a `DATABASE_URL` without opening anything: what to print about it, and its file when it
 * is a database file.
 *
 * @throws ConfigError naming DATABASE_URL when the URL is not understood.
 */
export function databaseTarget(url: string): { description: string; file?: string } {
  const { description, file } = targetOf(url);
  return file === undefined ? { description } : { description, file };
}

/** The dialect folder whose URLs these are: each reads its own (postgres first; SQLite takes bare paths). */
function targetOf(url: string): DatabaseTarget<PostgresOpenOptions> | DatabaseTarget<SqliteOpenOptions> {
  const target = postgresTarget(url) ?? sqliteTarget(url);
  if (target === undefined) throw new ConfigError('DATABASE_URL', `unsupported database URL scheme "${url.split(':')[0] ?? ''}:"; a database URL is ${DATABASE_URL_FORMS} (a file whose name has a colon: sqlite:<file> or ./<file>)`);
  return target;
}

async function openByUrl(url: string, options: OpenDatabaseOptions): Promise<OpenedDatabase> {
  const target = targetOf(url);
  // Each target takes the settings of its kind; the others' are ignored.
  const db = await target.open({
    onStatement: options.onStatement,
    poolSize: options.poolSize,
    timeouts: options.postgres,
    settings: options.sqlite,
    existing: options.existing,
  });
  return { db, rules: db.rules, description: target.description };
}
