import { closeSync, existsSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { catalogSchema } from '../schema/catalog-schema.js';
import { mappedSchemaText } from '../schema/mapped-schema-text.js';
import { updateMappedSchemaText } from '../schema/mapped-schema-update.js';
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
  /** A schema file written by an earlier `init --from` and edited since: what the database has and it lacks is added. */
  update?: string;
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
  const output = flags.output ?? flags.update ?? 'schema.yaml';
  if (existsSync(output) && flags.force !== true && output !== flags.update) {
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
  if (flags.update !== undefined) {
    updateFile(flags.update, output, mapped, source);
    return;
  }
  const text = mappedSchemaText(mapped, [
    `Maps the tables of ${source}, as restgraph init --from read them.`,
    'restgraph changes none of these tables: no column, index, trigger or constraint is added (docs/existing-database.md).',
    'The comment above each resource and field says which table or column it maps and what the database says of it.',
  ]);
  // What is written loads: a schema that does not is a defect of this command, said before the file exists.
  parseSchemaText(text, output);
  write(output, text);
  for (const warning of mapped.warnings) process.stderr.write(`warning: ${warning}\n`);
  const resources = Object.keys(mapped.definition.resources);
  process.stdout.write(
    `Wrote ${output}: ${resources.length} resource${resources.length === 1 ? '' : 's'} (${resources.join(', ')}) mapping ${source}.\n` +
      `Edit it (access rules, descriptions), then serve it; serving changes none of its tables:\n  restgraph serve ${output} -d ${servedUrl(flags.from)}\n`,
  );
}

/** The URL to serve with, as given, unless it holds a user or password, which are not printed. */
function servedUrl(from: string): string {
  return withoutCredentials(from) === from ? from : '<the --from URL, with its user and password>';
}

function write(output: string, text: string): void {
  try {
    writeFileSync(output, text);
  } catch (error) {
    throw new ConfigError('-o', `cannot write ${output} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

/** `--update <file>`: the edited file with what the database has and it lacks, written to `output` (the file itself unless -o). */
function updateFile(file: string, output: string, mapped: ReturnType<typeof catalogSchema>, source: string): void {
  let edited: string;
  try {
    edited = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError('--update', `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  // The file as edited must load, and be a mapped one: what is merged into it is then checked with it.
  const before = parseSchemaText(edited, file);
  if (before.mapping === undefined) throw new ConfigError('--update', `${file} does not map an existing database (no database: {existing: true}); run init --from without --update to write one`);
  let update: ReturnType<typeof updateMappedSchemaText>;
  try {
    update = updateMappedSchemaText(edited, mapped);
  } catch (error) {
    throw new ConfigError('--update', `cannot update ${file}: ${(error as Error).message}`);
  }
  parseSchemaText(update.text, output);
  if (update.added.length > 0 || output !== file) write(output, update.text);
  for (const line of update.missing) process.stderr.write(`warning: ${line} (left in the file; remove it by hand)\n`);
  process.stdout.write(
    update.added.length === 0
      ? `${file} already maps every table and column of ${source}${output === file ? '' : `; written to ${output}`}.\n`
      : `Updated ${output} from ${source}: added ${update.added.join(', ')}. Everything else is as it was.\n`,
  );
}
