import type { ResourceModel } from '../schema/schema-model.js';
import type { RecordStore } from '../store/record-store.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { SqlDatabase, SqlExecutor } from '../store/sql-database.js';
import type { EventStore, NewEvent, StoredEvent } from '../store/event-store.js';
import { eventOf } from './change-events.js';
import { writeError } from './write-errors.js';

/**
 * Writes and their change events, committed together (transactional outbox): a committed change
 * always has its events, a rolled-back one none; the event dispatcher is told once they have
 * committed. A constraint violation comes out as the client's 409 or 422 (writeError).
 */
export class EventedWrites {
  readonly #db: SqlDatabase;
  readonly #store: RecordStore;
  readonly #events: EventStore;
  readonly #onEventsCommitted: ((events: readonly StoredEvent[]) => void) | undefined;
  /** The database's group commit, where it has one (SQLite). */
  readonly #transactionShared: SqlDatabase['transactionShared'];

  constructor(db: SqlDatabase, store: RecordStore, events: EventStore, onEventsCommitted: ((events: readonly StoredEvent[]) => void) | undefined) {
    this.#db = db;
    this.#store = store;
    this.#events = events;
    this.#onEventsCommitted = onEventsCommitted;
    this.#transactionShared = db.transactionShared?.bind(db);
  }

  /**
   * Runs a write in one transaction. Events the work emits are appended to the outbox in that same
   * transaction, and the dispatcher is woken once it has committed. `deleting`: the id of the row
   * a delete takes away (named when rows of other tables still refer to it).
   */
  async run<T>(resource: ResourceModel, work: (tx: SqlExecutor, emit: (event: NewEvent) => void) => Promise<T>, deleting?: number | string): Promise<T> {
    const pending: NewEvent[] = [];
    let stored: StoredEvent[] = [];
    try {
      const result = await this.#db.transaction(async (tx) => {
        const value = await work(tx, (event) => pending.push(event));
        if (pending.length > 0) stored = await this.#events.append(tx, pending);
        return value;
      });
      this.#committed(stored);
      return result;
    } catch (error) {
      throw await writeError(this.#db, resource, error, deleting);
    }
  }

  /**
   * A create that needs nothing else in its transaction (no reference to check, nothing to commit
   * with it), the cheapest way the database allows; undefined where it has none (then use run).
   * PostgreSQL: the row and its event in one statement, one round trip. SQLite: in a transaction
   * shared with the other such creates of this event-loop turn (group commit), each atomic on its
   * own, answered once that transaction has committed.
   */
  createAlone(resource: ResourceModel, values: StoredRecord): Promise<StoredRecord> | undefined {
    // The combined statement names the event's record by `id`: a mapped table's key goes the other way.
    if (this.#events.combinesWrites) return resource.mapping === undefined ? this.#createInOneStatement(resource, values) : undefined;
    if (this.#transactionShared !== undefined) return this.#createShared(this.#transactionShared, resource, values);
    return undefined;
  }

  async #createInOneStatement(resource: ResourceModel, values: StoredRecord): Promise<StoredRecord> {
    try {
      const { row, event } = await this.#events.insertWithEvent(this.#store.insertStatement(resource, values), {
        type: `${resource.singular}.created`,
        resource: resource.name,
        occurredAt: new Date().toISOString(),
      });
      const record = this.#store.decodeRow(resource, row);
      this.#committed([{ ...event, data: { object: structuredClone(record) } }]);
      return record;
    } catch (error) {
      throw await writeError(this.#db, resource, error);
    }
  }

  async #createShared(shared: NonNullable<SqlDatabase['transactionShared']>, resource: ResourceModel, values: StoredRecord): Promise<StoredRecord> {
    let done: { record: StoredRecord; events: StoredEvent[] };
    try {
      done = await shared((tx) => {
        const record = this.#store.insertNow(tx, resource, values);
        return { record, events: this.#events.appendNow(tx, [eventOf('created', resource, record)]) };
      });
    } catch (error) {
      throw await writeError(this.#db, resource, error);
    }
    this.#committed(done.events);
    return done.record;
  }

  #committed(events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    this.#events.announce();
    this.#onEventsCommitted?.(events);
  }
}
