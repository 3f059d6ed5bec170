import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, DatabaseNotFoundError } from '../errors.js';
import type { SqlDatabase } from './sql-database.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';
import type { PostgresTimeouts } from './postgres/postgres-database.js';
import type { SqliteSynchronous } from './sqlite/sqlite-database.js';

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
 * `sqlite::memory:`, a bare file path, or `postgres://user:password@host:port/database`.
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

/** What a `DATABASE_URL` names, and how to print it (without credentials). */
export type DatabaseTarget = { kind: 'sqlite'; path: string; description: string } | { kind: 'postgres'; description: string };

/**
 * Reads a `DATABASE_URL` without opening anything.
 *
 * @throws ConfigError naming DATABASE_URL when the URL is not understood.
 */
export function databaseTarget(url: string): DatabaseTarget {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError('DATABASE_URL', 'the postgres:// URL is not a valid URL');
    }
    if (parsed.pathname.length <= 1) throw new ConfigError('DATABASE_URL', 'the postgres:// URL names no database (postgres://host:5432/<database>)');
    parsed.password = '';
    return { kind: 'postgres', description: parsed.toString().replace(/^(postgres(?:ql)?:\/\/)[^@/]*@/, '$1') };
  }
  let filename: string;
  if (url.startsWith('sqlite://')) filename = url.slice('sqlite://'.length);
  else if (url.startsWith('sqlite:')) filename = url.slice('sqlite:'.length);
  else if (url.startsWith('file:')) filename = url.slice('file:'.length);
  else if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) filename = url;
  else throw new ConfigError('DATABASE_URL', `unsupported database URL scheme in "${url.split(':')[0] ?? url}"; use sqlite:<file> or postgres://…`);
  if (filename === '') throw new ConfigError('DATABASE_URL', 'the sqlite: URL names no file');
  const path = filename === ':memory:' ? filename : resolve(filename);
  return { kind: 'sqlite', path, description: `sqlite:${path}` };
}

async function openByUrl(url: string, options: OpenDatabaseOptions): Promise<OpenedDatabase> {
  const target = databaseTarget(url);
  if (target.kind === 'postgres') {
    const [{ PostgresDatabase }, { postgresDialectRules }] = await Promise.all([import('./postgres/postgres-database.js'), import('./postgres/postgres-dialect-rules.js')]);
    const db = new PostgresDatabase({
      connectionString: url,
      ...(options.onStatement === undefined ? {} : { onStatement: options.onStatement }),
      ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
      ...(options.postgres === undefined ? {} : { timeouts: options.postgres }),
    });
    return { db, rules: postgresDialectRules, description: target.description };
  }
  const { path, description } = target;
  if (options.existing === true && path !== ':memory:' && !existsSync(path)) {
    throw new DatabaseNotFoundError(`There is no SQLite database at ${path} (only \`restgraph serve\` and \`restgraph migrate\` create one).`);
  }
  const [{ SqliteDatabase }, { sqliteDialectRules }] = await Promise.all([import('./sqlite/sqlite-database.js'), import('./sqlite/sqlite-dialect-rules.js')]);
  try {
    const db = new SqliteDatabase({ filename: path, ...options.sqlite, ...(options.onStatement === undefined ? {} : { onStatement: options.onStatement }) });
    return { db, rules: sqliteDialectRules, description };
  } catch (error) {
    throw new ConfigError('DATABASE_URL', `cannot open SQLite database ${path}: ${(error as Error).message}`);
  }
}
