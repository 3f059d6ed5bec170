import { DatabaseNotEmptyError, ImportRejectedError, type RejectedRow } from '../errors.js';
import type { FieldModel, ResourceModel, SchemaModel } from '../schema/schema-model.js';
import { BulkRows } from '../store/bulk-rows.js';
import { EventStore } from '../store/event-store.js';
import { ImportLedger, type ReferringRow, type WaitingRow } from '../store/import-ledger.js';
import type { StoredCredentials } from '../store/credential-store.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { SqlDatabase, SqlExecutor } from '../store/sql-database.js';
import { eventOf } from './change-events.js';
import { ImportCredentials } from './import-credentials.js';
import { importedRecord } from './import-record.js';
import { RecordValidator } from './record-validator.js';
import { RejectedRows, shown } from './rejected-rows.js';
import { caseFoldedFields } from '../schema/identifier-case.js';
import { insertedRows } from './import-row-inserts.js';

/**
 * Records in bulk into the database, in one transaction: the operation behind `restgraph import`.
 *
 * - Ids given are kept; rows without one get the next ids of their resource, after every row with
 *   an id is in (so a given id never meets an assigned one). Id generators move past the ids
 *   before the rows go in (a create running beside the import never takes one).
 * - Values are checked by the field types (the request validator's JSON Schema), ids and unique
 *   fields against the rows before them (of the table and of the import). `restore` mode takes
 *   records as an export wrote them: createdAt and updatedAt kept, null allowed anywhere.
 * - References must point to a row of the database or of the import (earlier or later in it):
 *   checked at the end, in SQL. With `skipInvalid`, a row pointing at a row taken out goes too.
 * - Every rejected row is reported with its line and reason (the first 1,000 by line, then a
 *   count). With any rejected, nothing is imported ({@link ImportRejectedError}), unless
 *   `skipInvalid`: then the others are.
 * - Events (`<resource>.created` in the outbox) only when asked.
 *
 * Memory stays bounded by a batch: rows are written as they come, and what the import must
 * remember (each row's line, the rows without ids) is kept in its transaction
 * ({@link ImportLedger}), not in the process.
 */

/** One record to import, from line `line` of its file. */
export interface ImportItem {
  line: number;
  resource: ResourceModel;
  record: unknown;
  /** The account's credentials, as `export data --with-credentials` writes them (accounts/exported-credentials.ts). */
  credentials?: unknown;
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
  /** Last work in the import's transaction, once its rows are in: committed with them, or not at all. */
  beforeCommit?: (tx: SqlExecutor, result: BulkImportResult) => Promise<void>;
}

export interface BulkImportResult {
  /** Rows imported, by resource, in the order first written. */
  imported: Map<string, number>;
  /** Rows rejected, by line: the first 1,000 (with skipInvalid the others were imported). */
  rejected: RejectedRow[];
  /** How many rows were rejected in all. */
  rejectedCount: number;
}

/** Rows a batch collects before it is written. */
const BATCH_ROWS = 1000;

