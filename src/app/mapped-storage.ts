import { existsSync } from 'node:fs';
import { ConfigError, SchemaError } from '../errors.js';
import { checkMappedTables } from '../schema/mapped-table-check.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { databaseTarget, openDatabase, readDatabaseCatalog, type OpenDatabaseOptions, type OpenedDatabase } from '../store/open-database.js';
import { prepareMappedSystemTables } from '../store/mapped-system-tables.js';
import { leaveOwnWritesUncaptured } from '../store/capture/captured-change-store.js';
import { checkedSystemSchema } from '../store/system-schema.js';

/** A mapped database, opened: the database, and what the start-up check has to say (one line at most). */
export interface OpenedMappedDatabase extends OpenedDatabase {
  warnings: string[];
}

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_$]*$/;

/**
 * Opens the database a mapped schema names (docs/existing-database.md) without changing any of
 * its tables: first checks the schema against the catalog (a table or column the schema names
 * that the database lacks refuses the start), then opens it with restgraph's own tables apart
 * (PostgreSQL: in `systemSchema`, first on the connections' search_path; the user's tables are
 * addressed by their schema) and makes or upgrades those.
 *
 * @throws SchemaError naming what the database lacks; ConfigError for a system schema that is not a plain name
 */
export async function openMappedDatabase(url: string, schema: SchemaModel, systemSchema: string, options: OpenDatabaseOptions): Promise<OpenedMappedDatabase> {
  const { file } = databaseTarget(url);
  const onPostgres = file === undefined;
  if (file !== undefined && file !== ':memory:' && !existsSync(file)) {
    throw new ConfigError('-d', `there is no SQLite database at ${file}: a mapped schema serves the database it maps; name it with -d <database-url> (or DATABASE_URL), the one init --from read`);
  }
  const userSchema = schema.mapping?.schema ?? 'public';
  const catalog = await readDatabaseCatalog(url, onPostgres ? { schema: userSchema } : {});
  const { problems, unnamed } = checkMappedTables(schema, catalog);
  if (problems.length > 0) throw new SchemaError(schema.source?.file ?? 'the schema', problems);
  const warnings =
    unnamed.length === 0
      ? []
      : [`${unnamed.length} column(s) of the database are not in the schema and are not served (${unnamed.slice(0, 5).join(', ')}${unnamed.length > 5 ? ', …' : ''}): restgraph init --from <database-url> --update <schema file> adds them`];
  if (!onPostgres) {
    const opened = await openDatabase(url, options);
    await prepareMappedSystemTables(opened.db, undefined);
    // Capture's triggers (restgraph capture enable) leave this process's writes out: they have their events.
    await leaveOwnWritesUncaptured(opened.db);
    return { ...opened, warnings };
  }
  checkedSystemSchema(systemSchema);
  if (!PLAIN_NAME.test(userSchema)) throw new ConfigError('database.schema', `"${userSchema}" is not a plain schema name (letters, digits, _ and $)`);
  const opened = await openDatabase(withSearchPath(url, `${systemSchema},${userSchema}`), options);
  await prepareMappedSystemTables(opened.db, systemSchema);
  return { ...opened, warnings };
}

/** The URL with a connection option setting the search_path (after any options it had: the last setting wins). */
function withSearchPath(url: string, path: string): string {
  const parsed = new URL(url);
  const before = parsed.searchParams.get('options');
  parsed.searchParams.set('options', `${before === null ? '' : `${before} `}-c search_path=${path}`);
  return parsed.toString();
}
