import { closeSync, existsSync, openSync, readSync, writeFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { catalogSchema } from '../schema/catalog-schema.js';
import { mappedSchemaText } from '../schema/mapped-schema-text.js';
import { parseSchemaText } from '../schema/load-schema.js';
import { readDatabaseCatalog } from '../store/open-database.js';
import { withoutCredentials } from '../store/database-url.js';

/** `restgraph init --from <database-url>`: docs/existing-database.md. */
export interface InitFromDatabaseFlags {
  from: string;
  output?: string;
  force?: boolean;
  /** PostgreSQL schema (default public). */
  schema?: string;
  /** Comma-separated tables and views (default every one). */
  tables?: string;
}

/** The most tables `--tables` names. */
const MAX_TABLES = 1000;

/** Whether `--from` names a database rather than a db.json: a database URL, or a file that begins as SQLite files do. */
export function namesDatabase(from: string): boolean {
  if (/^(postgres(ql)?|sqlite):/i.test(from)) return true;
  if (!existsSync(from)) return false;
  const header = Buffer.alloc(16);
  let fd: number | undefined;
  try {
    fd = openSync(from, 'r');
    readSync(fd, header, 0, 16, 0);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return header.toString('latin1') === 'SQLite format 3\0';
}

/**
 * Reads the database's catalog and writes a schema file that maps it, with where each resource
 * and field came from in comments. The database is only read. The file written is checked to load
 * before it is written.
 */
export async function runInitFromDatabase(flags: InitFromDatabaseFlags): Promise<void> {
  const output = flags.output ?? 'schema.yaml';
  if (existsSync(output) && flags.force !== true) {
    throw new ConfigError('-o', `${output} exists; restgraph init does not overwrite it. Name another file with -o, or add --force to replace it.`);
  }
  const tables = flags.tables
    ?.split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (tables !== undefined && (tables.length === 0 || tables.length > MAX_TABLES)) throw new ConfigError('--tables', `name from 1 to ${MAX_TABLES} tables, comma-separated`);
  const url = /^(postgres(ql)?|sqlite):/i.test(flags.from) ? flags.from : `sqlite:${flags.from}`;
  const catalog = await readDatabaseCatalog(url, { ...(flags.schema === undefined ? {} : { schema: flags.schema }), ...(tables === undefined ? {} : { tables }) });
  if (catalog.tables.length === 0) throw new ConfigError('--from', `${withoutCredentials(url)} has no table or view${catalog.schema === undefined ? '' : ` in schema ${catalog.schema}`}`);
  const mapped = catalogSchema(catalog);
  const source = `${withoutCredentials(flags.from)}${catalog.schema === undefined ? '' : ` (schema ${catalog.schema})`}`;
  const text = mappedSchemaText(mapped, [
    `Maps the tables of ${source}, as restgraph init --from read them.`,
    'restgraph changes none of these tables: no column, index, trigger or constraint is added (docs/existing-database.md).',
    'The comment above each resource and field says which table or column it maps and what the database says of it.',
  ]);
  // What is written loads: a schema that does not is a defect of this command, said before the file exists.
  parseSchemaText(text, output);
  try {
    writeFileSync(output, text);
  } catch (error) {
    throw new ConfigError('-o', `cannot write ${output} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  for (const warning of mapped.warnings) process.stderr.write(`warning: ${warning}\n`);
  const resources = Object.keys(mapped.definition.resources);
  process.stdout.write(
    `Wrote ${output}: ${resources.length} resource${resources.length === 1 ? '' : 's'} (${resources.join(', ')}) mapping ${source}.\n` +
      'Edit it (access rules, descriptions); serving a mapped database is not in this release yet: restgraph serve refuses it without touching the database.\n',
  );
}