interface PendingRow {
  line: number;
  record: StoredRecord;
  credentials?: StoredCredentials | undefined;
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
    this.#validator = new RecordValidator(schema.resources.values(), caseFoldedFields(schema));
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
      const run = new ImportRun(this.#schema, this.#validator, this.#rows, this.#events, tx, options, this.#db);
      const ledger = await run.start(this.#db);
      for await (const item of items) await run.add(item);
      const result = await run.finish();
      if (result.rejectedCount > 0 && options.skipInvalid !== true) {
        const n = result.rejectedCount;
        throw new ImportRejectedError(`${n} row${n === 1 ? ' was' : 's were'} rejected, so nothing was imported (--skip-invalid imports the others).`, { rows: result.rejected, count: n });
      }
      await ledger.drop();
      await options.beforeCommit?.(tx, result);
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
  readonly #db: SqlDatabase;
  #ledger!: ImportLedger;
  readonly #options: BulkImportOptions;
  readonly #now = new Date().toISOString();
  readonly #credentials: ImportCredentials;
  readonly #imported = new Map<string, number>();
  readonly #rejected = new RejectedRows();
  /** Rows with ids, by resource, waiting to be written (a file that alternates resources still writes full batches). */
  readonly #batches = new Map<ResourceModel, PendingRow[]>();
  /** Rows without ids, by resource, waiting to go to the ledger. */
  readonly #idless = new Map<ResourceModel, PendingRow[]>();
  /** Resources with rows without ids in the ledger. */
  readonly #waiting = new Set<ResourceModel>();

  constructor(schema: SchemaModel, validator: RecordValidator, rows: BulkRows, events: EventStore, tx: SqlExecutor, options: BulkImportOptions, db: SqlDatabase) {
    this.#schema = schema;
    this.#validator = validator;
    this.#rows = rows;
    this.#events = events;
    this.#tx = tx;
    this.#options = options;
    this.#credentials = new ImportCredentials(db, schema, this.#now);
    this.#db = db;
  }

  /** Learns which tables have rows (with `requireEmpty`, refuses if any has), then starts the ledger. */
  async start(db: SqlDatabase): Promise<ImportLedger> {
    const withRows = new Set<string>();
    for (const resource of this.#schema.resources.values()) if (await this.#rows.hasRows(resource, this.#tx)) withRows.add(resource.name);
    if (this.#options.requireEmpty === true && withRows.size > 0) {
      throw new DatabaseNotEmptyError(
        `The database already has rows in ${[...withRows].join(', ')}: import data fills an empty database (--allow-existing-rows imports beside them, rejecting rows whose ids are taken).`,
      );
    }
    // On PostgreSQL, other writers of these tables wait until the import commits (as on SQLite):
    // no create takes an id between the generator's move and the rows, nor adds rows it would
    // count as its own.
    const lock = db.rules.lockForImport([...this.#schema.resources.keys()]);
    if (lock !== undefined) await this.#tx.run(lock);
    this.#ledger = await ImportLedger.create(db, this.#tx, withRows);
    return this.#ledger;
  }

  async add(item: ImportItem | UnreadableItem): Promise<void> {
    if ('unreadable' in item) {
      this.#reject(item.line, item.resource, item.unreadable);
      return;
    }
    const { line, resource } = item;
    const checked = importedRecord(this.#validator, resource, item.record, this.#options.mode, this.#now);
    if (typeof checked === 'string') {
      this.#reject(line, resource.name, checked);
      return;
    }
    const credentials = item.credentials === undefined ? undefined : this.#credentials.check(resource, checked, item.credentials);
    if (typeof credentials === 'string') {
      this.#reject(line, resource.name, credentials);
      return;
    }
    const pending = checked.id === undefined ? this.#idless : this.#batches;
    let rows = pending.get(resource);
    if (rows === undefined) pending.set(resource, (rows = []));
    rows.push({ line, record: checked, credentials });
    if (rows.length < BATCH_ROWS) return;
    pending.delete(resource);
    if (checked.id === undefined) await this.#keepIdless(resource, rows);
    else await this.#flush(resource, rows);
  }

  async finish(): Promise<BulkImportResult> {
    for (const [resource, rows] of this.#batches) await this.#flush(resource, rows);
    for (const [resource, rows] of this.#idless) await this.#keepIdless(resource, rows);
    // Every row with an id is in: number the others after them.
    for (const resource of this.#waiting) {
      for await (const page of this.#ledger.waiting(resource)) await this.#writeNumbered(resource, page);
    }
    const removed = await this.#checkReferences();
    for (const [resource, ids] of removed) {
      await this.#rows.deleteIds(this.#tx, resource, ids);
      await this.#credentials.forget(this.#tx, resource, ids);
      this.#count(resource, -ids.length);
    }
    if (this.#options.events === true && (this.#rejected.count === 0 || this.#options.skipInvalid === true)) await this.#writeEvents();
    return { imported: this.#imported, rejected: this.#rejected.rows, rejectedCount: this.#rejected.count };
  }

  /** Writes the batch of rows with ids, but those whose id or unique values are taken. */
  async #flush(resource: ResourceModel, batch: readonly PendingRow[]): Promise<void> {
    const rows = await this.#unique(resource, await this.#newIds(resource, batch));
    if (rows.length === 0) return;
    // The id generator first, past these ids.
    await this.#rows.reserveIds(this.#tx, resource, Math.max(...rows.map((r) => r.record.id as number)));
    await this.#write(resource, rows);
  }

  /** Rows without ids to the ledger, until every row with an id is in. */
  async #keepIdless(resource: ResourceModel, rows: readonly PendingRow[]): Promise<void> {
    await this.#ledger.wait(resource, rows);
    this.#waiting.add(resource);
  }

  /** Rows without ids, numbered after every id in use and written. */
  async #writeNumbered(resource: ResourceModel, page: readonly WaitingRow[]): Promise<void> {
    const rows = await this.#unique(resource, page);
    if (rows.length === 0) return;
    const first = await this.#rows.reserveIds(this.#tx, resource, 0, rows.length);
    for (const [i, row] of rows.entries()) row.record.id = first + i;
    await this.#write(resource, rows);
  }

  async #write(resource: ResourceModel, batch: readonly PendingRow[]): Promise<void> {
    const rows = await insertedRows(this.#db, this.#tx, this.#rows, resource, batch, (row, reason) => this.#reject(row.line, resource.name, reason));
    if (rows.length === 0) return;
    await this.#credentials.write(this.#tx, resource, rows);
    await this.#ledger.written(resource, rows.map((r) => ({ id: r.record.id as number, line: r.line })));
    this.#count(resource, rows.length);
  }

  /** The rows whose ids are neither earlier in the import nor (where it had rows) in the table. */
  async #newIds(resource: ResourceModel, batch: readonly PendingRow[]): Promise<PendingRow[]> {
    const ids = batch.map((r) => r.record.id as number);
    const inTable = await this.#rows.existingIds(this.#tx, resource, ids);
    // Of those, the ones the import wrote (a few, if any: rows being rejected).
    const imported = inTable.size === 0 ? new Map<number, number>() : await this.#ledger.linesOf(resource, [...inTable]);
    const seen = new Map<number, number>();
    return batch.filter((row) => {
      const id = row.record.id as number;
      const earlier = imported.get(id) ?? seen.get(id);
      if (earlier !== undefined) this.#reject(row.line, resource.name, `/id: ${id} is already imported from line ${earlier}`);
      else if (inTable.has(id)) this.#reject(row.line, resource.name, `/id: ${id} already exists in ${resource.name}`);
      else {
        seen.set(id, row.line);
        return true;
      }
      return false;
    });
  }

  /** The rows whose unique fields hold values no row before them holds (in the batch, the import or the table). */
  async #unique<T extends PendingRow>(resource: ResourceModel, rows: readonly T[]): Promise<T[]> {
    let kept = [...rows];
    for (const field of uniqueFields(resource)) {
      const encoded = (row: PendingRow): unknown => this.#rows.encode(field, row.record[field.name]);
      const values = kept.map(encoded).filter((v) => v !== null && v !== undefined);
      if (values.length === 0) continue;
      const taken = new Set([...(await this.#rows.existingValues(this.#tx, resource, field.name, values))].map(keyOf));
      kept = kept.filter((row) => {
        const value = encoded(row);
        if (value === null || value === undefined) return true;
        const key = keyOf(value);
        if (taken.has(key)) {
          this.#reject(row.line, resource.name, `/${field.name}: ${shown(row.record[field.name])} is already taken (unique)`);
          return false;
        }
        taken.add(key);
        return true;
      });
    }
    return kept;
  }

  /**
   * Rejects the import's rows whose references point to no row, and (with `skipInvalid`) every
   * row pointing at a row rejected so, and so on; returns those to take out again, by resource.
   */
  async #checkReferences(): Promise<Map<ResourceModel, number[]>> {
    const removed = new Map<ResourceModel, number[]>();
    const reasons = new Map<string, { resource: ResourceModel; row: ReferringRow; reasons: string[] }>();
    for (const resource of this.#schema.resources.values()) {
      for (const [field, target] of referencesOf(this.#schema, resource)) {
        for (const row of await this.#ledger.dangling(resource, field, target)) {
          const key = `${resource.name}:${row.id}`;
          const found = reasons.get(key) ?? { resource, row, reasons: [] };
          found.reasons.push(missing(field, target, row.value));
          reasons.set(key, found);
        }
      }
    }
    let next = new Map<ResourceModel, number[]>();
    for (const { resource, row, reasons: why } of reasons.values()) {
      this.#reject(row.line, resource.name, why.join('; '));
      push(next, resource, row.id);
    }
    if (this.#options.skipInvalid !== true) return removed;
    const gone = new Set(reasons.keys());
    // Rows pointing at the rows taken out, until none is left.
    while (next.size > 0) {
      const now = next;
      next = new Map();
      for (const [target, ids] of now) {
        for (const id of ids) push(removed, target, id);
        for (const resource of this.#schema.resources.values()) {
          for (const [field, pointsTo] of referencesOf(this.#schema, resource)) {
            if (pointsTo !== target) continue;
            for (const row of await this.#ledger.referring(resource, field, ids)) {
              const key = `${resource.name}:${row.id}`;
              if (gone.has(key)) continue;
              gone.add(key);
              this.#reject(row.line, resource.name, missing(field, target, row.value));
              push(next, resource, row.id);
            }
          }
        }
      }
    }
    return removed;
  }

  /** A created event for every row imported, resource by resource, by id. */
  async #writeEvents(): Promise<void> {
    for (const name of this.#imported.keys()) {
      const resource = this.#schema.resources.get(name);
      if (resource === undefined) continue;
      for await (const page of this.#ledger.importedRows(resource)) await this.#events.append(this.#tx, page.map((record) => eventOf('created', resource, record)));
    }
  }

  #count(resource: ResourceModel, n: number): void {
    const total = (this.#imported.get(resource.name) ?? 0) + n;
    if (total > 0) this.#imported.set(resource.name, total);
    else this.#imported.delete(resource.name);
  }

  #reject(line: number, resource: string, reason: string): void {
    this.#rejected.add({ line, resource, reason });
  }
}

function missing(field: FieldModel, target: ResourceModel, value: number): string {
  return `/${field.name}: ${target.name} ${value} does not exist (neither in the database nor in the import)`;
}

function push(map: Map<ResourceModel, number[]>, resource: ResourceModel, id: number): void {
  const list = map.get(resource);
  if (list === undefined) map.set(resource, [id]);
  else list.push(id);
}

/** A stored value as a key: drivers hand back bigint columns as text, so numbers compare as text. */
function keyOf(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    default:
      return JSON.stringify(value);
  }
}

const uniqueCache = new WeakMap<ResourceModel, FieldModel[]>();

function uniqueFields(resource: ResourceModel): FieldModel[] {
  let fields = uniqueCache.get(resource);
  if (fields === undefined) uniqueCache.set(resource, (fields = resource.writableFields.filter((f) => f.unique)));
  return fields;
}

/** The reference fields of `resource`, each with the resource it points to. */
function referencesOf(schema: SchemaModel, resource: ResourceModel): [FieldModel, ResourceModel][] {
  const pairs: [FieldModel, ResourceModel][] = [];
  for (const field of resource.writableFields) {
    const target = field.references === undefined ? undefined : schema.resources.get(field.references);
    if (target !== undefined) pairs.push([field, target]);
  }
  return pairs;
}
