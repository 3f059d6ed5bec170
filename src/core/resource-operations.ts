import { ForbiddenError, NotFoundError, ReferenceConflictError, UniqueConflictError, ValidationError } from '../errors.js';
import type { FieldModel, RelationModel, ResourceModel, SchemaModel } from '../schema/schema-model.js';
import { reverseSort, type RecordStore, type SortKey, type StoredRecord } from '../store/record-store.js';
import type { SqlDatabase, SqlExecutor } from '../store/sql-database.js';
import type { EventStore, NewEvent } from '../store/event-store.js';
import { ConstraintViolation } from '../store/store-errors.js';
import { encodeCursor, type ListQuery } from './list-query.js';
import { applyMergePatch, isPlainObject } from './merge-patch.js';
import type { RecordValidator } from './record-validator.js';
import { authorize, ownerReadFilter, ownerValue, ownerWriteFilter, rowPasses } from './access-policy.js';
import type { Principal } from './principal.js';

/** Who asks (authenticated by the adapter), and on behalf of which request. */
export interface OperationContext {
  principal: Principal;
  requestId?: string;
}

export interface WriteOptions {
  /**
   * Update only: whether an object given for a json field is merged into the stored value
   * (JSON Merge Patch, REST's PATCH) rather than replacing it (GraphQL's update). @default true
   */
  mergeJson?: boolean;
  /** Checks the row as it is inside the write's transaction; throws to refuse (If-Match). */
  precondition?: (current: StoredRecord) => void;
  /** Runs inside the write's transaction, after it, with its result: commits or rolls back with it. */
  beforeCommit?: (tx: SqlExecutor, result: StoredRecord | undefined) => Promise<void>;
}

export interface ListResult {
  records: StoredRecord[];
  /** Whether rows lie beyond this page, in the direction it was read. */
  more: boolean;
  /** Cursor of the next page, when there is one. */
  next?: string;
  /** Every matching row, when the query asked to count. */
  total?: number;
}

export interface OperationLimits {
  /** Most related rows embedded per parent by `include`. @default 100 */
  maxEmbedded: number;
}

interface Reference {
  resource: ResourceModel;
  field: FieldModel;
}

/**
 * The operations every adapter (REST, GraphQL, CLI) calls: list, get, create, replace, update,
 * delete and relation reads, with validation, referential rules and transactions in one place.
 */
export class ResourceOperations {
  readonly schema: SchemaModel;
  readonly #db: SqlDatabase;
  readonly #store: RecordStore;
  readonly #validator: RecordValidator;
  readonly #limits: OperationLimits;
  readonly #events: EventStore;
  readonly #onEventsCommitted: ((lastId: number) => void) | undefined;
  /** For each resource, the fields elsewhere that reference it. */
  readonly #referencedBy = new Map<string, Reference[]>();

  constructor(options: {
    schema: SchemaModel;
    db: SqlDatabase;
    store: RecordStore;
    validator: RecordValidator;
    limits: OperationLimits;
    events: EventStore;
    /** Called with the last event id after a transaction that wrote events has committed (wakes the event dispatcher). */
    onEventsCommitted?: (lastId: number) => void;
  }) {
    this.schema = options.schema;
    this.#db = options.db;
    this.#store = options.store;
    this.#validator = options.validator;
    this.#limits = options.limits;
    this.#events = options.events;
    this.#onEventsCommitted = options.onEventsCommitted;
    for (const resource of this.schema.resources.values()) {
      for (const field of resource.writableFields) {
        if (field.references === undefined) continue;
        const list = this.#referencedBy.get(field.references) ?? [];
        list.push({ resource, field });
        this.#referencedBy.set(field.references, list);
      }
    }
  }

