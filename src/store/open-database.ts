import { resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import type { SqlDatabase } from './sql-database.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';
import { SqliteDatabase } from './sqlite/sqlite-database.js';
import { sqliteDialectRules } from './sqlite/sqlite-dialect-rules.js';

export interface OpenedDatabase {
  db: SqlDatabase;
  rules: SqlDialectRules;
  /** What to print about the database: the URL without credentials. */
  description: string;
}

/**
 * Opens the database a `DATABASE_URL` names: `sqlite:./data/restgraph.db`, `sqlite:/abs/path.db`,
 * `sqlite::memory:`, or a bare file path.
 *
 * @throws ConfigError naming DATABASE_URL when the URL is not understood.
 */
export function openDatabase(url: string, options: { onStatement?: (sql: string) => void } = {}): OpenedDatabase {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    throw new ConfigError('DATABASE_URL', 'PostgreSQL support is not available yet in this build; use a sqlite: URL');
  }
  let filename: string;
  if (url.startsWith('sqlite://')) filename = url.slice('sqlite://'.length);
  else if (url.startsWith('sqlite:')) filename = url.slice('sqlite:'.length);
  else if (url.startsWith('file:')) filename = url.slice('file:'.length);
  else if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) filename = url;
  else throw new ConfigError('DATABASE_URL', `unsupported database URL scheme in "${url.split(':')[0] ?? url}"; use sqlite:<file> or postgres://…`);
  if (filename === '') throw new ConfigError('DATABASE_URL', 'the sqlite: URL names no file');
  const path = filename === ':memory:' ? filename : resolve(filename);
  try {
    return { db: new SqliteDatabase({ filename: path, ...options }), rules: sqliteDialectRules, description: `sqlite:${path}` };
  } catch (error) {
    throw new ConfigError('DATABASE_URL', `cannot open SQLite database ${path}: ${(error as Error).message}`);
  }
}
