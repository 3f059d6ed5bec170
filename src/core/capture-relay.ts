import { RetryBackoff, type WorkerLog } from '../retry-backoff.js';
import { recordId } from '../schema/record-key.js';
import { canonicalFields, type ResourceModel, type SchemaModel } from '../schema/schema-model.js';
import { CapturedChangeStore, type CapturedChange } from '../store/capture/captured-change-store.js';
import type { EventStore, NewEvent, StoredEvent } from '../store/event-store.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { SqlDatabase, SqlRow } from '../store/sql-database.js';
import { changedFrom, eventOf } from './change-events.js';

/**
 * The relay of captured changes (docs/existing-database.md#events-for-writes-made-by-other-programs):
 * turns each row another program inserted, updated or deleted in a mapped table, as the capture
 * triggers recorded it, into the event restgraph's own write of it would have made
 * (`film.created`, with the object as REST returns it; `previous` on updates), appended to the
 * outbox in capture order. The captured rows are deleted in the transaction that appends their
 * events: each change has its event exactly once, whatever stops the process.
 */

export interface CaptureRelayOptions {
  /** The mapped schema served. */
  schema: SchemaModel;
  /** PostgreSQL: the schema of restgraph's own objects (systemSchemaName). */
  systemSchema: string;
  /**
   * A row (as a SELECT of the table returns it, keyed by field name) as REST returns it: the record
   * store's decoder of the resource's rows (RecordStore.decodeRow). The captured images are read
   * typed as the table's own columns (PostgreSQL: `jsonb_populate_record` over its row type, through
   * the driver's type parsers; SQLite: its JSON functions), so they decode as a read of the row does.
   */
  decodeRow: (resource: ResourceModel, row: SqlRow) => StoredRecord;
  /** Most captured changes one transaction relays. @default 100 */
  batchSize?: number;
  /** How often the captured-changes table is looked at without a signal (SQLite has none). @default 1000 (ms) */
  pollIntervalMs?: number;
  /** Called after events were appended (to wake this process's readers of the outbox). */
  onAppended?: (events: readonly StoredEvent[]) => void;
}

export class CaptureRelay {
  readonly #db: SqlDatabase;
  readonly #events: EventStore;
  readonly #changes: CapturedChangeStore;
  readonly #byTable = new Map<string, ResourceModel>();
  readonly #decodeRow: (resource: ResourceModel, row: SqlRow) => StoredRecord;
  readonly #batchSize: number;
  readonly #pollIntervalMs: number;
  readonly #onAppended: ((events: readonly StoredEvent[]) => void) | undefined;
  #backoff = new RetryBackoff('relaying captured changes', { failing: () => undefined, recovered: () => undefined });
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = true;

  constructor(db: SqlDatabase, events: EventStore, options: CaptureRelayOptions) {
    this.#db = db;
    this.#events = events;
    const tables = [];
    for (const resource of options.schema.resources.values()) {
      const mapping = resource.mapping;
      if (mapping === undefined || mapping.readOnly) continue;
      this.#byTable.set(mapping.table, resource);
      tables.push({ table: mapping.table, columns: canonicalFields(resource).map((f) => [f.name, mapping.columns.get(f.name) ?? f.name] as const) });
    }
    const databaseSchema = options.schema.mapping?.schema;
    this.#changes = new CapturedChangeStore(db, { systemSchema: options.systemSchema, tables, ...(databaseSchema === undefined ? {} : { databaseSchema }) });
    this.#decodeRow = options.decodeRow;
    this.#batchSize = Math.max(1, Math.min(options.batchSize ?? 100, 1000));
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.#onAppended = options.onAppended;
  }

  /**
   * Relays one batch of the oldest captured changes in one transaction; resolves to how many were
   * consumed (0: none waits, or another process relays just now).
   */
  async relayOnce(): Promise<number> {
    const { consumed, events } = await this.#db.transaction(async (tx) => {
      const changes = await this.#changes.take(tx, this.#batchSize);
      const last = changes?.at(-1);
      if (changes === undefined || last === undefined) return { consumed: 0, events: [] as StoredEvent[] };
      const appended = await this.#events.append(tx, changes.flatMap((change) => this.#eventOf(change)));
      await this.#changes.consume(tx, last.seq);
      return { consumed: changes.length, events: appended };
    });
    if (events.length > 0) {
      this.#events.announce();
      this.#onAppended?.(events);
    }
    return consumed;
  }

  /** Relays whatever waits, then on every signal and poll; `log` hears of failures (retried with backoff) and recoveries. */
  async start(log: WorkerLog): Promise<void> {
    this.#stopped = false;
    this.#backoff = new RetryBackoff('relaying captured changes', log);
    await this.#changes.watch(() => this.notify()).catch((error: unknown) => log.failing(error, 'listening for captured changes failed; polling only'));
    this.notify();
  }

  /** Looks at the captured changes again now. */
  notify(): void {
    if (this.#stopped) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#running = this.#pump().finally(() => {
      this.#running = undefined;
      if (this.#stopped) return;
      if (this.#again) {
        this.#again = false;
        this.notify();
        return;
      }
      const delay = this.#backoff.waiting() ? this.#backoff.remainingMs() : this.#pollIntervalMs;
      this.#timer = setTimeout(() => this.notify(), delay);
      this.#timer.unref();
    });
  }

  /** Stops after the batch under way (its transaction commits or rolls back as a whole). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** Batches until none is full (each its own transaction), at most 10 before the next turn. */
  async #pump(): Promise<void> {
    if (this.#backoff.waiting()) return;
    try {
      if (!(await this.#changes.waiting())) return;
      for (let batches = 0; batches < 10 && !this.#stopped; batches++) {
        if ((await this.relayOnce()) < this.#batchSize) break;
        if (batches === 9) this.#again = true;
      }
      this.#backoff.succeeded();
    } catch (error) {
      this.#backoff.failed(error);
    }
  }

  /** The event of one captured change (none for a table the schema does not map, or a row without its key). */
  #eventOf(change: CapturedChange): NewEvent[] {
    const resource = this.#byTable.get(change.table);
    if (resource === undefined) return [];
    const before = change.before === undefined ? undefined : this.#decodeRow(resource, change.before);
    const after = change.after === undefined ? undefined : this.#decodeRow(resource, change.after);
    const object = after ?? before;
    if (object === undefined) return [];
    const id = recordId(resource, object);
    if (id === undefined) return [];
    const event =
      change.operation === 'insert'
        ? eventOf('created', resource, object)
        : change.operation === 'delete' || before === undefined
          ? eventOf('deleted', resource, object)
          : eventOf('updated', resource, object, changedFrom(before, object));
    // A text, uuid or composite key names the record as a string (RecordId), as restgraph's own writes name it.
    return [{ ...event, recordId: id, occurredAt: change.capturedAt }];
  }
}
