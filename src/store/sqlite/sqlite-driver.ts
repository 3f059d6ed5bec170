import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError, DatabaseNotFoundError } from '../../errors.js';
import type { DatabaseTarget } from '../database-driver.js';
import { isDataFolder } from '../database-url.js';
import type { SqliteSynchronous } from './sqlite-connection.js';

export interface SqliteOpenOptions {
  onStatement?: ((sql: string) => void) | undefined;
  /** How long a write waits for another process's write lock, and the durability of commits. */
  settings?: { lockTimeoutMs?: number; synchronous?: SqliteSynchronous } | undefined;
  /** Only open a file that exists (nor create its folder). */
  existing?: boolean | undefined;
}

/**
 * The SQLite file a URL names: `sqlite:<file>`, `sqlite://<file>`, `sqlite::memory:`, or a bare
 * path; undefined for anything that begins like a scheme (`word:`), which is never taken for a file
 * name: a mistyped `postgres:/…` or an unknown scheme must not become a new database.
 *
 * @throws ConfigError naming DATABASE_URL when the URL names no file.
 */
export function sqliteTarget(url: string): DatabaseTarget<SqliteOpenOptions> | undefined {
  let filename: string;
  if (url.startsWith('sqlite://')) filename = url.slice('sqlite://'.length);
  else if (url.startsWith('sqlite:')) filename = url.slice('sqlite:'.length);
  else if (!/^[a-z][a-z0-9+.-]*:/i.test(url) || (process.platform === 'win32' && /^[a-z]:[\\/]/i.test(url))) filename = url;
  else return undefined;
  if (filename === '') throw new ConfigError('DATABASE_URL', 'the sqlite: URL names no file');
  const path = filename === ':memory:' ? filename : resolve(filename);
  return {
    description: `sqlite:${path}`,
    file: path,
    async open(options) {
      if (options.existing === true && path !== ':memory:' && !existsSync(path)) {
        throw new DatabaseNotFoundError(`There is no SQLite database at ${path} (only \`restgraph serve\` and \`restgraph migrate\` create one).`);
      }
      const folder = dirname(path);
      if (path !== ':memory:' && !existsSync(folder) && !isDataFolder(folder)) {
        throw new ConfigError('DATABASE_URL', `the folder ${folder} does not exist (create it first: only restgraph's own ./data is created)`);
      }
      const { SqliteDatabase } = await import('./sqlite-database.js');
      try {
        return new SqliteDatabase({ filename: path, ...options.settings, ...(options.onStatement === undefined ? {} : { onStatement: options.onStatement }) });
      } catch (error) {
        throw new ConfigError('DATABASE_URL', `cannot open SQLite database ${path}: ${(error as Error).message}`);
      }
    },
  };
}
