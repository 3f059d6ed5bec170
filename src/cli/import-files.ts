import { FileCleanup } from '../core/file-fields.js';
import type { ImportItem, UnreadableItem } from '../core/bulk-import.js';
import { openFileStorage, serverFilesLocation, serverFilesOption } from '../files/file-location.js';
import { carryRecordFiles, FileTransfer } from '../files/file-transfer.js';
import type { SchemaModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';

/** Rows imported without a missing file that are named one by one (then counted). */
const NAMED = 20;

/**
 * The files of `import data` (docs/files.md#export-import-and-copy): each row's files go from the
 * export's directory into the server's storage as the row is read, inside the import's
 * transaction, so they are stored before the rows that reference them commit. A row whose file
 * value is not of restgraph's form, or whose file is missing or of another size, is rejected with
 * its line (with `nullMissing`, a missing file is left out of the row instead).
 */
export class ImportedFiles {
  readonly transfer: FileTransfer;
  readonly #nullMissing: boolean;
  /** Rows imported without a missing file: the first named, all counted. */
  readonly nulled: { first: string[]; count: number } = { first: [], count: 0 };

  private constructor(transfer: FileTransfer, nullMissing: boolean) {
    this.transfer = transfer;
    this.#nullMissing = nullMissing;
  }

  /** Undefined when no resource of the schema has file fields (an import of rows only). */
  static async open(schema: SchemaModel, file: string, flags: { files?: string | undefined; nullMissingFiles?: boolean | undefined }, databaseUrl: string): Promise<ImportedFiles | undefined> {
    if (!FileCleanup.needed(schema)) return undefined;
    const location = flags.files ?? `${file}.files`;
    const from = await openFileStorage(location, '--files', { create: false });
    const server = serverFilesLocation(process.env, databaseUrl);
    const to = await openFileStorage(server, serverFilesOption(server));
    return new ImportedFiles(new FileTransfer(from, to, `the export's files ${location}`), flags.nullMissingFiles === true);
  }

  /** The items, each row's files stored before it is passed on (or the row made a rejection naming why). */
  async *carry(items: AsyncIterable<ImportItem | UnreadableItem>): AsyncGenerator<ImportItem | UnreadableItem> {
    for await (const item of items) {
      if ('unreadable' in item || typeof item.record !== 'object' || item.record === null || Array.isArray(item.record)) {
        yield item;
        continue;
      }
      const carried = await carryRecordFiles(item.resource, item.record as StoredRecord, this.transfer, this.#nullMissing);
      if (carried.problems.length > 0) {
        yield { line: item.line, resource: item.resource.name, unreadable: carried.problems.join('; ') };
        continue;
      }
      if (carried.nulled > 0) {
        this.nulled.count++;
        if (this.nulled.first.length < NAMED) this.nulled.first.push(`  line ${item.line} (${item.resource.name}): ${carried.nulled} missing file${carried.nulled === 1 ? '' : 's'} left out`);
      }
      yield { ...item, record: carried.record };
    }
  }

  /** What the import did with files, for its report: a note on stderr for rows imported without theirs. */
  report(): string {
    const { count, first } = this.nulled;
    if (count === 0) return '';
    const more = count > first.length ? `\n  … and ${count - first.length} more` : '';
    return `${count} row${count === 1 ? ' was' : 's were'} imported without files missing from the export (--null-missing-files):\n${first.join('\n')}${more}\n`;
  }
}
