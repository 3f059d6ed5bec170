import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { exportLines } from '../core/bulk-export.js';
import { BulkImport, type BulkImportResult, type ImportItem, type UnreadableItem } from '../core/bulk-import.js';
import { DatabaseNotFoundError, ImportRejectedError, SchemaError, type RejectedRow } from '../errors.js';
import { compileSchema } from '../schema/compile-schema.js';
import { loadSchemaFile } from '../schema/load-schema.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { BulkRows } from '../store/bulk-rows.js';
import { applyMigration, planMigration, recordedSchema } from '../store/migrate.js';
import { openDatabase, type OpenedDatabase } from '../store/open-database.js';
import { chooseSchema, databaseToCreate, databaseToOpen, sameCommandWith } from './schema-and-database.js';

export interface ExportDataFlags {
  schemaFile?: string | undefined;
  databaseUrl?: string;
  output?: string;
}

/**
 * `restgraph export data [-o file]`: every record of the database as NDJSON (see core/bulk-export.ts),
 * to the file or stdout. The resources are those the database was last migrated to.
 */
export async function runExportData(flags: ExportDataFlags): Promise<void> {
  const schemaChoice = chooseSchema(flags.schemaFile, process.env);
  const database = databaseToOpen(flags.databaseUrl, process.env, schemaChoice, sameCommandWith);
  const opened = await openDatabase(database.url, { existing: true });
  try {
    const schema = await schemaOfDatabase(opened, schemaChoice.argument);
    const out: Writable = flags.output === undefined ? process.stdout : createWriteStream(flags.output);
    let count = 0;
    let chunk = '';
    for await (const line of exportLines(schema, new BulkRows(opened.db))) {
      chunk += `${line}\n`;
      count++;
      if (chunk.length >= 64 * 1024) {
        if (!out.write(chunk)) await once(out, 'drain');
        chunk = '';
      }
    }
    if (chunk !== '') out.write(chunk);
    if (out !== process.stdout) {
      out.end();
      await once(out, 'finish');
      process.stderr.write(`Exported ${count} record${count === 1 ? '' : 's'} to ${flags.output ?? ''}.\n`);
    }
  } finally {
    await opened.db.close();
  }
}

/** The schema the database was last migrated to (what its tables hold). */
async function schemaOfDatabase({ db, description }: OpenedDatabase, schemaArgument: string | undefined): Promise<SchemaModel> {
  const definition = await recordedSchema(db);
  if (definition === undefined) {
    throw new DatabaseNotFoundError(
      `The database ${description} holds no restgraph schema (only \`restgraph serve\` and \`restgraph migrate\` create one): ` +
        `npx restgraph migrate${schemaArgument === undefined ? ' <schema-file>' : ` ${schemaArgument}`} -d ${description}`,
    );
  }
  const { model, problems } = compileSchema(definition);
  if (model === undefined) throw new SchemaError(description, problems);
  return model;
}

export interface ImportDataFlags {
  file: string;
  schemaFile?: string | undefined;
  databaseUrl?: string;
  events?: boolean;
  skipInvalid?: boolean;
  allowExistingRows?: boolean;
}

/**
 * `restgraph import data <file>`: an export (see {@link runExportData}) into the database, migrated
 * to the schema first (created if missing, as `migrate` does): one transaction, ids kept.
 */
export async function runImportData(flags: ImportDataFlags): Promise<void> {
  const schemaChoice = chooseSchema(flags.schemaFile, process.env);
  const schema = loadSchemaFile(schemaChoice.path);
  const database = databaseToCreate(flags.databaseUrl, process.env, schemaChoice);
  if (database.notice !== undefined) process.stderr.write(`restgraph: ${database.notice}\n`);
  const { db, rules, description } = await openDatabase(database.url);
  try {
    await db.exclusively(async () => {
      const plan = await planMigration(db, rules, schema);
      await applyMigration(db, schema, plan);
    });
    const started = performance.now();
    const result = await reportRejected(
      new BulkImport(db, schema).run(dataLines(flags.file, schema), {
        mode: 'restore',
        requireEmpty: flags.allowExistingRows !== true,
        skipInvalid: flags.skipInvalid === true,
        events: flags.events === true,
      }),
    );
    printImported(result, description, performance.now() - started);
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
    else yield { line, resource, record: parsed.record };
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
    if (result.rejected.length > 0) {
      process.stderr.write(`Skipped ${result.rejected.length} rejected row${result.rejected.length === 1 ? '' : 's'}:\n`);
      printRows(result.rejected);
    }
    return result;
  } catch (error) {
    if (error instanceof ImportRejectedError) printRows(error.rows);
    throw error;
  }
}

function printRows(rows: readonly RejectedRow[]): void {
  let text = '';
  for (const row of rows) text += `  line ${row.line} (${row.resource}): ${row.reason}\n`;
  process.stderr.write(text);
}

function printImported(result: BulkImportResult, description: string, ms: number): void {
  const total = [...result.imported.values()].reduce((a, b) => a + b, 0);
  const parts = [...result.imported].map(([name, n]) => `${name} ${n}`).join(', ');
  const rate = ms > 0 ? Math.round((total * 1000) / ms) : 0;
  process.stdout.write(`Imported ${total} record${total === 1 ? '' : 's'}${parts === '' ? '' : ` (${parts})`} into ${description} in ${(ms / 1000).toFixed(2)} s (${rate} rows/s).\n`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
