import { hasFileFields, keysOfRecord } from '../core/file-fields.js';
import type { ImportItem, UnreadableItem } from '../core/bulk-import.js';
import { openFileStorage, serverFilesLocation, serverFilesOption } from '../files/file-location.js';
import { carryRecordFiles, FileTransfer } from '../files/file-transfer.js';
import type { ResourceModel, SchemaModel } from '../schema/schema-model.js';
import type { SqlDatabase } from '../store/sql-database.js';
import { rowsHoldingFileKey } from '../store/file-key-rows.js';
import type { StoredRecord } from '../store/list-spec.js';

/** Rows imported without a missing file that are named one by one (then counted). */
const NAMED = 20;

/**
 * The files of `import data` (docs/files.md#export-import-and-copy): each row's files go from the
 * export's directory into the server's storage as the row is read, inside the import's
 * transaction, so they are stored before the rows that reference them commit. A row whose file
 * value is not of restgraph's form, or whose file is missing or of another size, is rejected with
 * its line (with `nullMissing`, a missing file is left out of the row instead). So is a row
 * referencing a file another row references (deleting one would delete the other's file): one
 * earlier in the import, found by the keys seen (a map of 22-character key → line: about 100
 * bytes a file, bounded by the import's files), or one already in the database when the import
 * adds to existing rows (a query on the file columns, {@link rowsHoldingFileKey}).
 */
export class ImportedFiles {
  readonly transfer: FileTransfer;
  readonly #schema: SchemaModel;
  readonly #nullMissing: boolean;
  /** The database, when its existing rows may reference the files too (`--allow-existing-rows`). */
  readonly #existing: SqlDatabase | undefined;
  /** Each storage key the import's rows referenced so far → the line of the first. */
  readonly #seen = new Map<string, number>();
  /** Rows imported without a missing file: the first named, all counted. */
  readonly nulled: { first: string[]; count: number } = { first: [], count: 0 };

  private constructor(schema: SchemaModel, transfer: FileTransfer, nullMissing: boolean, existing: SqlDatabase | undefined) {
    this.#schema = schema;
    this.transfer = transfer;
    this.#nullMissing = nullMissing;
    this.#existing = existing;
  }

  /** Undefined when no resource of the schema has file fields (an import of rows only). */
  static async open(
    schema: SchemaModel,
    file: string,
    flags: { files?: string | undefined; nullMissingFiles?: boolean | undefined; allowExistingRows?: boolean | undefined },
    database: { url: string; db: SqlDatabase },
  ): Promise<ImportedFiles | undefined> {
    if (!hasFileFields(schema)) return undefined;
    const location = flags.files ?? `${file}.files`;
    const from = await openFileStorage(location, '--files', { create: false });
    const server = serverFilesLocation(process.env, database.url);
    const to = await openFileStorage(server, serverFilesOption(server));
    return new ImportedFiles(schema, new FileTransfer(from, to, `the export's files ${location}`), flags.nullMissingFiles === true, flags.allowExistingRows === true ? database.db : undefined);
  }

  /** The items, each row's files stored before it is passed on (or the row made a rejection naming why). */
  async *carry(items: AsyncIterable<ImportItem | UnreadableItem>): AsyncGenerator<ImportItem | UnreadableItem> {
    for await (const item of items) {
      if ('unreadable' in item || typeof item.record !== 'object' || item.record === null || Array.isArray(item.record)) {
        yield item;
        continue;
      }
      const carried = await carryRecordFiles(item.resource, item.record as StoredRecord, this.transfer, this.#nullMissing);
      const problems = carried.problems.length > 0 ? carried.problems : await this.#sharedKeys(item.resource, carried.record, item.line);
      if (problems.length > 0) {
        yield { line: item.line, resource: item.resource.name, unreadable: problems.join('; ') };
        continue;
      }
      if (carried.nulled > 0) {
        this.nulled.count++;
        if (this.nulled.first.length < NAMED) this.nulled.first.push(`  line ${item.line} (${item.resource.name}): ${carried.nulled} missing file${carried.nulled === 1 ? '' : 's'} left out`);
      }
      yield { ...item, record: carried.record };
    }
  }

  /** Why the row may not have its files: each one another row (of the import, or already in the database) references. */
  async #sharedKeys(resource: ResourceModel, record: StoredRecord, line: number): Promise<string[]> {
    const problems: string[] = [];
    for (const key of keysOfRecord(resource, record)) {
      const earlier = this.#seen.get(key);
      if (earlier !== undefined) {
        problems.push(`file key ${key} already used by the row on line ${earlier}`);
        continue;
      }
      const holder = await this.#holder(key);
      if (holder !== undefined) problems.push(`file key ${key} already used by ${holder}`);
      else this.#seen.set(key, line);
    }
    return problems;
  }

  /** The row already in the database that references `key` ("users 7"), if any. */
  async #holder(key: string): Promise<string | undefined> {
    if (this.#existing === undefined) return undefined;
    for (const resource of this.#schema.resources.values()) {
      const rows = await rowsHoldingFileKey(this.#existing, resource, key);
      const row = rows.find((candidate) => keysOfRecord(resource, candidate).has(key));
      if (row !== undefined) return `${resource.singular} ${String(row.id)} in the database`;
    }
    return undefined;
  }

  /** What the import did with files, for its report: a note on stderr for rows imported without theirs. */
  report(): string {
    const { count, first } = this.nulled;
    if (count === 0) return '';
    const more = count > first.length ? `\n  … and ${count - first.length} more` : '';
    return `${count} row${count === 1 ? ' was' : 's were'} imported without files missing from the export (--null-missing-files):\n${first.join('\n')}${more}\n`;
  }
}
