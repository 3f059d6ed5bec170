import { randomBytes } from 'node:crypto';
import type { FieldModel, ResourceModel, SchemaModel } from '../schema/schema-model.js';
import type { StoredEvent } from '../store/event-store.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { RecordStore } from '../store/record-store.js';
import type { FileStorage } from './file-storage.js';
import type { RecordId } from '../schema/record-key.js';

/**
 * What the core knows of file values (docs/files.md#the-value-of-a-file-field): the row stores the
 * API value itself, and the storage key is the random token inside its entity tag. Also the
 * deletions after commit and the orphan sweep, which keep storage and rows consistent.
 */

/** One file as a row holds it and every answer shows it. */
export interface FileValue {
  name: string;
  type: string;
  size: number;
  url: string;
  etag: string;
}

/** A new storage key: 128 random bits, URL- and file-name-safe, never reused. */
export function newFileKey(): string {
  return randomBytes(16).toString('base64url');
}

const KEY = /^[A-Za-z0-9_-]{22}$/;

/** Whether `text` has the form of a storage key (so a path segment can name one). */
export function isFileKey(text: string): boolean {
  return KEY.test(text);
}

const DERIVED_KEY = /^[A-Za-z0-9_-]{22}\.[0-9a-z]{1,16}$/;

/**
 * The key of a file derived from the file under `key` (a thumbnail: `<key>.100x100c`). Storage
 * deletes a file's derived files with it, and lists only the files themselves.
 */
export function derivedKey(key: string, variant: string): string {
  const derived = `${key}.${variant}`;
  if (!DERIVED_KEY.test(derived)) throw new Error(`not a derived key: ${derived}`);
  return derived;
}

/** Whether `text` has the form of a stored file's key or of a derived file's (`<key>.<variant>`). */
export function isStorageKey(text: string): boolean {
  return KEY.test(text) || DERIVED_KEY.test(text);
}

/** The storage key of a file value (its entity tag's inside), or undefined when the value is not one. */
export function keyOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || !('etag' in value) || typeof value.etag !== 'string') return undefined;
  const key = value.etag.replace(/^"|"$/g, '');
  return isFileKey(key) ? key : undefined;
}

/** The files a field's value holds (none, one, or a list). */
export function filesIn(value: unknown): FileValue[] {
  const items = Array.isArray(value) ? (value as unknown[]) : value === null || value === undefined ? [] : [value];
  return items.filter((item): item is FileValue => keyOf(item) !== undefined);
}

/** The file fields of a resource. */
export function fileFieldsOf(resource: ResourceModel): FieldModel[] {
  return resource.writableFields.filter((f) => f.type === 'file');
}

/** Whether any resource of the schema has file fields (else there is no file storage, and no file to carry or clean up). */
export function hasFileFields(schema: SchemaModel): boolean {
  return [...schema.resources.values()].some((r) => fileFieldsOf(r).length > 0);
}

/**
 * The values of uploaded files for a row (a multipart write's, a GraphQL upload's): each file's
 * `url` names the row and field (and, in a `multiple` field, the file's key); a single field
 * holds its one file, a `multiple` one the list.
 */
export function locatedFileValues(resource: ResourceModel, files: ReadonlyMap<FieldModel, readonly FileValue[]>, id: RecordId): Record<string, FileValue | FileValue[]> {
  const values: Record<string, FileValue | FileValue[]> = {};
  for (const [field, list] of files) {
    const located = list.map((file) => ({ ...file, url: fileUrl(resource, field, id, keyOf(file) ?? '') }));
    values[field.name] = field.multiple === true ? located : (located[0] as FileValue);
  }
  return values;
}

/** Where a file is downloaded from: its row's field (`/users/7/avatar`), and in a `multiple` field its key too. */
export function fileUrl(resource: ResourceModel, field: FieldModel, id: RecordId, key: string): string {
  return `/${resource.name}/${id}/${field.name}${field.multiple === true ? `/${key}` : ''}`;
}

/**
 * Deletes uploaded files no row will reference (the write that was to reference them failed, or
 * was never made), now rather than at the orphan sweep an hour later. A failure is left to the sweep.
 */
export async function discardUploads(storage: FileStorage, files: readonly FileValue[]): Promise<void> {
  await Promise.all(files.map((file) => storage.delete(keyOf(file) ?? '').catch(() => undefined)));
}

