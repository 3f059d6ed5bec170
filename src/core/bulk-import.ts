import { DatabaseNotEmptyError, ImportRejectedError, ValidationError, type RejectedRow } from '../errors.js';
import { canonicalFields, type FieldModel, type ResourceModel, type SchemaModel } from '../schema/schema-model.js';
import { BulkRows } from '../store/bulk-rows.js';
import { EventStore, type NewEvent } from '../store/event-store.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { SqlDatabase, SqlExecutor } from '../store/sql-database.js';
import { eventOf } from './change-events.js';
import { isPlainObject } from './merge-patch.js';
import { RecordValidator } from './record-validator.js';

/**
 * Records in bulk into the database, in one transaction: the operation behind `restgraph import`.
 *
 * - Ids given are kept; rows without one get the next ids of their resource, after every row with
 *   an id is in (so a given id never meets an assigned one). Id generators end past the largest id.
 * - Values are checked by the field types (the request validator's JSON Schema). `restore` mode
 *   takes records as an export wrote them: createdAt and updatedAt kept, null allowed anywhere.
 * - References must point to a row of the database or of the import (earlier or later in it).
 * - Every rejected row is reported with its line and reason. With any rejected, nothing is
 *   imported ({@link ImportRejectedError}), unless `skipInvalid`: then the others are.
 * - Events (`<resource>.created` in the outbox) only when asked.
 *
 * Rows with ids are written in batches as they come, so memory stays bounded by the batch, the ids
 * seen (to check references and duplicates) and the rows without ids (held until the end).
 */

/** One record to import, from line `line` of its file. */
export interface ImportItem {
  line: number;
  resource: ResourceModel;
  record: unknown;
}

/** A line the source could not make into a record (not JSON, unknown resource, …): rejected as it is. */
export interface UnreadableItem {
  line: number;
  resource: string;
  unreadable: string;
}

export interface BulkImportOptions {
  /** `restore`: records as exported (see above); `create`: records as a POST body, plus id and timestamps if given. */
  mode: 'restore' | 'create';
  /** Import the valid rows when some are rejected (default: nothing imported). */
  skipInvalid?: boolean;
  /** Write a created event to the outbox for each row (default: none). */
  events?: boolean;
  /** Refuse when any resource's table has rows (a whole-database import). */
  requireEmpty?: boolean;
}

export interface BulkImportResult {
  /** Rows imported, by resource, in the order first met. */
  imported: Map<string, number>;
  /** Rows rejected (all of them; with skipInvalid the others were imported). */
  rejected: RejectedRow[];
}

/** Rows a batch collects before it is written. */
const BATCH_ROWS = 1000;

interface PendingRow {
  line: number;
  record: StoredRecord;
}

/** A row whose reference field `field` holds `value`, found neither in the import so far nor in the table. */
interface MissingReference {
  row: PendingRow;
  line: number;
  record: StoredRecord;
  field: FieldModel;
  value: number;
}

/** A reference not found when its row was written: found later in the import, or the row is rejected. */
interface OpenReference {
  line: number;
  /** The row as written (its event, if events are on, waits until the reference is found). */
  record: StoredRecord;
  resource: ResourceModel;
  id: number;
  field: FieldModel;
  value: number;
}

export class BulkImport {
  readonly #db: SqlDatabase;
  readonly #schema: SchemaModel;
  readonly #validator: RecordValidator;
  readonly #rows: BulkRows;
  readonly #events: EventStore;

  constructor(db: SqlDatabase, schema: SchemaModel) {
    this.#db = db;
    this.#schema = schema;
    this.#validator = new RecordValidator(schema.resources.values());
    this.#rows = new BulkRows(db);
    this.#events = new EventStore(db);
  }

  /**
   * Imports `items` in one transaction.
   *
   * @throws DatabaseNotEmptyError with `requireEmpty`, naming the resources that have rows.
   * @throws ImportRejectedError when rows were rejected and not `skipInvalid`: nothing imported.
   */
  async run(items: AsyncIterable<ImportItem | UnreadableItem>, options: BulkImportOptions): Promise<BulkImportResult> {
    return this.#db.transaction(async (tx) => {
      const run = new ImportRun(this.#schema, this.#validator, this.#rows, this.#events, tx, options);
      await run.start();
      for await (const item of items) await run.add(item);
      const result = await run.finish();
      if (result.rejected.length > 0 && options.skipInvalid !== true) {
        const n = result.rejected.length;
        throw new ImportRejectedError(`${n} row${n === 1 ? ' was' : 's were'} rejected, so nothing was imported (--skip-invalid imports the others).`, { rows: result.rejected });
      }
      return result;
    });
  }
}

