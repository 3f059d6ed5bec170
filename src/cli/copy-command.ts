import { existsSync, rmSync } from 'node:fs';
import { hasFileFields } from '../core/file-fields.js';
import { ConfigError } from '../errors.js';
import { openFileStorage, serverFilesLocation } from '../files/file-location.js';
import { FileTransfer } from '../files/file-transfer.js';
import { carryReferencedFiles, uncarriedError } from '../files/referenced-files.js';
import { BulkRows } from '../store/bulk-rows.js';
import { copyDatabase } from '../store/database-copy.js';
import { databaseTarget, openDatabase, type OpenDatabaseOptions, type OpenedDatabase } from '../store/open-database.js';

/** How often a table being copied says how many rows it has copied so far. */
const PROGRESS_EVERY_MS = 5000;

export interface CopyFlags {
  from: string;
  to: string;
  replace?: boolean;
  /** Where the source's files are (default as its server would keep them). */
  fromFiles?: string | undefined;
  /** Where the files go (default as the target's server would keep them). */
  toFiles?: string | undefined;
}

/**
 * `restgraph copy --from <url> --to <url>`: a whole database into another (store/database-copy.ts),
 * a line per table as it is copied, then the total. The source must exist (it is never created);
 * a SQLite target file the copy created is removed again when the copy fails.
 */
export async function runCopy(flags: CopyFlags): Promise<void> {
  const started = performance.now();
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  const targetFile = renamed('--to', () => databaseTarget(flags.to)).file;
  const created = targetFile !== undefined && targetFile !== ':memory:' && !existsSync(targetFile) ? targetFile : undefined;
  const source = await open('--from', flags.from, { existing: true });
  let target: OpenedDatabase | undefined;
  let copied = false;
  let files: FileTransfer | undefined;
  try {
    target = await open('--to', flags.to);
    const into = target.description;
    const sourceDb = source.db;
    // A big table says how far it has got, every few seconds.
    let said = performance.now();
    const summary = await copyDatabase(source, target, {
      replace: flags.replace === true,
      onStart: () => out(`Copying ${source.description} to ${into}:`),
      onProgress: (table, rows) => {
        if (performance.now() - said < PROGRESS_EVERY_MS) return;
        said = performance.now();
        out(`  ${table.padEnd(30)} ${rows} so far…`);
      },
      onTable: (table, rows) => {
        said = performance.now();
        out(`  ${table.padEnd(30)} ${rows}`);
      },
      beforeRows: async (reader, schema) => {
        if (!hasFileFields(schema)) return;
        files = await copiedFiles(flags);
        const uncarried = await carryReferencedFiles(schema, new BulkRows(sourceDb), reader, files);
        if (uncarried.count > 0) throw uncarriedError(uncarried, 'copied', 'No row was copied. Put the files back in the source storage (or clear the fields that reference them), then copy again.');
        out(`  ${'files'.padEnd(30)} ${files.files} (${files.bytes} bytes)`);
      },
    });
    copied = true;
    const ms = performance.now() - started;
    const rate = ms > 0 ? Math.round((summary.rows * 1000) / ms) : 0;
    out(`Copied ${summary.rows} row${summary.rows === 1 ? '' : 's'} (${summary.tables.length} tables) in ${(ms / 1000).toFixed(2)} s (${rate} rows/s).`);
  } finally {
    if (!copied) await files?.undo();
    await target?.db.close();
    await source.db.close();
    if (!copied && created !== undefined) for (const file of [created, `${created}-wal`, `${created}-shm`]) rmSync(file, { force: true });
  }
}

/** The storages of a copy's two sides, each where its server would keep it unless named. */
async function copiedFiles(flags: CopyFlags): Promise<FileTransfer> {
  const from = flags.fromFiles ?? serverFilesLocation(process.env, flags.from);
  const to = flags.toFiles ?? serverFilesLocation(process.env, flags.to);
  const source = await openFileStorage(from, '--from-files', { create: false });
  return new FileTransfer(source, await openFileStorage(to, '--to-files'), `the file storage ${from}`);
}

/** Opens one side; a URL it cannot read or a database it cannot reach is named by its option. */
async function open(option: '--from' | '--to', url: string, options: OpenDatabaseOptions = {}): Promise<OpenedDatabase> {
  try {
    return await openDatabase(url, options);
  } catch (error) {
    throw renamedError(option, error);
  }
}

function renamed<T>(option: '--from' | '--to', work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw renamedError(option, error);
  }
}

/** openDatabase's errors name DATABASE_URL, which a copy does not read. */
function renamedError(option: string, error: unknown): unknown {
  if (!(error instanceof ConfigError) || error.option !== 'DATABASE_URL') return error;
  return new ConfigError(option, error.message.replace(/^Invalid configuration DATABASE_URL: /, ''));
}