/** The storage keys a row references. */
export function keysOfRecord(resource: ResourceModel, record: StoredRecord): Set<string> {
  const keys = new Set<string>();
  for (const field of fileFieldsOf(resource)) {
    for (const file of filesIn(record[field.name])) keys.add(keyOf(file) as string);
  }
  return keys;
}

/**
 * The keys committed events stopped referencing: a deleted row's files, an updated row's
 * previous files that its new value no longer has. Every write path (replace, clear, cascades,
 * imports) emits these events in its transaction, so this sees them all.
 */
export function unreferencedBy(schema: SchemaModel, events: readonly StoredEvent[]): string[] {
  const gone: string[] = [];
  for (const event of events) {
    const resource = schema.resources.get(event.resource);
    if (resource === undefined || fileFieldsOf(resource).length === 0) continue;
    const data = event.data as { object?: StoredRecord; previous?: StoredRecord };
    if (data.object === undefined) continue;
    if (event.type.endsWith('.deleted')) {
      gone.push(...keysOfRecord(resource, data.object));
    } else if (data.previous !== undefined) {
      const kept = keysOfRecord(resource, data.object);
      for (const key of keysOfRecord(resource, data.previous)) if (!kept.has(key)) gone.push(key);
    }
  }
  return gone;
}

/** Where failures of background file work go (the app's logger). */
export interface FileWorkLog {
  warn(details: Record<string, unknown>, message: string): void;
  info(details: Record<string, unknown>, message: string): void;
}

/** Deletes, after commit, the files committed events stopped referencing. Failures leave orphans for the sweep. */
export class FileCleanup {
  readonly #schema: SchemaModel;
  readonly #storage: FileStorage;
  readonly #log: FileWorkLog;
  readonly #pending = new Set<Promise<void>>();

  constructor(schema: SchemaModel, storage: FileStorage, log: FileWorkLog) {
    this.#schema = schema;
    this.#storage = storage;
    this.#log = log;
  }

  committed(events: readonly StoredEvent[]): void {
    for (const key of unreferencedBy(this.#schema, events)) this.delete(key);
  }

  /** Deletes one file in the background (tracked, so close() waits for it). */
  delete(key: string): void {
    const work = this.#storage.delete(key).catch((error: unknown) => {
      this.#log.warn({ key, err: error }, 'could not delete a file no row references; the orphan sweep will');
    });
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
  }

  /** Resolves once the deletions under way are done. */
  async settled(): Promise<void> {
    await Promise.all([...this.#pending]);
  }
}

/** How old an unreferenced file must be before the sweep deletes it: younger ones may be uploads under way. */
export const ORPHAN_AGE_MS = 60 * 60 * 1000;

/**
 * Deletes the stored files no row references that are older than `minAgeMs`. Reads the keys the
 * rows hold first, then lists storage: a file stored after the read is younger than the age and
 * kept. @returns how many it deleted
 */
export async function sweepOrphans(schema: SchemaModel, store: RecordStore, storage: FileStorage, options: { minAgeMs?: number; now?: Date } = {}): Promise<number> {
  const referenced = await referencedKeys(schema, store);
  const before = (options.now ?? new Date()).getTime() - (options.minAgeMs ?? ORPHAN_AGE_MS);
  let deleted = 0;
  for await (const file of storage.list()) {
    if (referenced.has(file.key) || file.modified.getTime() > before) continue;
    await storage.delete(file.key);
    deleted++;
  }
  return deleted;
}

const SWEEP_PAGE = 500;

/** Every storage key the rows of every resource reference, read in keyset pages. */
async function referencedKeys(schema: SchemaModel, store: RecordStore): Promise<Set<string>> {
  const keys = new Set<string>();
  for (const resource of schema.resources.values()) {
    const fields = fileFieldsOf(resource);
    if (fields.length === 0) continue;
    const filters = [{ field: '', op: 'any' as const, value: fields.map((f) => ({ field: f.name, op: 'isNull' as const, value: false })) }];
    let after: unknown[] | undefined;
    for (;;) {
      const rows = await store.list(resource, { filters, sort: [{ field: 'id', direction: 'asc' }], limit: SWEEP_PAGE, columns: ['id', ...fields.map((f) => f.name)], ...(after === undefined ? {} : { after }) });
      for (const row of rows) for (const key of keysOfRecord(resource, row)) keys.add(key);
      if (rows.length < SWEEP_PAGE) break;
      after = [rows[rows.length - 1]?.id];
    }
  }
  return keys;
}
