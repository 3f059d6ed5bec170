import type { ImmediateExecutor, SqlDatabase, SqlExecutor, SqlRow, SqlStatement } from './sql-database.js';
import type { CommitOrderGuard } from './commit-order-guard.js';
import { pruneOlderThan } from './time-ordered-prune.js';
import type { RecordId } from '../schema/record-key.js';

const TABLE = '_restgraph_events';
/** The signal channel of committed events. */
const CHANNEL = 'restgraph_events';
/** The event id column of the combined insert's result (no field can be named so: it starts with _). */
const EVENT_ID = '_rg_event_id';

/** An event as written: what changed, in the transaction of the change (transactional outbox). */
export interface NewEvent {
  /** `user.created`, `user.updated`, `user.deleted`. */
  type: string;
  /** The resource's plural name: `users`. */
  resource: string;
  /** The record's name ({@link RecordId}: `id`, or a mapped table's key). */
  recordId: RecordId;
  /** The object (as REST returns it) and, for updates, the previous values of the changed fields. */
  data: { object: Record<string, unknown>; previous?: Record<string, unknown> };
  occurredAt: string;
}

/** An event as stored: readers get them in id order, and never skip one (see {@link EventStore.after}). */
export interface StoredEvent extends NewEvent {
  id: number;
}

/**
 * The outbox: events are appended inside the transaction of their change, so a committed change
 * always has its event and a rolled-back one never does; readers page through them by id.
 */
export class EventStore {
  readonly #db: SqlDatabase;
  /** The INSERT, compiled once (it is on every write's path). */
  #insertSql: string | undefined;
  /** Where transactions commit side by side, ids may become visible out of order: see CommitOrderGuard. */
  readonly #gaps: CommitOrderGuard | undefined;
  /** The read of the events after an id. */
  #afterSql: string | undefined;
  /** The combined statement of each row INSERT text (one per resource), composed once. */
  readonly #combinedSql = new Map<string, string>();

  /** A stored `recordId` as the record name of its resource (mapped tables' keys are stored as text). */
  readonly #recordIdOf: (resource: string, stored: unknown) => RecordId;

  constructor(db: SqlDatabase, recordIdOf: (resource: string, stored: unknown) => RecordId = numericId) {
    this.#db = db;
    this.#recordIdOf = recordIdOf;
    this.#gaps = db.commitOrderGuard?.();
  }