  /** One page of a resource's rows. */
  async list(ctx: OperationContext, resource: ResourceModel, query: ListQuery): Promise<ListResult> {
    authorize(ctx.principal, resource, 'read');
    this.#authorizeEmbeds(ctx, resource, query.include);
    const owner = ownerReadFilter(ctx.principal, resource);
    const filters = owner === undefined ? query.filters : [...query.filters, owner];
    const columns = query.fields === undefined ? undefined : this.#neededColumns(resource, query);
    // Backward pages (Relay's `last`) read the reverse order from the far bound, then turn round.
    const backward = query.backward === true;
    const lower = backward ? query.before : query.after;
    const upper = backward ? query.after : query.before;
    const rows = await this.#store.list(resource, {
      filters,
      sort: backward ? reverseSort(query.sort) : query.sort,
      limit: query.limit + 1,
      ...(query.offset === undefined ? {} : { offset: query.offset }),
      ...(lower === undefined ? {} : { after: lower }),
      ...(upper === undefined ? {} : { before: upper }),
      ...(columns === undefined ? {} : { columns }),
    });
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    if (backward) page.reverse();
    const result: ListResult = { records: page, more };
    const last = page[page.length - 1];
    if (more && !backward && last !== undefined) result.next = this.cursorOf(resource, query.sort, last);
    if (query.count) result.total = await this.#store.count(resource, filters);
    await this.#embed(ctx, resource, page, query.include);
    if (query.fields !== undefined) result.records = page.map((r) => project(r, query.fields ?? [], query.include));
    return result;
  }

  /** How many rows the principal may read match the filters (one query). */
  async count(ctx: OperationContext, resource: ResourceModel, filters: ListQuery['filters']): Promise<number> {
    authorize(ctx.principal, resource, 'read');
    const owner = ownerReadFilter(ctx.principal, resource);
    return this.#store.count(resource, owner === undefined ? filters : [...filters, owner]);
  }

  /** The opaque keyset cursor of a row in a list sorted by `sort` (see docs/cursors.md). */
  cursorOf(resource: ResourceModel, sort: readonly SortKey[], record: StoredRecord): string {
    return encodeCursor(
      sort,
      sort.map((k) => this.#store.encodeValue(fieldOf(resource, k.field), record[k.field])),
    );
  }

  /**
   * The rows of a hasMany relation for many parents at once (one query whatever their number):
   * for each parent id, the page `query` describes (filters, sort, first/last, cursors), and
   * whether more rows lie beyond it. The parents must be rows the principal may read.
   */
  async relatedPages(
    ctx: OperationContext,
    relation: RelationModel,
    parentIds: readonly number[],
    query: ListQuery,
  ): Promise<Map<number, { records: StoredRecord[]; more: boolean }>> {
    const target = this.#resource(relation.target);
    authorize(ctx.principal, target, 'read');
    const owner = ownerReadFilter(ctx.principal, target);
    const backward = query.backward === true;
    const lower = backward ? query.before : query.after;
    const upper = backward ? query.after : query.before;
    // One row more than the page per parent tells whether more lie beyond it (also for first: 0).
    const rows = await this.#store.listByKeys(target, relation.foreignKey, [...new Set(parentIds)], {
      sort: backward ? reverseSort(query.sort) : query.sort,
      perKeyLimit: query.limit + 1,
      filters: owner === undefined ? query.filters : [...query.filters, owner],
      ...(lower === undefined ? {} : { after: lower }),
      ...(upper === undefined ? {} : { before: upper }),
    });
    const pages = new Map<number, { records: StoredRecord[]; more: boolean }>();
    for (const id of parentIds) pages.set(id, { records: [], more: false });
    for (const row of rows) pages.get(row[relation.foreignKey] as number)?.records.push(row);
    for (const page of pages.values()) {
      page.more = page.records.length > query.limit;
      if (page.more) page.records.length = query.limit;
      if (backward) page.records.reverse();
    }
    return pages;
  }

  /** How many rows of a hasMany relation each parent has, under the filters: one grouped query. */
  async relatedCounts(ctx: OperationContext, relation: RelationModel, parentIds: readonly number[], filters: ListQuery['filters']): Promise<Map<number, number>> {
    const target = this.#resource(relation.target);
    authorize(ctx.principal, target, 'read');
    const owner = ownerReadFilter(ctx.principal, target);
    return this.#store.countByKeys(target, relation.foreignKey, [...new Set(parentIds)], owner === undefined ? filters : [...filters, owner]);
  }

  /** The rows with these ids that the principal may read, by id (one query). */
  async getMany(ctx: OperationContext, resource: ResourceModel, ids: readonly number[]): Promise<Map<number, StoredRecord>> {
    authorize(ctx.principal, resource, 'read');
    const keys = [...new Set(ids)];
    if (keys.length === 0) return new Map();
    const owner = ownerReadFilter(ctx.principal, resource);
    const rows = await this.#store.list(resource, {
      filters: [{ field: 'id', op: 'in', value: keys }, ...(owner === undefined ? [] : [owner])],
      sort: [{ field: 'id', direction: 'asc' }],
      limit: keys.length,
    });
    return new Map(rows.map((row) => [row.id as number, row]));
  }

  /** One row by id, with relations embedded as asked. @throws NotFoundError */
  async get(ctx: OperationContext, resource: ResourceModel, id: number, include: readonly string[] = []): Promise<StoredRecord> {
    authorize(ctx.principal, resource, 'read');
    if (include.length > 0) this.#authorizeEmbeds(ctx, resource, include);
    const record = await this.#store.findById(resource, id);
    if (record === undefined || !rowPasses(record, ownerReadFilter(ctx.principal, resource))) throw notFound(resource, id);
    if (include.length > 0) await this.#embed(ctx, resource, [record], include);
    return record;
  }

  /** Creates a row from a request body. @throws ValidationError, UniqueConflictError */
  async create(ctx: OperationContext, resource: ResourceModel, body: unknown, options: WriteOptions = {}): Promise<StoredRecord> {
    authorize(ctx.principal, resource, 'create');
    const values = this.#validator.validate(resource, 'create', this.#withOwner(ctx, resource, body, true));
    const now = new Date().toISOString();
    return this.#write(resource, async (tx, emit) => {
      await this.#checkReferences(tx, resource, values);
      const record = await this.#store.insert(tx, resource, { ...values, createdAt: now, updatedAt: now });
      emit(eventOf('created', resource, record));
      await options.beforeCommit?.(tx, record);
      return record;
    });
  }

  /** Replaces every writable field of a row (PUT). @throws NotFoundError, ValidationError, UniqueConflictError */
  async replace(ctx: OperationContext, resource: ResourceModel, id: number, body: unknown, options: WriteOptions = {}): Promise<StoredRecord> {
    authorize(ctx.principal, resource, 'update');
    const values = this.#validator.validate(resource, 'replace', this.#withOwner(ctx, resource, body, true), id);
    return this.#write(resource, async (tx, emit) => {
      const current = await this.#currentForWrite(ctx, resource, id, tx);
      options.precondition?.(current);
      await this.#checkReferences(tx, resource, values);
      const record = await this.#store.update(tx, resource, id, { ...values, updatedAt: laterThan(current.updatedAt) });
      if (record === undefined) throw notFound(resource, id);
      emit(eventOf('updated', resource, record, changedFrom(current, record)));
      await options.beforeCommit?.(tx, record);
      return record;
    });
  }

  /** Changes only the fields given, as a JSON Merge Patch (RFC 7396). @throws NotFoundError, ValidationError, UniqueConflictError */
  async update(ctx: OperationContext, resource: ResourceModel, id: number, patch: unknown, options: WriteOptions = {}): Promise<StoredRecord> {
    authorize(ctx.principal, resource, 'update');
    const values = this.#validator.validate(resource, 'update', this.#withOwner(ctx, resource, patch, false), id);
    return this.#write(resource, async (tx, emit) => {
      const current = await this.#currentForWrite(ctx, resource, id, tx);
      options.precondition?.(current);
      const changed: StoredRecord = {};
      for (const [name, value] of Object.entries(values)) {
        const field = fieldOf(resource, name);
        // Merge patch reaches into json fields: members merge, null members are removed.
        const merge = field.type === 'json' && options.mergeJson !== false && isPlainObject(value);
        const next = merge ? applyMergePatch(current[name], value) : value;
        if (JSON.stringify(next) !== JSON.stringify(current[name])) changed[name] = next;
      }
      if (Object.keys(changed).length === 0) {
        await options.beforeCommit?.(tx, current);
        return current;
      }
      await this.#checkReferences(tx, resource, changed);
      const record = await this.#store.update(tx, resource, id, { ...changed, updatedAt: laterThan(current.updatedAt) });
      if (record === undefined) throw notFound(resource, id);
      emit(eventOf('updated', resource, record, changedFrom(current, record)));
      await options.beforeCommit?.(tx, record);
      return record;
    });
  }

  /**
   * Deletes a row, applying each reference's onDelete rule: restrict refuses (409), setNull clears
   * the referencing field, cascade deletes the referencing rows (and theirs) in the same transaction.
   */
  async delete(ctx: OperationContext, resource: ResourceModel, id: number, options: WriteOptions = {}): Promise<void> {
    authorize(ctx.principal, resource, 'delete');
    await this.#write(resource, async (tx, emit) => {
      const current = await this.#currentForWrite(ctx, resource, id, tx);
      options.precondition?.(current);
      await this.#deleteCascading(tx, emit, resource, id, new Set());
      await options.beforeCommit?.(tx, undefined);
      return undefined;
    });
  }

  /**
   * Reads through a relation: the rows of a hasMany relation as a page, or the one row of a
   * belongsTo relation. @throws NotFoundError when the parent, or a belongsTo target, does not exist.
   */
  async related(
    ctx: OperationContext,
    resource: ResourceModel,
    id: number,
    relation: RelationModel,
    query: ListQuery,
  ): Promise<{ kind: 'many'; target: ResourceModel; page: ListResult } | { kind: 'one'; target: ResourceModel; record: StoredRecord }> {
    const target = this.#resource(relation.target);
    authorize(ctx.principal, resource, 'read');
    authorize(ctx.principal, target, 'read');
    const parent = await this.#store.findById(resource, id);
    if (parent === undefined || !rowPasses(parent, ownerReadFilter(ctx.principal, resource))) throw notFound(resource, id);
    if (relation.kind === 'hasMany') {
      const page = await this.list(ctx, target, { ...query, filters: [...query.filters, { field: relation.foreignKey, op: 'eq', value: id }] });
      return { kind: 'many', target, page };
    }
    const key = parent[relation.foreignKey];
    if (typeof key !== 'number') throw new NotFoundError(`${resource.singular} ${id} has no ${relation.name}.`);
    return { kind: 'one', target, record: await this.get(ctx, target, key, query.include) };
  }

  /**
   * Runs a write in one transaction. Events the work emits are appended to the outbox in that same
   * transaction (a committed change always has its events, a rolled-back one none), and the
   * dispatcher is woken once it has committed.
   */
  async #write<T>(resource: ResourceModel, work: (tx: SqlExecutor, emit: (event: NewEvent) => void) => Promise<T>): Promise<T> {
    const pending: NewEvent[] = [];
    let lastId = 0;
    try {
      const result = await this.#db.transaction(async (tx) => {
        const value = await work(tx, (event) => pending.push(event));
        if (pending.length > 0) lastId = await this.#events.append(tx, pending);
        return value;
      });
      if (pending.length > 0) this.#onEventsCommitted?.(lastId);
      return result;
    } catch (error) {
      if (error instanceof ConstraintViolation && error.kind === 'unique') {
        const columns = error.columns.length > 0 ? error.columns : ['(unknown)'];
        throw new UniqueConflictError(`Another ${resource.singular} already has this ${columns.join(', ')}.`, {
          errors: columns.map((c) => ({ pointer: `/${c}`, detail: `is already used by another ${resource.singular}` })),
          cause: error,
        });
      }
      throw error;
    }
  }

  async #checkReferences(tx: SqlExecutor, resource: ResourceModel, values: StoredRecord): Promise<void> {
    const problems = [];
    for (const [name, value] of Object.entries(values)) {
      const field = fieldOf(resource, name);
      if (field.references === undefined || typeof value !== 'number') continue;
      const target = this.#resource(field.references);
      const found = await this.#store.existingIds(tx, target, [value]);
      if (!found.has(value)) problems.push({ pointer: `/${name}`, detail: `refers to ${target.singular} ${value}, which does not exist` });
    }
    if (problems.length > 0) throw new ValidationError('A referenced row does not exist.', { errors: problems });
  }

  async #deleteCascading(tx: SqlExecutor, emit: (event: NewEvent) => void, resource: ResourceModel, id: number, visiting: Set<string>): Promise<void> {
    const self = `${resource.name}/${id}`;
    if (visiting.has(self)) return;
    visiting.add(self);
    for (const { resource: child, field } of this.#referencedBy.get(resource.name) ?? []) {
      const rule = field.onDelete ?? 'restrict';
      if (rule === 'restrict') {
        const ids = (await this.#store.idsWhere(tx, child, field.name, id, 2)).filter((c) => !visiting.has(`${child.name}/${c}`));
        if (ids.length > 0) {
          throw new ReferenceConflictError(
            `${capitalize(resource.singular)} ${id} is still referenced by ${child.name} (${field.name}); delete those first.`,
            { errors: [{ detail: `${child.name} ${ids.join(', ')}${ids.length > 1 ? ' and maybe more' : ''} refer to it through ${field.name}` }] },
          );
        }
      } else if (rule === 'setNull') {
        // Each row set to null is an update of its own, with its event.
        const before = await this.#rowsWhere(tx, child, field.name, id);
        await this.#store.updateWhere(tx, child, field.name, id, { [field.name]: null, updatedAt: new Date().toISOString() });
        for (const old of before) {
          const row = await this.#store.findById(child, old.id as number, tx);
          if (row !== undefined) emit(eventOf('updated', child, row, changedFrom(old, row)));
        }
      } else {
        for (const childId of await this.#store.idsWhere(tx, child, field.name, id)) {
          await this.#deleteCascading(tx, emit, child, childId, visiting);
        }
      }
    }
    const row = await this.#store.findById(resource, id, tx);
    if (row !== undefined) emit(eventOf('deleted', resource, row));
    await this.#store.delete(tx, resource, id);
  }

  async #rowsWhere(tx: SqlExecutor, resource: ResourceModel, field: string, key: number): Promise<StoredRecord[]> {
    const rows: StoredRecord[] = [];
    for (const id of await this.#store.idsWhere(tx, resource, field, key)) {
      const row = await this.#store.findById(resource, id, tx);
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }

  /** Embedding a relation reads its target: the same rule applies, before any row is read. */
  #authorizeEmbeds(ctx: OperationContext, resource: ResourceModel, include: readonly string[]): void {
    for (const name of include) {
      const relation = resource.relations.get(name);
      if (relation !== undefined) authorize(ctx.principal, this.#resource(relation.target), 'read');
    }
  }

  async #embed(ctx: OperationContext, resource: ResourceModel, records: StoredRecord[], include: readonly string[]): Promise<void> {
    if (records.length === 0) return;
    for (const name of include) {
      const relation = resource.relations.get(name);
      if (relation === undefined) continue;
      const target = this.#resource(relation.target);
      const owner = ownerReadFilter(ctx.principal, target);
      const filters = owner === undefined ? [] : [owner];
      if (relation.kind === 'hasMany') {
        const parentIds = records.map((r) => r.id as number);
        const children = await this.#store.listByKeys(target, relation.foreignKey, parentIds, {
          sort: [{ field: 'id', direction: 'asc' }],
          perKeyLimit: this.#limits.maxEmbedded,
          filters,
        });
        const byParent = new Map<unknown, StoredRecord[]>();
        for (const child of children) {
          const list = byParent.get(child[relation.foreignKey]) ?? [];
          list.push(child);
          byParent.set(child[relation.foreignKey], list);
        }
        for (const record of records) record[name] = byParent.get(record.id) ?? [];
      } else {
        const keys = [...new Set(records.map((r) => r[relation.foreignKey]).filter((k): k is number => typeof k === 'number'))];
        const parents = keys.length === 0 ? [] : await this.#store.list(target, { filters: [{ field: 'id', op: 'in', value: keys }, ...filters], sort: [{ field: 'id', direction: 'asc' }], limit: keys.length });
        const byId = new Map(parents.map((p) => [p.id, p]));
        for (const record of records) record[name] = byId.get(record[relation.foreignKey]) ?? null;
      }
    }
  }

  /**
   * The row a write applies to, as the principal may see it: 404 when it does not exist or is
   * not visible, 403 when visible (public reads) but owned by someone else.
   */
  async #currentForWrite(ctx: OperationContext, resource: ResourceModel, id: number, tx: SqlExecutor): Promise<StoredRecord> {
    const current = await this.#store.findById(resource, id, tx);
    if (current === undefined || !rowPasses(current, ownerReadFilter(ctx.principal, resource))) throw notFound(resource, id);
    if (!rowPasses(current, ownerWriteFilter(ctx.principal, resource))) {
      throw new ForbiddenError(`${capitalize(resource.singular)} ${id} belongs to someone else; only its owner may change it.`);
    }
    return current;
  }

  /**
   * Under an owner rule, a principal's writes carry its own subject in the owner field, never
   * another's: the field is filled in when absent (always, for whole representations).
   */
  #withOwner(ctx: OperationContext, resource: ResourceModel, body: unknown, whole: boolean): unknown {
    const owner = resource.owner;
    const value = ownerValue(ctx.principal, resource);
    if (owner === undefined || value === undefined || !isPlainObject(body)) return body;
    const sent = body[owner];
    if (sent !== undefined && JSON.stringify(sent) !== JSON.stringify(value) && sent !== String(value)) {
      throw new ForbiddenError(`${owner} must be your own subject (${String(value)}); ${resource.name} cannot be created for or given to someone else.`);
    }
    return whole || sent !== undefined ? { ...body, [owner]: value } : body;
  }

  #neededColumns(resource: ResourceModel, query: ListQuery): string[] {
    const needed = new Set<string>(['id', ...(query.fields ?? []), ...query.sort.map((k) => k.field)]);
    for (const name of query.include) {
      const relation = resource.relations.get(name);
      if (relation?.kind === 'belongsTo') needed.add(relation.foreignKey);
    }
    return [...needed];
  }

  #resource(name: string): ResourceModel {
    const resource = this.schema.resources.get(name);
    if (resource === undefined) throw new Error(`unknown resource ${name}`);
    return resource;
  }
}

