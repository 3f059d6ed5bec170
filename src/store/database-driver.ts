import type { SqlDatabase } from './sql-database.js';

/**
 * What a `DATABASE_URL` names, before anything is opened, and how to open it. Each dialect folder
 * reads the URLs that are its own (postgres/postgres-driver.ts, sqlite/sqlite-driver.ts); those
 * modules are small, and load their database's driver only when it opens.
 */
export interface DatabaseTarget<Options> {
  /** What to print about the database: the URL without credentials. */
  readonly description: string;
  /** The database file, for a database that is a file of this machine (absolute, or `:memory:`). */
  readonly file?: string;
  /** Opens it (not yet checked to answer). @throws ConfigError, DatabaseNotFoundError */
  open(options: Options): Promise<SqlDatabase>;
}