/** The state of one import, inside its transaction. */
class ImportRun {
  readonly #schema: SchemaModel;
  readonly #validator: RecordValidator;
  readonly #rows: BulkRows;
  readonly #events: EventStore;
  readonly #tx: SqlExecutor;
  readonly #options: BulkImportOptions;
  readonly #now = new Date().toISOString();
  /** Ids of each resource written by this import. */
  readonly #ids = new Map<string, Set<number>>();
  /** Whether each resource's table had rows before (then ids and references are also looked up in it). */
  readonly #hadRows = new Map<string, boolean>();
  readonly #imported = new Map<string, number>();
  readonly #rejected: RejectedRow[] = [];
  readonly #open: OpenReference[] = [];
  /** Events of rows whose references were found after they were written (written at the end). */
  readonly #resolvedEvents: NewEvent[] = [];
  /** Resources this import wrote rows with ids to (their id generators move past them). */
  readonly #wroteIds = new Set<string>();
  /** Rows with ids, waiting to be written (one resource at a time). */
  #batch: PendingRow[] = [];
  #batchResource: ResourceModel | undefined;
  /** Rows without ids, by resource: written at the end. */
  readonly #withoutIds = new Map<ResourceModel, PendingRow[]>();

  constructor(schema: SchemaModel, validator: RecordValidator, rows: BulkRows, events: EventStore, tx: SqlExecutor, options: BulkImportOptions) {
    this.#schema = schema;
    this.#validator = validator;
    this.#rows = rows;
    this.#events = events;
    this.#tx = tx;
    this.#options = options;
  }