function fieldOf(resource: ResourceModel, name: string): FieldModel {
  const field = resource.fields.get(name);
  if (field === undefined) throw new Error(`unknown field ${resource.name}.${name}`);
  return field;
}

function project(record: StoredRecord, fields: readonly string[], include: readonly string[]): StoredRecord {
  const out: StoredRecord = {};
  for (const name of fields) out[name] = record[name];
  for (const name of include) out[name] = record[name];
  return out;
}

/** The event of a change: `user.created`, with the object as REST returns it. */
function eventOf(kind: 'created' | 'updated' | 'deleted', resource: ResourceModel, object: StoredRecord, previous?: StoredRecord): NewEvent {
  return {
    type: `${resource.singular}.${kind}`,
    resource: resource.name,
    recordId: object.id as number,
    data: previous === undefined ? { object } : { object, previous },
    occurredAt: new Date().toISOString(),
  };
}

/** The previous values of the fields that differ between two versions of a row. */
function changedFrom(before: StoredRecord, after: StoredRecord): StoredRecord {
  const previous: StoredRecord = {};
  for (const [name, value] of Object.entries(after)) {
    if (JSON.stringify(before[name]) !== JSON.stringify(value)) previous[name] = before[name] ?? null;
  }
  return previous;
}

function notFound(resource: ResourceModel, id: number): NotFoundError {
  return new NotFoundError(`There is no ${resource.singular} with id ${id}.`);
}

/** A timestamp after `previous`, even when the clock has not moved on (or went back). */
function laterThan(previous: unknown): string {
  const now = Date.now();
  const before = typeof previous === 'string' ? Date.parse(previous) : NaN;
  return new Date(Number.isNaN(before) || now > before ? now : before + 1).toISOString();
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