  /**
   * Appends events inside the caller's transaction, in order; resolves to them as stored (ids, and
   * data as a reader of the outbox would get it: a copy, decoded from the stored text).
   *
   * Call it after the transaction's change has been written (see OutboxGaps: the transaction must
   * hold its transaction id before it takes event ids).
   */
  async append(tx: SqlExecutor, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    const stored: StoredEvent[] = [];
    for (const event of events) {
      const data = JSON.stringify(event.data);
      stored.push(storedAs(event, data, await tx.one(this.#insertOf(event, data))));
    }
    return stored;
  }

  /** {@link append} in a transaction that runs at once. */
  appendNow(tx: ImmediateExecutor, events: readonly NewEvent[]): StoredEvent[] {
    return events.map((event) => {
      const data = JSON.stringify(event.data);
      return storedAs(event, data, tx.one(this.#insertOf(event, data)));
    });
  }

  /** The outbox INSERT of one event whose data is `data` (its JSON text). */
  #insertOf(event: NewEvent, data: string): SqlStatement {
    this.#insertSql ??= this.#compileInsert();
    return { sql: this.#insertSql, parameters: [event.type, event.resource, event.recordId, data, event.occurredAt], reuse: true };
  }

  /** Whether {@link insertWithEvent} can write a row and its event in one statement (see SqlDialectRules.insertWithEvent). */
  get combinesWrites(): boolean {
    return this.#db.rules.insertWithEvent !== undefined;
  }

  /**
   * Runs a row's INSERT (returning its columns) and the outbox INSERT of its created event as one
   * statement, committed by itself: one round trip instead of four (begin, two inserts, commit),
   * atomic all the same. The event's object is the inserted row as the database returns it. Only
   * where {@link combinesWrites}; the insert must need nothing else in its transaction.
   */
  async insertWithEvent(insert: SqlStatement, event: Omit<NewEvent, 'recordId' | 'data'>): Promise<{ row: SqlRow; event: StoredEvent }> {
    const n = insert.parameters.length;
    let sql = this.#combinedSql.get(insert.sql);
    if (sql === undefined) {
      const rules = this.#db.rules;
      if (rules.insertWithEvent === undefined) throw new Error('insertWithEvent: this database cannot combine the writes');
      sql = rules.insertWithEvent(insert.sql, n, TABLE, EVENT_ID);
      // Insert texts come from the record store's bounded cache; this one is bounded the same way.
      if (this.#combinedSql.size >= 500) this.#combinedSql.clear();
      this.#combinedSql.set(insert.sql, sql);
    }
    const row = await this.#db.one({ sql, parameters: [...insert.parameters, event.type, event.resource, event.occurredAt], reuse: insert.reuse === true });
    if (row === undefined) throw new Error('the combined insert returned no row');
    // The extra columns stay on the row: decoding a record takes only the resource's columns.
    const id = Number(row[EVENT_ID]);
    return { row, event: { ...event, id, recordId: Number(row.id), data: { object: {} } } };
  }

  /** The outbox INSERT. */
  #compileInsert(): string {
    return this.#db.builder.insertInto(TABLE).values({ type: '', resource: '', recordId: 0, data: '', occurredAt: '' }).returning('id').compile().sql;
  }

  /** After events were committed: wakes the readers of other processes (where the database has signals). */
  announce(): void {
    this.#db.signals?.signal(CHANNEL);
  }

  /** Calls `onEvents` when another process has committed events. */
  async watch(onEvents: () => void): Promise<void> {
    await this.#db.signals?.listen(CHANNEL, onEvents);
  }

  /**
   * Events with ids above `afterId`, oldest first, at most `limit`; never one beyond an id that
   * may still appear (a transaction committing it), so a reader that moves on never skips one.
   */
  async after(afterId: number, limit: number): Promise<StoredEvent[]> {
    // Compiled once: every subscriber's catch-up and every poll runs it.
    this.#afterSql ??= this.#db.builder.selectFrom(TABLE).selectAll().where('id', '>', 0).orderBy('id').limit(1).compile().sql;
    const statement = { sql: this.#afterSql, parameters: [afterId, limit], reuse: true };
    const read = async (): Promise<StoredEvent[]> => (await this.#db.all(statement)).map((row) => this.#decode(row));
    if (this.#gaps === undefined) return read();
    for (let reads = 1; ; reads++) {
      const ticket = this.#gaps.beforeRead();
      const { events, readAgain } = await this.#gaps.accept(afterId, await read(), ticket);
      // A gap that settled after the read: read again (a few times at most; polling goes on).
      if (!readAgain || events.length > 0 || reads === 3) return events;
    }
  }

  /** The id of the newest event (0 when there is none), once every id below it is there for good. */
  async lastId(): Promise<number> {
    const row = await this.#db.one(this.#db.builder.selectFrom(TABLE).select((eb) => eb.fn.max('id').as('id')).compile());
    const last = Number(row?.id ?? 0);
    await this.#gaps?.settleUpTo(last);
    return last;
  }

  /**
   * How far the outbox is ahead of a reader at `afterId` (for metrics): the newest id stored, and
   * when the first event after `afterId` occurred (undefined when there is none). Two lookups by
   * primary key, whatever the backlog.
   */
  async backlogAfter(afterId: number): Promise<{ newestId: number; oldestOccurredAt: string | undefined }> {
    const newest = await this.#db.one(this.#db.builder.selectFrom(TABLE).select((eb) => eb.fn.max('id').as('id')).compile());
    const oldest = await this.#db.one(this.#db.builder.selectFrom(TABLE).select('occurredAt').where('id', '>', afterId).orderBy('id').limit(1).compile());
    return { newestId: Number(newest?.id ?? 0), oldestOccurredAt: oldest === undefined ? undefined : String(oldest.occurredAt) };
  }

  /** The id of the oldest event still kept, or undefined when there is none. */
  async firstId(): Promise<number | undefined> {
    const row = await this.#db.one(this.#db.builder.selectFrom(TABLE).select((eb) => eb.fn.min('id').as('id')).compile());
    return row?.id === null || row?.id === undefined ? undefined : Number(row.id);
  }

  /**
   * Deletes events that occurred before `before` (ISO 8601); resolves to how many.
   *
   * Events are stamped inside their transaction, so `occurredAt` grows with `id`: the events to
   * drop are the oldest ids, found without an index every write would have to update.
   */
  async prune(before: string): Promise<number> {
    return pruneOlderThan(this.#db, TABLE, 'occurredAt', before);
  }

  #decode(row: SqlRow): StoredEvent {
    const resource = String(row.resource);
    return {
      id: Number(row.id),
      type: String(row.type),
      resource,
      recordId: this.#recordIdOf(resource, row.recordId),
      data: JSON.parse(String(row.data)) as StoredEvent['data'],
      occurredAt: String(row.occurredAt),
    };
  }
}

/** The record name of the tables restgraph creates: `id`, stored as a bigint. */
function numericId(_resource: string, stored: unknown): RecordId {
  return Number(stored);
}

/** An event as appended: its id (the insert's returned row), and its data decoded from the stored text. */
function storedAs(event: NewEvent, data: string, row: SqlRow | undefined): StoredEvent {
  if (row === undefined) throw new Error('the outbox insert returned no id');
  return { ...event, id: Number(row.id), data: JSON.parse(data) as StoredEvent['data'] };
}
