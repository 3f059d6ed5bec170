import { once } from 'node:events';
import { createWriteStream, fsyncSync, openSync, realpathSync, statSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { exportLines } from '../core/bulk-export.js';
import { hasFileFields } from '../core/file-fields.js';
import { ConfigError, DatabaseNotFoundError, SchemaError } from '../errors.js';
import { openFileStorage, serverFilesLocation, serverFilesOption } from '../files/file-location.js';
import { FileTransfer } from '../files/file-transfer.js';
import { carryReferencedFiles, uncarriedError, uncarriedLines } from '../files/referenced-files.js';
import type { SqlExecutor } from '../store/sql-database.js';
import { compileSchema } from '../schema/compile-schema.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { BulkRows } from '../store/bulk-rows.js';
import { CredentialStore } from '../store/credential-store.js';
import { recordedSchema } from '../store/migrate.js';
import { databaseTarget, openDatabase, type OpenedDatabase } from '../store/open-database.js';
import { chooseSchema, databaseToOpen, sameCommandWith } from './schema-and-database.js';

export interface ExportDataFlags {
  schemaFile?: string | undefined;
  databaseUrl?: string;
  output?: string;
  /** Each account's password hash and verification mark beside its record (docs/accounts.md). */
  withCredentials?: boolean;
  /** Where the files the rows reference go (default `<output>.files`); false (`--no-files`): the rows only. */
  files?: string | false;
  /** Export although some files the rows reference are missing from the storage (each named on stderr). */
  allowMissingFiles?: boolean;
}

/** The files of a SQLite database besides the database itself. */
const SQLITE_COMPANIONS = ['-wal', '-shm', '-journal'];

/**
 * `restgraph export data [-o file]`: every record of the database as NDJSON (see core/bulk-export.ts),
 * to the file or stdout. The resources are those the database was last migrated to.
 *
 * The file is written under a temporary name in its folder and renamed once complete: an export
 * that fails or is killed part-way never leaves a half file under the name asked for (nor replaces
 * the file of that name). An output that is the database itself, or one of its files, is refused.
 */
export async function runExportData(flags: ExportDataFlags): Promise<void> {
  const schemaChoice = chooseSchema(flags.schemaFile, process.env);
  const database = databaseToOpen(flags.databaseUrl, process.env, schemaChoice, sameCommandWith);
  if (flags.output !== undefined) refuseDatabaseFiles(flags.output, databaseTarget(database.url).file);
  const opened = await openDatabase(database.url, { existing: true });
  let file: ExportFile | undefined;
  let files: ExportedFiles | undefined;
  let exported = false;
  try {
    const schema = await schemaOfDatabase(opened, schemaChoice.argument);
    files = await exportedFiles(schema, flags, database.url);
    file = flags.output === undefined ? undefined : ExportFile.open(flags.output);
    const out = file?.stream ?? process.stdout;
    const rows = new BulkRows(opened.db);
    const credentials = flags.withCredentials === true ? new CredentialStore(opened.db) : undefined;
    const count = await opened.db.snapshot(async (reader) => {
      // The files first, from the same snapshot as the rows: every file a row references is there.
      if (files !== undefined) await carryFiles(schema, rows, reader, files, flags.allowMissingFiles === true);
      let n = 0;
      let chunk = '';
      for await (const line of exportLines(schema, rows, reader, 1000, credentials)) {
        chunk += `${line}\n`;
        n++;
        if (chunk.length >= 64 * 1024) {
          if (!out.write(chunk)) await drained(out, flags.output);
          chunk = '';
        }
      }
      if (chunk !== '') out.write(chunk);
      return n;
    });
    if (file !== undefined) {
      await file.complete();
      const carried = files === undefined ? '' : ` and ${files.transfer.files} file${files.transfer.files === 1 ? '' : 's'} (${files.transfer.bytes} bytes, in ${files.location})`;
      process.stderr.write(`Exported ${count} record${count === 1 ? '' : 's'}${carried} to ${file.name}.\n`);
      if (credentials !== undefined) process.stderr.write(`${file.name} holds password hashes: keep it as safe as the database.\n`);
    }
    exported = true;
  } finally {
    await file?.discard();
    if (!exported) await files?.transfer.undo();
    await opened.db.close();
  }
}

/** Where an export's files go, and what carries them there. */
interface ExportedFiles {
  location: string;
  transfer: FileTransfer;
}

/**
 * The files of an export (docs/files.md#export-import-and-copy): none when no resource has file
 * fields or with `--no-files`; else from the server's storage to `--files`, by default
 * `<output>.files`. An export to stdout must say where its files go.
 */
async function exportedFiles(schema: SchemaModel, flags: ExportDataFlags, databaseUrl: string): Promise<ExportedFiles | undefined> {
  if (!hasFileFields(schema) || flags.files === false) return undefined;
  const location = flags.files ?? (flags.output === undefined ? undefined : `${flags.output}.files`);
  if (location === undefined) {
    throw new ConfigError('--files', 'the resources have file fields: to stdout, name the directory their files go to with --files <dir> (or --no-files to export the rows without them)');
  }
  const source = serverFilesLocation(process.env, databaseUrl);
  const from = await openFileStorage(source, serverFilesOption(source), { create: false });
  const to = await openFileStorage(location, '--files');
  return { location, transfer: new FileTransfer(from, to, `the file storage ${source}`) };
}

/** Carries the files the snapshot's rows reference; missing ones refuse the export, unless allowed (then each is named on stderr). */
async function carryFiles(schema: SchemaModel, rows: BulkRows, reader: SqlExecutor, files: ExportedFiles, allowMissing: boolean): Promise<void> {
  const uncarried = await carryReferencedFiles(schema, rows, reader, files.transfer);
  if (uncarried.count === 0) return;
  if (!allowMissing) throw uncarriedError(uncarried, 'exported', '--allow-missing-files exports the rows without them.');
  const n = uncarried.count;
  process.stderr.write(`Exporting without ${n} file${n === 1 ? '' : 's'} the rows reference (import data rejects their rows, unless --null-missing-files):\n${uncarriedLines(uncarried)}\n`);
}

/**
 * The output file, written under a temporary name in its own folder (so the rename at the end
 * stays on one file system) and renamed over the name asked for once complete and on disk.
 */
class ExportFile {
  readonly name: string;
  readonly stream: Writable;
  readonly #fd: number;
  readonly #partial: string;
  #done = false;

  private constructor(name: string, partial: string, fd: number) {
    this.name = name;
    this.#partial = partial;
    this.#fd = fd;
    this.stream = createWriteStream('', { fd, autoClose: false });
    // A write error (a full disk) is told by the next wait for the stream (drained()), not thrown.
    this.stream.on('error', () => undefined);
  }

  /** @throws ConfigError naming --output when the file cannot be written there. */
  static open(name: string): ExportFile {
    if (statSync(name, { throwIfNoEntry: false })?.isDirectory() === true) throw outputError(name, 'EISDIR');
    const partial = join(dirname(name), `.${basename(name)}.${process.pid}.partial`);
    try {
      return new ExportFile(name, partial, openSync(partial, 'w'));
    } catch (error) {
      throw outputError(name, error);
    }
  }

  /** Writes out what is buffered, makes it durable, and gives the file its name. */
  async complete(): Promise<void> {
    this.stream.end();
    await drained(this.stream, this.name, 'finish');
    try {
      fsyncSync(this.#fd);
      await this.#close();
      await rename(this.#partial, this.name);
    } catch (error) {
      throw outputError(this.name, error);
    }
    this.#done = true;
  }

  /** After a failure: the temporary file goes (nothing when {@link complete} succeeded). */
  async discard(): Promise<void> {
    if (this.#done) return;
    await this.#close();
    await rm(this.#partial, { force: true });
  }

  /** Closes the file: destroying the stream closes its descriptor, once a write under way is done. */
  async #close(): Promise<void> {
    if (this.stream.closed) return;
    const closed = once(this.stream, 'close');
    this.stream.destroy();
    await closed;
  }
}

/**
 * Refuses an output that is the SQLite database being exported, or its -wal, -shm or -journal file,
 * however the paths are written (relative, absolute, through a symbolic link): writing it would
 * destroy the database.
 *
 * @throws ConfigError naming --output
 */
function refuseDatabaseFiles(output: string, databaseFile: string | undefined): void {
  if (databaseFile === undefined || databaseFile === ':memory:') return;
  const target = realPath(output);
  for (const base of new Set([databaseFile, realPath(databaseFile)])) {
    for (const suffix of ['', ...SQLITE_COMPANIONS]) {
      if (realPath(`${base}${suffix}`) === target) {
        throw new ConfigError('--output', `${output} is the database being exported (${databaseFile}) or one of its files; write the export to another file`);
      }
    }
  }
}

/** The path with every symbolic link resolved; for a file that does not exist, its folder's. */
function realPath(file: string): string {
  const absolute = resolve(file);
  try {
    return realpathSync.native(absolute);
  } catch {
    try {
      return join(realpathSync.native(dirname(absolute)), basename(absolute));
    } catch {
      return absolute;
    }
  }
}

/** Waits for `event` ('drain' by default) on the output; a write error (a full disk) rejects, as a coded error. */
async function drained(out: Writable, file: string | undefined, event = 'drain'): Promise<void> {
  try {
    if (out.errored !== null) throw out.errored;
    await once(out, event);
  } catch (error) {
    throw outputError(file ?? 'stdout', error);
  }
}

function outputError(file: string, error: unknown): ConfigError {
  const code = typeof error === 'string' ? error : ((error as NodeJS.ErrnoException).code ?? String(error));
  return new ConfigError('--output', `cannot write ${file} (${code})`);
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