  /** Learns which tables have rows (ids and references are then also looked up in them); with `requireEmpty`, refuses if any has. */
  async start(): Promise<void> {
    for (const resource of this.#schema.resources.values()) this.#hadRows.set(resource.name, await this.#rows.hasRows(resource, this.#tx));
    const withRows = [...this.#hadRows].filter(([, had]) => had).map(([name]) => name);
    if (this.#options.requireEmpty === true && withRows.length > 0) {
      throw new DatabaseNotEmptyError(
        `The database already has rows in ${withRows.join(', ')}: import data fills an empty database (--allow-existing-rows imports beside them, rejecting rows whose ids are taken).`,
      );
    }
  }

  async add(item: ImportItem | UnreadableItem): Promise<void> {
    if ('unreadable' in item) {
      this.#reject(item.line, item.resource, item.unreadable);
      return;
    }
    const { line, resource } = item;
    const checked = this.#check(resource, item.record);
    if (typeof checked === 'string') {
      this.#reject(line, resource.name, checked);
      return;
    }
    const id = checked.id as number | undefined;
    if (id === undefined) {
      let rows = this.#withoutIds.get(resource);
      if (rows === undefined) this.#withoutIds.set(resource, (rows = []));
      rows.push({ line, record: checked });
      return;
    }
    const ids = this.#idsOf(resource);
    if (ids.has(id)) {
      this.#reject(line, resource.name, `/id: ${id} is already imported from an earlier line`);
      return;
    }
    ids.add(id);
    if (this.#batchResource !== resource || this.#batch.length >= BATCH_ROWS) await this.#flush();
    this.#batchResource = resource;
    this.#batch.push({ line, record: checked });
  }

  async finish(): Promise<BulkImportResult> {
    await this.#flush();
    const unresolved = this.#closeReferences();
    const withoutIds = new Map<ResourceModel, PendingRow[]>();
    for (const [resource, rows] of this.#withoutIds) withoutIds.set(resource, await this.#referencing(resource, rows));
    const result = { imported: this.#imported, rejected: this.#rejected.sort((a, b) => a.line - b.line) };
    // Rejected rows with nothing to be imported: the caller rolls back, and no id generator has moved
    // (PostgreSQL's sequences would keep the move: they are outside transactions).
    if (this.#rejected.length > 0 && this.#options.skipInvalid !== true) return result;
    // Every row with an id is in: move each generator past them, then let it number the others.
    for (const resource of this.#schema.resources.values()) {
      if (this.#wroteIds.has(resource.name)) await this.#rows.moveIdGenerator(this.#tx, resource);
    }
    for (const [resource, rows] of withoutIds) await this.#writeWithoutIds(resource, rows);
    if (this.#resolvedEvents.length > 0) await this.#events.append(this.#tx, this.#resolvedEvents);
    for (const [resource, ids] of unresolved) {
      await this.#rows.deleteIds(this.#tx, resource, ids);
      const left = (this.#imported.get(resource.name) ?? 0) - ids.length;
      if (left > 0) this.#imported.set(resource.name, left);
      else this.#imported.delete(resource.name);
    }
    return result;
  }

  /** The record as it will be stored (id, fields, timestamps, in canonical order), or why not. */
  #check(resource: ResourceModel, record: unknown): StoredRecord | string {
    if (!isPlainObject(record)) return 'must be a JSON object';
    const body: Record<string, unknown> = {};
    const problems: string[] = [];
    let id: number | undefined;
    const times: Record<string, string> = {};
    for (const [name, value] of Object.entries(record)) {
      if (name === 'id') {
        if (value === null) continue;
        if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) id = value;
        else problems.push(`/id: must be a positive integer`);
      } else if (name === 'createdAt' || name === 'updatedAt') {
        if (value === null) continue;
        const time = typeof value === 'string' && DATE_TIME.test(value) ? Date.parse(value) : NaN;
        // As an export writes them (the stored form), they are kept as they are.
        if (Number.isFinite(time)) times[name] = STORED_TIME.test(value as string) ? (value as string) : new Date(time).toISOString();
        else problems.push(`/${name}: must be a date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z)`);
      } else {
        body[name] = value;
      }
    }
    let values: StoredRecord = {};
    try {
      values = this.#validator.validate(resource, this.#options.mode === 'restore' ? 'restore' : 'create', body);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      for (const detail of error.errors ?? []) problems.push(`${detail.pointer ?? ''}: ${detail.detail}`);
      if (error.errorsOmitted > 0) problems.push(`and ${error.errorsOmitted} more`);
    }
    if (problems.length > 0) return problems.join('; ');
    const stored: StoredRecord = {};
    for (const field of canonicalFields(resource)) {
      if (field.name === 'id') stored.id = id;
      else if (field.name === 'createdAt') stored.createdAt = times.createdAt ?? this.#now;
      else if (field.name === 'updatedAt') stored.updatedAt = times.updatedAt ?? times.createdAt ?? this.#now;
      else stored[field.name] = values[field.name] ?? null;
    }
    return stored;
  }

  /** Writes the batch of rows with ids: ids already in the table and references to check first. */
  async #flush(): Promise<void> {
    const resource = this.#batchResource;
    const batch = this.#batch;
    if (resource === undefined || batch.length === 0) return;
    this.#batch = [];
    let rows = batch;
    if (this.#hadRowsBefore(resource)) {
      const taken = await this.#rows.existingIds(this.#tx, resource, batch.map((r) => r.record.id as number));
      rows = batch.filter((row) => {
        if (!taken.has(row.record.id as number)) return true;
        this.#reject(row.line, resource.name, `/id: ${String(row.record.id)} already exists in ${resource.name}`);
        return false;
      });
    }
    const open = new Set<PendingRow>();
    for (const row of await this.#missingReferences(resource, rows)) {
      this.#open.push({ line: row.line, record: row.record, field: row.field, value: row.value, resource, id: row.record.id as number });
      open.add(row.row);
    }
    await this.#write(resource, rows, true, open);
  }

  /** Rows without ids: written last, their references checked first (every row with an id is in by then). */
  /** The rows (without ids) whose references all point to a row; the others are rejected. */
  async #referencing(resource: ResourceModel, rows: PendingRow[]): Promise<PendingRow[]> {
    const missing = new Set((await this.#missingReferences(resource, rows)).map((m) => m.line));
    const valid: PendingRow[] = [];
    for (const row of rows) {
      if (missing.has(row.line)) this.#reject(row.line, resource.name, this.#referenceReason(resource, row.record));
      else valid.push(row);
    }
    return valid;
  }

  async #writeWithoutIds(resource: ResourceModel, valid: PendingRow[]): Promise<void> {
    const before = this.#options.events === true ? await this.#rows.maxId(resource, this.#tx) : 0;
    for (let start = 0; start < valid.length; start += BATCH_ROWS) await this.#write(resource, valid.slice(start, start + BATCH_ROWS), false);
    if (this.#options.events === true) {
      const events: NewEvent[] = [];
      for await (const record of this.#rows.rows(resource, BATCH_ROWS, this.#tx, before)) {
        events.push(eventOf('created', resource, record));
        if (events.length >= BATCH_ROWS) await this.#events.append(this.#tx, events.splice(0));
      }
      await this.#events.append(this.#tx, events);
    }
  }

  /** Writes rows; with ids and events on, their events too, but for the rows in `open` (written when their references are found). */
  async #write(resource: ResourceModel, rows: readonly PendingRow[], withIds: boolean, open?: ReadonlySet<PendingRow>): Promise<void> {
    if (rows.length === 0) return;
    await this.#rows.insert(this.#tx, resource, rows.map((r) => r.record), withIds);
    if (withIds) this.#wroteIds.add(resource.name);
    this.#imported.set(resource.name, (this.#imported.get(resource.name) ?? 0) + rows.length);
    if (withIds && this.#options.events === true) {
      const events = rows.filter((r) => open?.has(r) !== true).map((r) => eventOf('created', resource, r.record));
      await this.#events.append(this.#tx, events);
    }
  }

  /**
   * The rows (of `rows`) with a field whose reference is neither imported yet nor in the table it
   * points to, each with that field and value (the first such field of the row).
   */
  async #missingReferences(resource: ResourceModel, rows: readonly PendingRow[]): Promise<MissingReference[]> {
    const missing: MissingReference[] = [];
    const reported = new Set<PendingRow>();
    for (const field of referenceFields(resource)) {
      const target = this.#schema.resources.get(field.references ?? '');
      if (target === undefined) continue;
      const imported = this.#idsOf(target);
      const unknown = rows.filter((row) => {
        const value = row.record[field.name];
        return typeof value === 'number' && !imported.has(value);
      });
      if (unknown.length === 0) continue;
      const inTable = this.#hadRowsBefore(target) ? await this.#rows.existingIds(this.#tx, target, unknown.map((row) => row.record[field.name] as number)) : new Set<number>();
      for (const row of unknown) {
        const value = row.record[field.name] as number;
        if (inTable.has(value) || reported.has(row)) continue;
        reported.add(row);
        missing.push({ row, line: row.line, record: row.record, field, value });
      }
    }
    return missing;
  }

  /** References still open at the end: found among the rows imported later, or their rows are rejected (and taken out again). */
  /**
   * References still open at the end: found among the rows imported later, or their rows are
   * rejected. Returns the ids of those rows by resource (already written: to be taken out again),
   * forgotten from the ids imported at once, so rows referring to them are rejected too.
   */
  #closeReferences(): Map<ResourceModel, number[]> {
    const unresolved = new Map<ResourceModel, number[]>();
    for (const open of this.#open) {
      const target = this.#schema.resources.get(open.field.references ?? '');
      if (target !== undefined && this.#idsOf(target).has(open.value)) {
        if (this.#options.events === true) this.#resolvedEvents.push(eventOf('created', open.resource, open.record));
        continue;
      }
      this.#reject(open.line, open.resource.name, `/${open.field.name}: ${target?.name ?? ''} ${open.value} does not exist (neither in the database nor in the import)`);
      let ids = unresolved.get(open.resource);
      if (ids === undefined) unresolved.set(open.resource, (ids = []));
      ids.push(open.id);
      this.#idsOf(open.resource).delete(open.id);
    }
    return unresolved;
  }

  #referenceReason(resource: ResourceModel, record: StoredRecord): string {
    for (const field of referenceFields(resource)) {
      const value = record[field.name];
      const target = this.#schema.resources.get(field.references ?? '');
      if (typeof value === 'number' && target !== undefined && !this.#idsOf(target).has(value)) {
        return `/${field.name}: ${target.name} ${value} does not exist (neither in the database nor in the import)`;
      }
    }
    return 'a reference points to no row';
  }

  #hadRowsBefore(resource: ResourceModel): boolean {
    return this.#hadRows.get(resource.name) ?? false;
  }

  #idsOf(resource: ResourceModel): Set<number> {
    let ids = this.#ids.get(resource.name);
    if (ids === undefined) this.#ids.set(resource.name, (ids = new Set()));
    return ids;
  }

  #reject(line: number, resource: string, reason: string): void {
    this.#rejected.push({ line, resource, reason });
  }
}

/** RFC 3339 date-time, as the request validator takes it. */
/** A date-time as stored (Date.toISOString's form). */
const STORED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const referenceCache = new WeakMap<ResourceModel, FieldModel[]>();

function referenceFields(resource: ResourceModel): FieldModel[] {
  let fields = referenceCache.get(resource);
  if (fields === undefined) {
    fields = resource.writableFields.filter((f) => f.references !== undefined);
    referenceCache.set(resource, fields);
  }
  return fields;
}
