import { fileFieldsOf, isFileKey, keyOf, type FileValue } from '../core/file-fields.js';
import type { FileStorage } from '../core/file-storage.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import { sanitizeFileName } from './file-names.js';

/**
 * Files carried from one storage to another under their own keys, streamed (never whole in
 * memory): what `export data`, `import data` and `copy` do with the files their rows reference
 * (docs/files.md#export-import-and-copy). Keys are random and never reused, so a file already in
 * the target under its key, at the size the record says, is that file: it is not copied again
 * (an import run twice, a copy between two names of one storage).
 */
export class FileTransfer {
  readonly #from: FileStorage;
  readonly #to: FileStorage;
  readonly #fromName: string;
  /** Keys this transfer stored that the target did not have: the ones {@link undo} deletes. */
  readonly #stored: string[] = [];
  /** Files copied (and found already there), and their bytes. */
  files = 0;
  bytes = 0;

  /** `fromName` names the source in reasons ("the export's files backup.ndjson.files"). */
  constructor(from: FileStorage, to: FileStorage, fromName: string) {
    this.#from = from;
    this.#to = to;
    this.#fromName = fromName;
  }

  /**
   * Copies one file (a value whose form {@link fileValueProblem} has checked) unless the target
   * has it already. @returns why not (a reason naming the file; `missing` when the source has no
   * such file), or undefined once it is there
   */
  async carry(file: FileValue): Promise<{ reason: string; missing: boolean } | undefined> {
    const key = keyOf(file) as string;
    const what = `its file ${key} (${file.name})`;
    const missing = { reason: `${what} is not in ${this.#fromName}`, missing: true };
    const found = await this.#from.stat(key);
    if (found === undefined) return missing;
    if (found.size !== file.size) return { reason: `${what} has ${found.size} bytes in ${this.#fromName}, not the ${file.size} its value says`, missing: false };
    if ((await this.#to.stat(key))?.size !== file.size) {
      const body = await this.#from.get(key);
      if (body === undefined) return missing;
      const grew = new Error(`${what} has more than the ${file.size} bytes its value says`);
      const size = await this.#to.put(key, body, { maxBytes: file.size, tooLarge: () => grew }).then(
        (stored) => stored.size,
        (error: unknown) => {
          if (error === grew) return undefined;
          throw error;
        },
      );
      if (size === undefined) return { reason: grew.message, missing: false };
      this.#stored.push(key);
      if (size !== file.size) return { reason: `${what} shrank to ${size} bytes while it was copied, from the ${file.size} its value says`, missing: false };
    }
    this.files++;
    this.bytes += file.size;
    return undefined;
  }

  /** After a failure (nothing committed): deletes the files this transfer stored, never one the target had before. */
  async undo(): Promise<void> {
    for (const key of this.#stored.splice(0)) await this.#to.delete(key).catch(() => undefined);
  }
}

/** What carrying a record's files found: the record to write, and why it cannot be (one reason a field). */
export interface CarriedRecord {
  record: StoredRecord;
  problems: string[];
  /** Files left out of the record because they were missing (with `nullMissing`). */
  nulled: number;
}

/**
 * Carries the files of one record's file fields. A value not of the form restgraph writes is a
 * problem (never a path: keys are checked before any storage is asked). A file missing from the
 * source is a problem, or with `nullMissing` is left out of the record (a single file's field
 * becomes null, a list loses it).
 */
export async function carryRecordFiles(resource: ResourceModel, record: StoredRecord, transfer: FileTransfer, nullMissing = false): Promise<CarriedRecord> {
  const problems: string[] = [];
  let nulled = 0;
  let copy: StoredRecord | undefined;
  for (const field of fileFieldsOf(resource)) {
    const value = record[field.name];
    if (value === null || value === undefined) continue;
    const formProblem = fileValueProblem(field, value);
    if (formProblem !== undefined) {
      problems.push(`/${field.name}: ${formProblem}`);
      continue;
    }
    const files = Array.isArray(value) ? (value as FileValue[]) : [value as FileValue];
    const kept: FileValue[] = [];
    for (const file of files) {
      const failed = await transfer.carry(file);
      if (failed === undefined) kept.push(file);
      else if (nullMissing && failed.missing) nulled++;
      else problems.push(`/${field.name}: ${failed.reason}`);
    }
    if (kept.length < files.length && problems.length === 0) {
      copy ??= { ...record };
      copy[field.name] = field.multiple === true ? kept : null;
    }
  }
  return { record: copy ?? record, problems, nulled };
}

const MAX_URL = 2048;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;
/** Control characters and white space: an answer's url never holds them. */
// eslint-disable-next-line no-control-regex
const UNSAFE_URL = /[\u0000-\u0020\u007f-\u009f]/;

/**
 * Why a field's value is not one restgraph wrote (undefined when it is): a file value is exactly
 * `{name, type, size, url, etag}`, the etag quoting a storage key of restgraph's form (so no path,
 * `../` or a name of the client's choosing), the name as uploads sanitise it, the url a path; a
 * `multiple` field's a list of those, each key once.
 */
export function fileValueProblem(field: FieldModel, value: unknown): string | undefined {
  const items: unknown[] = field.multiple === true ? (Array.isArray(value) ? value : []) : [value];
  if (field.multiple === true && !Array.isArray(value)) return 'must be a list of file values';
  if (field.multiple !== true && Array.isArray(value)) return 'must be one file value, not a list';
  const keys = new Set<string>();
  for (const item of items) {
    const problem = singleProblem(item);
    if (problem !== undefined) return problem;
    const key = keyOf(item) as string;
    if (keys.has(key)) return `holds the file ${key} twice`;
    keys.add(key);
  }
  return undefined;
}

function singleProblem(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'must be a file value {"name","type","size","url","etag"}';
  const { name, type, size, url, etag, ...rest } = item as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) return `is not a file value: it has ${extra.slice(0, 3).join(', ')}`;
  if (typeof etag !== 'string' || !/^".*"$/s.test(etag) || !isFileKey(etag.slice(1, -1))) return `is not a file value restgraph wrote: its etag must quote a storage key (22 characters of A-Z a-z 0-9 _ -), not ${shown(etag)}`;
  if (typeof name !== 'string' || name === '' || sanitizeFileName(name) !== name) return `is not a file value restgraph wrote: its name ${shown(name)} is not a file name as an upload keeps it`;
  if (typeof type !== 'string' || !MEDIA_TYPE.test(type)) return `is not a file value restgraph wrote: its type ${shown(type)} is not a media type`;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return `is not a file value restgraph wrote: its size ${shown(size)} is not a number of bytes`;
  if (typeof url !== 'string' || !url.startsWith('/') || url.startsWith('//') || url.length > MAX_URL || UNSAFE_URL.test(url)) return `is not a file value restgraph wrote: its url ${shown(url)} is not a path`;
  return undefined;
}

function shown(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
