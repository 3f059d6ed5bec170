import { ForbiddenError, MethodNotAllowedError, NotFoundError, UniqueConflictError } from '../errors.js';
import { fieldNamed, resourceNamed, SINGLETON_ID, type RelationModel, type ResourceModel, type SchemaModel } from '../schema/schema-model.js';
import { reverseSort, type FilterCondition, type SortKey, type StoredRecord } from '../store/list-spec.js';
import type { RecordStore } from '../store/record-store.js';
import type { SqlDatabase, SqlExecutor } from '../store/sql-database.js';
import type { EventStore, NewEvent, StoredEvent } from '../store/event-store.js';
import { changedFrom, eventOf } from './change-events.js';
import { ReferentialRules } from './referential-rules.js';
import { createStamps, updateStamp } from './record-stamps.js';
import { BatchReads } from './batch-reads.js';
import { encodeCursor, type ListQuery } from './list-query.js';
import { aggregateGroups, tooManyGroups, type AggregateGroup, type AggregateQuery } from './aggregate-query.js';
import { EventedWrites } from './evented-writes.js';
import { applyMergePatch, isPlainObject } from './merge-patch.js';
import type { RecordValidator, ValidateOptions, WriteKind } from './record-validator.js';
import { authorize, ownerWriteFilter, rowPasses } from './access-policy.js';
import { checkAccessRules, enforceRule, rulesOf } from './access-rules/access-rules.js';
import { changedFields, createFieldChecks, enforceFieldChanges, enforceFieldChecks, enforcePresetsOnCreate, presetsLeftOut, withOwner, withPresets } from './access-rules/write-access.js';
import type { OperationContext } from './principal.js';
import { readerFilters, rowVisible } from './filter-access.js';
import { neededColumns, project } from './field-projection.js';
import { RelationEmbeds } from './relation-embeds.js';
import { assertAggregateUsable, assertSortUsable, hiddenFieldError, shownRecords } from './access-rules/field-reads.js';
import { withoutHiddenFields } from './access-rules/field-access.js';
import { isPromise, type PromiseOrValue } from '../promise-or-value.js';
import { hasIdKey, recordId, type RecordId } from '../schema/record-key.js';
import { belongsToKeyOf, childKeyValues } from '../schema/relation-keys.js';

/** The default of reads that embed nothing (shared: no array per call). */
const NO_INCLUDE: readonly string[] = Object.freeze([]);

import type { ListResult, OperationLimits, WriteOptions } from './operation-options.js';

export type { ListResult, OperationLimits, WriteOptions } from './operation-options.js';

/**
 * The operations every adapter (REST, GraphQL, CLI) calls: list, get, create, replace, update,
 * delete and relation reads, with validation, referential rules and transactions in one place.
 */
export class ResourceOperations {
  readonly schema: SchemaModel;
  readonly #store: RecordStore;
  readonly #validator: RecordValidator;
  readonly #embeds: RelationEmbeds;
  readonly #writes: EventedWrites;
  readonly #references: ReferentialRules;
  /** Reads for many parents or ids at once (GraphQL's batch loaders). */
  readonly batch: BatchReads;

