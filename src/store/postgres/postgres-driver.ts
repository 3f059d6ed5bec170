import { ConfigError } from '../../errors.js';
import type { DatabaseTarget } from '../database-driver.js';
import { DATABASE_URL_FORMS, withoutCredentials } from '../database-url.js';
import type { PostgresTimeouts } from './postgres-database.js';

export interface PostgresOpenOptions {
  onStatement?: ((sql: string) => void) | undefined;
  poolSize?: number | undefined;
  timeouts?: Partial<PostgresTimeouts> | undefined;
}

/**
 * A `postgres://` or `postgresql://` URL's database (undefined for any other URL).
 *
 * @throws ConfigError naming DATABASE_URL when the URL is malformed or names no database, or is
 *   `postgres:` without its two slashes (never read as a file name).
 */
export function postgresTarget(url: string): DatabaseTarget<PostgresOpenOptions> | undefined {
  const scheme = /^(postgres(?:ql)?:)(?!\/\/)/i.exec(url)?.[1];
  if (scheme !== undefined) throw new ConfigError('DATABASE_URL', `"${scheme}" must be followed by two slashes: postgres://user:password@host:port/database (a database URL is ${DATABASE_URL_FORMS})`);
  if (!url.startsWith('postgres://') && !url.startsWith('postgresql://')) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('DATABASE_URL', 'the postgres:// URL is not a valid URL');
  }
  if (parsed.pathname.length <= 1) throw new ConfigError('DATABASE_URL', 'the postgres:// URL names no database (postgres://host:5432/<database>)');
  return {
    description: withoutCredentials(url),
    async open(options) {
      const { PostgresDatabase } = await import('./postgres-database.js');
      return new PostgresDatabase({
        connectionString: url,
        ...(options.onStatement === undefined ? {} : { onStatement: options.onStatement }),
        ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
        ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
      });
    },
  };
}
