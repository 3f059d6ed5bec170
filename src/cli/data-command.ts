import { accessSync, constants as fsConstants, createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { CsvError, parse as parseCsv } from 'csv-parse';
import { BulkImport, type BulkImportResult, type ImportItem, type UnreadableItem } from '../core/bulk-import.js';
import { columnFields, recordFromCells } from '../core/text-values.js';
import { ConfigError, ImportRejectedError, type RejectedRow } from '../errors.js';
import { loadSchemaFile } from '../schema/load-schema.js';
import type { FieldModel, ResourceModel, SchemaModel } from '../schema/schema-model.js';
import { applyMigration, planMigration } from '../store/migrate.js';
import { openDatabase } from '../store/open-database.js';
import { ImportedFiles } from './import-files.js';
import { chooseSchema, databaseToCreate } from './schema-and-database.js';

export interface ImportDataFlags {
  file: string;
  schemaFile?: string | undefined;
  databaseUrl?: string;
  events?: boolean;
  skipInvalid?: boolean;
  allowExistingRows?: boolean;
  /** Where the export's files are (default `<file>.files`). */
  files?: string | undefined;
  /** A row whose file is missing from the export is imported without it (else rejected). */
  nullMissingFiles?: boolean;
}

/**
 * `restgraph import data <file>`: an export (see {@link runExportData}) into the database, migrated
 * to the schema first (created if missing, as `migrate` does): one transaction, ids kept.
 */
export async function runImportData(flags: ImportDataFlags): Promise<void> {
  mustBeReadable(flags.file);
  const schemaChoice = chooseSchema(flags.schemaFile, process.env);
  const schema = loadSchemaFile(schemaChoice.path);
  if (schema.resources.has('data') && !(await isDataExport(flags.file))) {
    // A resource named data: `import data <file>` is its records, unless the file is an export.
    await runImportResource({ ...flags, resource: 'data' });
    return;
  }
  const database = databaseToCreate(flags.databaseUrl, process.env, schemaChoice);
  if (database.notice !== undefined) process.stderr.write(`restgraph: ${database.notice}\n`);
  const { db, rules, description } = await openDatabase(database.url);
  try {
    await db.exclusively(async () => {
      const plan = await planMigration(db, rules, schema);
      await applyMigration(db, schema, plan);
    });
    const started = performance.now();
    const files = await ImportedFiles.open(schema, flags.file, flags, { url: database.url, db });
    const lines = dataLines(flags.file, schema);
    const result = await reportRejected(
      new BulkImport(db, schema).run(files === undefined ? lines : files.carry(lines), {
        mode: 'restore',
        requireEmpty: flags.allowExistingRows !== true,
        skipInvalid: flags.skipInvalid === true,
        events: flags.events === true,
      }),
    ).catch(async (error: unknown) => {
      // Nothing committed: the files stored for it go too (never one the storage had before).
      await files?.transfer.undo();
      throw error;
    });
    if (files !== undefined) process.stderr.write(files.report());
    printImported(result, description, performance.now() - started, files?.transfer);
  } finally {
    await db.close();
  }
}

/** The lines of a data export as import items (blank lines skipped). */
async function* dataLines(file: string, schema: SchemaModel): AsyncGenerator<ImportItem | UnreadableItem> {
  let line = 0;
  for await (const text of linesOf(file)) {
    line++;
    if (text.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      yield { line, resource: '?', unreadable: 'is not JSON' };
      continue;
    }
    const name = isObject(parsed) ? parsed.resource : undefined;
    const resource = typeof name === 'string' ? schema.resources.get(name) : undefined;
    if (!isObject(parsed) || typeof name !== 'string') yield { line, resource: '?', unreadable: 'must be {"resource": "<name>", "record": {…}}' };
    else if (resource === undefined) yield { line, resource: name, unreadable: `${name} is not a resource of the schema` };
    else yield { line, resource, record: parsed.record, ...('credentials' in parsed ? { credentials: parsed.credentials } : {}) };
  }
}

/** Whether the file's first line is a line of `export data` (`{"resource":…,"record":…}`). */
async function isDataExport(file: string): Promise<boolean> {
  for await (const text of linesOf(file)) {
    if (text.trim() === '') continue;
    try {
      const first = JSON.parse(text) as unknown;
      return isObject(first) && typeof first.resource === 'string' && 'record' in first;
    } catch {
      return false;
    }
  }
  return false;
}

/** Before any database is opened (or created): the file to import must be there. */
function mustBeReadable(file: string): void {
  try {
    accessSync(file, fsConstants.R_OK);
  } catch (error) {
    throw new ConfigError('<file>', `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

/** A file's lines, read as a stream. */
function linesOf(file: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
}

/** Prints every rejected row of a failed import to stderr before the error itself. */
async function reportRejected(importing: Promise<BulkImportResult>): Promise<BulkImportResult> {
  try {
    const result = await importing;
    if (result.rejectedCount > 0) {
      process.stderr.write(`Skipped ${result.rejectedCount} rejected row${result.rejectedCount === 1 ? '' : 's'}:\n`);
      printRows(result.rejected, result.rejectedCount);
    }
    return result;
  } catch (error) {
    if (error instanceof ImportRejectedError) printRows(error.rows, error.count);
    throw error;
  }
}

/** The rejected rows reported, then how many more there were. */
function printRows(rows: readonly RejectedRow[], count: number): void {
  let text = '';
  for (const row of rows) text += `  line ${row.line} (${row.resource}): ${row.reason}\n`;
  if (count > rows.length) text += `  … and ${count - rows.length} more rejected row${count - rows.length === 1 ? '' : 's'}\n`;
  process.stderr.write(text);
}

function printImported(result: BulkImportResult, description: string, ms: number, files?: { files: number; bytes: number }): void {
  const total = [...result.imported.values()].reduce((a, b) => a + b, 0);
  const parts = [...result.imported].map(([name, n]) => `${name} ${n}`).join(', ');
  const rate = ms > 0 ? Math.round((total * 1000) / ms) : 0;
  const carried = files === undefined ? '' : ` and ${files.files} file${files.files === 1 ? '' : 's'} (${files.bytes} bytes)`;
  process.stdout.write(`Imported ${total} record${total === 1 ? '' : 's'}${parts === '' ? '' : ` (${parts})`}${carried} into ${description} in ${(ms / 1000).toFixed(2)} s (${rate} rows/s).\n`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface ImportResourceFlags {
  resource: string;
  file: string;
  schemaFile?: string | undefined;
  databaseUrl?: string;
  format?: string;
  events?: boolean;
  skipInvalid?: boolean;
}

const FORMATS = ['csv', 'json', 'ndjson'] as const;
type FileFormat = (typeof FORMATS)[number];

/**
 * `restgraph import <resource> <file>`: records of one resource from CSV (a header row of field
 * names), a JSON array, or NDJSON, into the database (migrated to the schema first): one
 * transaction, ids kept when given, else assigned.
 */
export async function runImportResource(flags: ImportResourceFlags): Promise<void> {
  mustBeReadable(flags.file);
  const schemaChoice = chooseSchema(flags.schemaFile, process.env);
  const schema = loadSchemaFile(schemaChoice.path);
  const resource = schema.resources.get(flags.resource);
  if (resource === undefined) throw new ConfigError('<resource>', `must be a resource of ${schemaChoice.argument ?? 'the built-in example'} (${[...schema.resources.keys()].join(', ')}), not "${flags.resource}"`);
  const format = formatOf(flags.file, flags.format);
  const database = databaseToCreate(flags.databaseUrl, process.env, schemaChoice);
  if (database.notice !== undefined) process.stderr.write(`restgraph: ${database.notice}\n`);
  const { db, rules, description } = await openDatabase(database.url);
  try {
    await db.exclusively(async () => {
      await applyMigration(db, schema, await planMigration(db, rules, schema));
    });
    const started = performance.now();
    const items = format === 'csv' ? csvItems(flags.file, resource) : format === 'json' ? jsonArrayItems(flags.file, resource) : ndjsonItems(flags.file, resource);
    const result = await reportRejected(new BulkImport(db, schema).run(items, { mode: 'create', skipInvalid: flags.skipInvalid === true, events: flags.events === true }));
    printImported(result, description, performance.now() - started);
  } finally {
    await db.close();
  }
}

function formatOf(file: string, flag: string | undefined): FileFormat {
  const given = flag ?? /\.(csv|json|ndjson|jsonl)$/i.exec(file)?.[1]?.toLowerCase().replace('jsonl', 'ndjson');
  const format = FORMATS.find((f) => f === given);
  if (format === undefined) {
    throw new ConfigError('--format', flag === undefined ? `cannot tell the format of ${file} from its name: name it .csv, .json or .ndjson, or say --format csv|json|ndjson` : `must be csv, json or ndjson, not "${flag}"`);
  }
  return format;
}

/** The largest CSV record read (a quote never closed would otherwise take the rest of the file into one cell). */
const MAX_CSV_RECORD = 16 * 1024 * 1024;
/** The largest .json array read (it is read whole; NDJSON is read a line at a time). */
const MAX_JSON_FILE = 256 * 1024 * 1024;

/** CSV rows (after the header, line 1) as records converted by field type; a row's line is the line it ends on. */
async function* csvItems(file: string, resource: ResourceModel): AsyncGenerator<ImportItem | UnreadableItem> {
  const parser = createReadStream(file).pipe(parseCsv({ bom: true, skip_empty_lines: true, info: true, relax_column_count: true, max_record_size: MAX_CSV_RECORD }));
  let columns: FieldModel[] | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (columns === undefined) {
        const fields = columnFields(resource, record);
        if (typeof fields === 'string') throw new ImportRejectedError('The header row names no field of the resource, so nothing was imported.', { rows: [{ line: info.lines, resource: resource.name, reason: fields }] });
        columns = fields;
        continue;
      }
      const converted = recordFromCells(columns, record);
      yield typeof converted === 'string' ? { line: info.lines, resource: resource.name, unreadable: converted } : { line: info.lines, resource, record: converted };
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    // A syntax error (an unclosed quote, …) ends the reading: the rows after it cannot be told apart.
    const where = (error as CsvError & { lines?: number }).lines;
    yield { line: where ?? 0, resource: resource.name, unreadable: `is not valid CSV (${error.message}); the rows after it were not read` };
  }
}

/** NDJSON: one record a line. */
async function* ndjsonItems(file: string, resource: ResourceModel): AsyncGenerator<ImportItem | UnreadableItem> {
  let line = 0;
  for await (const text of linesOf(file)) {
    line++;
    if (text.trim() === '') continue;
    try {
      yield { line, resource, record: JSON.parse(text) as unknown };
    } catch {
      yield { line, resource: resource.name, unreadable: 'is not JSON' };
    }
  }
}

/** A JSON array of records (read whole), each with the line its element starts on. */
async function* jsonArrayItems(file: string, resource: ResourceModel): AsyncGenerator<ImportItem | UnreadableItem> {
  const { size } = await stat(file);
  if (size > MAX_JSON_FILE) {
    throw new ConfigError('<file>', `${file} is ${Math.ceil(size / 1024 / 1024)} MiB: a JSON array is read whole, up to ${MAX_JSON_FILE / 1024 / 1024} MiB; write larger files as NDJSON (one record a line, --format ndjson)`);
  }
  const text = await readFile(file, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    yield { line: 1, resource: resource.name, unreadable: `the file is not JSON (${error instanceof Error ? error.message : String(error)})` };
    return;
  }
  if (!Array.isArray(parsed)) {
    yield { line: 1, resource: resource.name, unreadable: 'the file must be a JSON array of records (or NDJSON, one record a line: --format ndjson)' };
    return;
  }
  const lines = elementLines(text);
  for (const [i, record] of (parsed as unknown[]).entries()) yield { line: lines[i] ?? 1, resource, record };
}

/** The line each element of a top-level JSON array starts on. */
function elementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expecting = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) line++;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 92) escaped = true;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 32 || c === 9 || c === 10 || c === 13) continue;
    if (depth === 1 && expecting && c !== 93) {
      lines.push(line);
      expecting = false;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      depth++;
      if (depth === 1) expecting = true;
    } else if (c === 93 || c === 125) depth--;
    else if (c === 44 && depth === 1) expecting = true;
  }
  return lines;
}