  constructor(options: {
    schema: SchemaModel;
    db: SqlDatabase;
    store: RecordStore;
    validator: RecordValidator;
    limits: OperationLimits;
    events: EventStore;
    /** Called with the events a transaction wrote, as stored, once it has committed (feeds the event dispatcher). */
    onEventsCommitted?: (events: readonly StoredEvent[]) => void;
  }) {
    this.schema = options.schema;
    checkAccessRules(this.schema);
    this.#store = options.store;
    this.#validator = options.validator;
    this.#embeds = new RelationEmbeds(this.schema, this.#store, options.limits.maxEmbedded);
    this.#writes = new EventedWrites(options.db, options.store, options.events, options.onEventsCommitted);
    this.#references = new ReferentialRules(this.schema, this.#store);
    this.batch = new BatchReads(this.schema, this.#store);
  }

  /** One page of a resource's rows. */
  async list(ctx: OperationContext, resource: ResourceModel, query: ListQuery): Promise<ListResult> {
    authorize(ctx.principal, resource, 'read');
    this.#embeds.authorize(ctx, resource, query.include);
    assertSortUsable(ctx.principal, resource, query.sort);
    const { filters, restricted } = readerFilters(ctx.principal, this.schema, resource, query.filters);
    const columns = query.fields === undefined ? undefined : neededColumns(resource, query);
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
      ...(query.relevance === undefined ? {} : { relevance: query.relevance, restricted }),
    });
    const more = rows.length > query.limit;
    // Fields the principal may not read on a row are gone before anything (embeds) reads the row.
    const page = shownRecords(ctx.principal, resource, more ? rows.slice(0, query.limit) : rows);
    if (backward) page.reverse();
    const result: ListResult = { records: page, more };
    const last = page[page.length - 1];
    if (more && query.relevance !== undefined) result.nextOffset = (query.offset ?? 0) + query.limit;
    else if (more && !backward && last !== undefined) result.next = this.cursorOf(resource, query.sort, last);
    if (query.count) result.total = await this.#store.count(resource, filters);
    await this.#embeds.embed(ctx, resource, page, query.include);
    if (query.fields !== undefined) result.records = page.map((r) => project(r, query.fields ?? [], query.include));
    return result;
  }

  /** How many rows the principal may read match the filters (one query). */
  async count(ctx: OperationContext, resource: ResourceModel, filters: ListQuery['filters']): Promise<number> {
    authorize(ctx.principal, resource, 'read');
    return this.#store.count(resource, readerFilters(ctx.principal, this.schema, resource, filters).filters);
  }

  /**
   * The groups of an aggregate over the rows the principal may read (the owner rule joins the
   * filters, in the one statement): at most `query.limit`, and when it is strict, more is a 400.
   */
  async aggregate(ctx: OperationContext, resource: ResourceModel, query: AggregateQuery): Promise<AggregateGroup[]> {
    authorize(ctx.principal, resource, 'read');
    assertAggregateUsable(ctx.principal, resource, query);
    const rows = await this.#store.aggregate(resource, {
      filters: readerFilters(ctx.principal, this.schema, resource, query.filters).filters,
      groupBy: query.groupBy,
      measures: query.measures,
      sort: query.sort,
      limit: query.strict ? query.limit + 1 : query.limit,
    });
    if (rows.length > query.limit) throw tooManyGroups(query.limit);
    return aggregateGroups(query, rows);
  }

  /** The opaque keyset cursor of a row in a list sorted by `sort` (see docs/cursors.md). */
  cursorOf(resource: ResourceModel, sort: readonly SortKey[], record: StoredRecord): string {
    return encodeCursor(sort, sort.map((k) => record[k.field] ?? null));
  }

  /**
   * One row by id, with relations embedded as asked: at once when the database answers at once and
   * nothing is embedded (SQLite's get-by-id, the hottest read), else later. Errors are thrown, or
   * rejected when the result comes later. @throws NotFoundError, ForbiddenError
   */
  get(ctx: OperationContext, resource: ResourceModel, id: RecordId, include: readonly string[] = NO_INCLUDE): PromiseOrValue<StoredRecord> {
    authorize(ctx.principal, resource, 'read');
    if (include.length > 0) return this.#getEmbedding(ctx, resource, id, include);
    const found = this.#store.findById(resource, id);
    return isPromise(found) ? found.then((record) => this.#visible(ctx, resource, id, record)) : this.#visible(ctx, resource, id, found);
  }

  async #getEmbedding(ctx: OperationContext, resource: ResourceModel, id: RecordId, include: readonly string[]): Promise<StoredRecord> {
    this.#embeds.authorize(ctx, resource, include);
    const record = this.#visible(ctx, resource, id, await this.#store.findById(resource, id));
    await this.#embeds.embed(ctx, resource, [record], include);
    return record;
  }

  /** The row as the principal may see it, when there is one and the rules let it see it. @throws NotFoundError */
  #visible(ctx: OperationContext, resource: ResourceModel, id: RecordId, record: StoredRecord | undefined): StoredRecord {
    if (record === undefined || !rowVisible(ctx.principal, resource, record)) throw notFound(resource, id);
    return withoutHiddenFields(ctx.principal, resource, record);
  }

  /** Checks a body as create, replace or update would (access and validation), writing nothing. @throws ForbiddenError, ValidationError */
  check(ctx: OperationContext, resource: ResourceModel, kind: WriteKind, body: unknown, id?: RecordId, options: ValidateOptions = {}): void {
    this.#validated(ctx, resource, kind, body, id, options);
  }

  /** The values a write stores, once the principal may write and the body is valid. @throws ForbiddenError, ValidationError */
  #validated(ctx: OperationContext, resource: ResourceModel, kind: WriteKind, body: unknown, id?: RecordId, options?: ValidateOptions): StoredRecord {
    assertWritable(resource);
    authorize(ctx.principal, resource, kind === 'create' ? 'create' : 'update');
    if (kind === 'create') createFieldChecks(ctx.principal, resource, body);
    const filled = withPresets(ctx.principal, resource, body, kind);
    return this.#validator.validate(resource, kind, withOwner(ctx.principal, resource, filled, kind !== 'update'), id, options);
  }

  /**
   * Creates a row from a request body; with `acceptId`, under the id the body chooses when it is
   * free. @throws ValidationError, UniqueConflictError (also when the chosen id is taken)
   */
  async create(ctx: OperationContext, resource: ResourceModel, body: unknown, options: WriteOptions = {}): Promise<StoredRecord> {
    const values = this.#validated(ctx, resource, 'create', body, undefined, options);
    const { fileValues } = options;
    // Uploaded files count as written fields (their write access), keyed by name: their urls need the id.
    const fieldChecks = createFieldChecks(ctx.principal, resource, fileValues === undefined || !isPlainObject(body) ? body : { ...body, ...fileValues({}) });
    const now = new Date().toISOString();
    // An id the client chose, on restgraph's own tables; a mapped table's `id` is an ordinary column, written as given.
    const chosenId = hasIdKey(resource) ? (values.id as number | undefined) : undefined;
    const checked = rulesOf(resource).rows.create !== undefined || fieldChecks.length > 0;
    if (options.beforeCommit === undefined && fileValues === undefined && chosenId === undefined && !checked && !this.#references.needsCheck(resource, values)) {
      const created = this.#writes.createAlone(resource, { ...values, ...createStamps(resource, now) });
      if (created !== undefined) return rulesOf(resource).fieldRead.size === 0 ? created : created.then((record) => this.#shown(ctx, resource, record));
    }
    return this.#writtenRow(ctx, resource, async (tx, emit) => {
      // The parent row first, then the table: the order a cascading delete takes them in.
      await this.#references.check(tx, resource, values, ctx.principal);
      if (chosenId !== undefined) await this.#claimId(tx, resource, chosenId);
      const inserted = await this.#store.insert(tx, resource, { ...values, ...createStamps(resource, now) });
      // Files of a multipart create: their values (urls) name the new id, set in the same transaction.
      const record = fileValues === undefined ? inserted : ((await this.#store.update(tx, resource, recordId(resource, inserted) as RecordId, fileValues(inserted))) ?? inserted);
      // The create rule and field write rules decide on the row as stored (its id, defaults): refused, nothing is written.
      if (checked) enforceRule(ctx.principal, resource, 'create', record);
      enforceFieldChecks(resource, fieldChecks, record);
      emit(eventOf('created', resource, record));
      await options.beforeCommit?.(tx, this.#shown(ctx, resource, record));
      return record;
    });
  }

  /** Replaces every writable field of a row (PUT). @throws NotFoundError, ValidationError, UniqueConflictError */
  async replace(ctx: OperationContext, resource: ResourceModel, id: RecordId, body: unknown, options: WriteOptions = {}): Promise<StoredRecord> {
    const validated = this.#validated(ctx, resource, 'replace', body, id);
    const presets = presetsLeftOut(resource, body); // kept as stored, as fields another API version lacks (keep)
    const whole = without(validated, options.keep?.filter((name) => !presets.includes(name)));
    const values = without(validated, [...(options.keep ?? []), ...presets]);
    return this.#writtenRow(ctx, resource, async (tx, emit) => {
      if (resource.singleton && id === SINGLETON_ID && options.precondition === undefined && (await this.#store.findById(resource, id, tx, { forUpdate: true })) === undefined) {
        // A singleton that has no record yet gets it from its first PUT.
        await this.#references.check(tx, resource, whole, ctx.principal);
        const now = new Date().toISOString();
        // Uploaded files (a multipart PUT, a GraphQL replace) are part of the record it creates.
        const files = options.fileValues?.({});
        const fieldChecks = createFieldChecks(ctx.principal, resource, files === undefined || !isPlainObject(body) ? body : { ...body, ...files });
        const created = await this.#store.insert(tx, resource, { ...whole, ...files, id, ...createStamps(resource, now) });
        enforcePresetsOnCreate(ctx.principal, resource, created);
        enforceRule(ctx.principal, resource, 'create', created);
        enforceFieldChecks(resource, fieldChecks, created);
        emit(eventOf('created', resource, created));
        await options.beforeCommit?.(tx, this.#shown(ctx, resource, created));
        return created;
      }
      const current = await this.#currentForWrite(ctx, resource, id, tx, 'update');
      options.precondition?.(this.#shown(ctx, resource, current));
      const written = options.fileValues === undefined ? values : { ...values, ...options.fileValues(current) };
      const changed = changedFields(current, written);
      enforceFieldChanges(ctx.principal, resource, changed, current, 'before');
      await this.#references.check(tx, resource, written, ctx.principal, current);
      const record = await this.#store.update(tx, resource, id, { ...written, ...updateStamp(resource, current) });
      if (record === undefined) throw notFound(resource, id);
      enforceRule(ctx.principal, resource, 'update', record, id);
      enforceFieldChanges(ctx.principal, resource, changed, record, 'after');
      emit(eventOf('updated', resource, record, changedFrom(current, record)));
      await options.beforeCommit?.(tx, this.#shown(ctx, resource, record));
      return record;
    });
  }

  /** Changes only the fields given, as a JSON Merge Patch (RFC 7396). @throws NotFoundError, ValidationError, UniqueConflictError */
  async update(ctx: OperationContext, resource: ResourceModel, id: RecordId, patch: unknown, options: WriteOptions = {}): Promise<StoredRecord> {
    const validated = this.#validated(ctx, resource, 'update', patch, id);
    return this.#writtenRow(ctx, resource, async (tx, emit) => {
      const current = await this.#currentForWrite(ctx, resource, id, tx, 'update');
      options.precondition?.(this.#shown(ctx, resource, current));
      const values = options.fileValues === undefined ? validated : { ...validated, ...options.fileValues(current) };
      const changed: StoredRecord = {};
      for (const [name, value] of Object.entries(values)) {
        const field = fieldNamed(resource, name);
        // Merge patch reaches into json fields: members merge, null members are removed.
        const merge = field.type === 'json' && options.mergeJson !== false && isPlainObject(value);
        const next = merge ? applyMergePatch(current[name], value) : value;
        if (JSON.stringify(next) !== JSON.stringify(current[name])) changed[name] = next;
      }
      if (Object.keys(changed).length === 0) {
        await options.beforeCommit?.(tx, this.#shown(ctx, resource, current));
        return current;
      }
      const names = Object.keys(changed); // presets and field write access: before and after, as the update rule
      enforceFieldChanges(ctx.principal, resource, names, current, 'before');
      await this.#references.check(tx, resource, changed, ctx.principal);
      const record = await this.#store.update(tx, resource, id, { ...changed, ...updateStamp(resource, current) });
      if (record === undefined) throw notFound(resource, id);
      // The update rule holds before (#currentForWrite) and after: no row is moved out of its reach.
      enforceRule(ctx.principal, resource, 'update', record, id);
      enforceFieldChanges(ctx.principal, resource, names, record, 'after');
      emit(eventOf('updated', resource, record, changedFrom(current, record)));
      await options.beforeCommit?.(tx, this.#shown(ctx, resource, record));
      return record;
    });
  }

  /**
   * Deletes a row, applying each reference's onDelete rule: restrict refuses (409), setNull clears
   * the referencing field, cascade deletes the referencing rows (and theirs) in the same transaction.
   */
  async delete(ctx: OperationContext, resource: ResourceModel, id: RecordId, options: WriteOptions = {}): Promise<void> {
    assertWritable(resource);
    authorize(ctx.principal, resource, 'delete');
    await this.#writes.run(resource, async (tx, emit) => {
      const current = await this.#currentForWrite(ctx, resource, id, tx, 'delete');
      options.precondition?.(this.#shown(ctx, resource, current));
      await this.#references.deleteCascading(tx, emit, resource, id);
      await options.beforeCommit?.(tx, undefined);
      return undefined;
    }, id);
  }

  /**
   * Reads through a relation: the rows of a hasMany relation as a page, or the one row of a
   * belongsTo relation. @throws NotFoundError when the parent, or a belongsTo target, does not exist.
   */
  async related(
    ctx: OperationContext,
    resource: ResourceModel,
    id: RecordId,
    relation: RelationModel,
    query: ListQuery,
  ): Promise<{ kind: 'many'; target: ResourceModel; page: ListResult } | { kind: 'one'; target: ResourceModel; record: StoredRecord }> {
    const target = resourceNamed(this.schema, relation.target);
    authorize(ctx.principal, resource, 'read');
    authorize(ctx.principal, target, 'read');
    const parent = await this.#store.findById(resource, id);
    if (parent === undefined || !rowVisible(ctx.principal, resource, parent)) throw notFound(resource, id);
    if (relation.kind === 'hasMany') {
      // One condition per column of the foreign key (a mapped one may be composite).
      const matches = Object.entries(childKeyValues(resource, relation, parent, id)).map(([field, value]): FilterCondition => ({ field, op: 'eq', value }));
      const page = await this.list(ctx, target, { ...query, filters: [...query.filters, ...matches] });
      return { kind: 'many', target, page };
    }
    // The related row would tell what a foreign key the principal may not read holds.
    if (!(relation.foreignKey in this.#shown(ctx, resource, parent))) throw hiddenFieldError(resource, relation.foreignKey);
    const key = belongsToKeyOf(resource, relation, target, parent);
    if (key === undefined) throw new NotFoundError(`${resource.singular} ${id} has no ${relation.name}.`);
    return { kind: 'one', target, record: await this.get(ctx, target, key, query.include) };
  }

  /** Runs a write (events, transaction) and answers with its row as the principal may see it. */
  async #writtenRow(ctx: OperationContext, resource: ResourceModel, work: (tx: SqlExecutor, emit: (event: NewEvent) => void) => Promise<StoredRecord>): Promise<StoredRecord> {
    return this.#shown(ctx, resource, await this.#writes.run(resource, work));
  }

  /** `record` without the fields the principal may not read on it. */
  #shown(ctx: OperationContext, resource: ResourceModel, record: StoredRecord): StoredRecord {
    return withoutHiddenFields(ctx.principal, resource, record);
  }

  /**
   * Makes way for a row under an id the client chose: no create the database numbers meanwhile or
   * later is given it (RecordStore.claimId). @throws UniqueConflictError when a row has it
   */
  async #claimId(tx: SqlExecutor, resource: ResourceModel, id: number): Promise<void> {
    await this.#store.claimId(tx, resource, id);
    if ((await this.#store.findById(resource, id, tx)) === undefined) return;
    throw new UniqueConflictError(`There is already a ${resource.singular} with id ${id}.`, { errors: [{ pointer: '/id', detail: `is already used by another ${resource.singular}` }] });
  }

  /**
   * The row a write applies to, as the principal may see it: 404 when it does not exist or is
   * not visible, 403 when visible (public reads) but owned by someone else.
   */
  async #currentForWrite(ctx: OperationContext, resource: ResourceModel, id: RecordId, tx: SqlExecutor, operation: 'update' | 'delete'): Promise<StoredRecord> {
    const current = await this.#store.findById(resource, id, tx, { forUpdate: true });
    if (current === undefined || !rowVisible(ctx.principal, resource, current)) throw notFound(resource, id);
    if (!rowPasses(current, ownerWriteFilter(ctx.principal, resource))) {
      throw new ForbiddenError(`${capitalize(resource.singular)} ${id} belongs to someone else; only its owner may change it.`);
    }
    enforceRule(ctx.principal, resource, operation, current, id);
    return current;
  }
}

/**
 * Refuses every write to a resource served read-only (a view, a table without a primary key),
 * whichever adapter asks: REST answers 405 before reaching here, GraphQL has no such mutations.
 */
function assertWritable(resource: ResourceModel): void {
  if (resource.mapping?.readOnly === true) {
    throw new MethodNotAllowedError(`${capitalize(resource.name)} is served read-only (a view, or a table without a primary key): it cannot be written.`, { headers: { allow: 'GET, HEAD' } });
  }
}

function notFound(resource: ResourceModel, id: RecordId): NotFoundError {
  return new NotFoundError(`There is no ${resource.singular} with id ${id}.`);
}

function without(record: StoredRecord, names: readonly string[] | undefined): StoredRecord {
  return names === undefined || names.length === 0 ? record : Object.fromEntries(Object.entries(record).filter(([name]) => !names.includes(name)));
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
