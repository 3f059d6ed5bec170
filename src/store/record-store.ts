import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { canonicalFields, fieldNamed, isNullable, type FieldModel, type ResourceModel } from '../schema/schema-model.js';
import { type DynamicTables, type ImmediateExecutor, type SqlDatabase, type SqlExecutor, type SqlRow, type SqlStatement } from './sql-database.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';
import { LRUCache } from 'lru-cache';
import { statementBytes } from './statement-bytes.js';
import { byKeysCacheKey, listCacheKey } from './list-cache-key.js';
import { bindTemplate, listTemplate } from './list-templates.js';
import { KeyedStatementCache } from './keyed-statements.js';
import { byKeysStatement } from './by-keys-statement.js';
import { whereClause, type ResourceLookup } from './sql-conditions.js';
import { isPromise, type PromiseOrValue } from '../promise-or-value.js';
import type { FilterCondition, ListSpec, SortKey, StoredRecord, TextSearch } from './list-spec.js';
import type { AggregateRow, AggregateSpec } from './aggregate-spec.js';
import { aggregateStatement, decodeAggregateRow } from './aggregate-statements.js';
import { columnNames, decodedFields } from './record-columns.js';
import { canonicalKeyPart, keyFields, recordKeyParts, type RecordId } from '../schema/record-key.js';
import { columnRef, columnsOf, keyColumns, keyFits, readSource, returnedColumns, writeTable, writeTablePlugin } from './mapped-tables.js';
import { filledKeys } from './generated-values.js';

type Select = SelectQueryBuilder<DynamicTables, string, object>;

/** Memory each cache of compiled statements may take, roughly: a few thousand statements. */
const STATEMENT_CACHE_BYTES = 4 * 1024 * 1024; // 4 MiB
/** The default options of hot-path reads, shared (no object per call). */
const NO_OPTIONS = Object.freeze({});

/**
 * Reads and writes resource rows. Field names reach SQL only from the schema model; values only
 * as bound parameters. Rows come back decoded, in canonical key order.
 */
export { columnNames } from './record-columns.js';

export class RecordStore {
  readonly #db: SqlDatabase;
  readonly #rules: SqlDialectRules;
  readonly #byId = new Map<string, SqlStatement>();
  /** Compiled INSERT/UPDATE text by resource and column list: writes skip the query builder. */
  readonly #writeSql = new Map<string, string>();
  /**
   * Compiled list queries by their whole spec (values included, so a hit is exactly the statement
   * the builder would produce): repeated reads such as first pages and polling skip the builder.
   */
  readonly #listSql = new LRUCache<string, SqlStatement>({ maxSize: STATEMENT_CACHE_BYTES, sizeCalculation: statementBytes });
  /** Compiled list statements by the shape of their spec, their filter values left as slots (list-templates.ts). */
  readonly #listTemplates = new LRUCache<string, SqlStatement>({ maxSize: STATEMENT_CACHE_BYTES, sizeCalculation: statementBytes });
  /** listByKeys statements by shape: compiling each with the query builder had been a third of a GraphQL query with one relation field. */
  readonly #byKeysSql = new KeyedStatementCache(STATEMENT_CACHE_BYTES);

  /** The targets of filters' relation paths. */
  readonly #resources: ResourceLookup;

  constructor(db: SqlDatabase, rules: SqlDialectRules, resources: ResourceLookup) {
    this.#db = db;
    this.#rules = rules;
    this.#resources = resources;
  }

  /**
   * The row with this id, or undefined (at once where the database answers at once: SQLite's reads).
   * `forUpdate` (in a transaction) locks it until the
   * transaction ends where writers run concurrently (PostgreSQL), so a check made on it still holds
   * when the write lands; SQLite's writers are serialised already.
   */
  findById(resource: ResourceModel, id: RecordId, executor: SqlExecutor = this.#db, options: { forUpdate?: boolean } = NO_OPTIONS): PromiseOrValue<StoredRecord | undefined> {
    const lock = options.forUpdate === true && this.#rules.rowLocks;
    const key = lock ? `${resource.name}|for update` : resource.name;
    let statement = this.#byId.get(key);
    if (statement === undefined) {
      let query = this.#db.builder.selectFrom(readSource(resource) as string).select(columnNames(resource));
      for (const name of keyFields(resource)) query = query.where(name, '=', 0);
      statement = (lock ? query.forUpdate() : query).compile();
      this.#byId.set(key, statement);
    }
    if (resource.mapping !== undefined && !keyFits(resource, id, this.#rules.int32Integers)) return undefined;
    const row = executor.one({ sql: statement.sql, parameters: recordKeyParts(resource, id), reuse: true });
    return isPromise(row) ? row.then((r) => this.#decodedOrNone(resource, r)) : this.#decodedOrNone(resource, row);
  }

  #decodedOrNone(resource: ResourceModel, row: SqlRow | undefined): StoredRecord | undefined {
    return row === undefined ? undefined : this.#decodeInPlace(resource, row);
  }

  /** One page of rows. Ask for one more than you show to learn whether a next page exists. */
  async list(resource: ResourceModel, spec: ListSpec, executor: SqlExecutor = this.#db): Promise<StoredRecord[]> {
    const rows = await executor.all(this.#listStatement(resource, spec));
    for (const row of rows) this.#decodeInPlace(resource, row);
    return rows;
  }

  /**
   * The statement of a list. When its filter values can be bound (list-templates.ts), it is
   * compiled once per shape and bound per request, so lists that differ only in their values skip
   * the builder; other lists are kept by their whole spec, for when the same one comes again
   * (first pages, polling, cursors).
   */
  #listStatement(resource: ResourceModel, spec: ListSpec): SqlStatement {
    const template = listTemplate(resource, spec, this.#rules, this.#resources);
    if (template !== undefined) {
      let compiled = this.#listTemplates.get(template.key);
      if (compiled === undefined) {
        compiled = this.#compileList(resource, template.spec);
        this.#listTemplates.set(template.key, compiled);
      }
      return { sql: compiled.sql, parameters: bindTemplate(compiled.parameters, template.values) };
    }
    const key = listCacheKey(resource, spec);
    const kept = key === undefined ? undefined : this.#listSql.get(key);
    if (kept !== undefined) return kept;
    const statement = this.#compileList(resource, spec);
    if (key !== undefined) this.#listSql.set(key, statement);
    return statement;
  }

  #compileList(resource: ResourceModel, spec: ListSpec): SqlStatement {
    if (spec.relevance !== undefined) return this.#compileRanked(resource, spec, spec.relevance);
    let query = this.#selectColumns(resource, spec.columns).where((eb) => whereClause(eb, this.#rules, resource, spec.filters, spec, this.#resources));
    query = this.#orderAndPage(resource, spec, query);
    return query.compile();
  }

  /**
   * A list in order of relevance to a search: the rows joined to the full-text index's matches
   * and their rank (which takes the place of the search among the filters), most relevant first,
   * then in `sort` order.
   */
  #compileRanked(resource: ResourceModel, spec: ListSpec, search: TextSearch): SqlStatement {
    const all = columnNames(resource);
    const columns = spec.columns === undefined ? all : all.filter((name) => spec.columns?.includes(name) === true);
    const filters = spec.filters.filter((f) => f.op !== 'search');
    let query = this.#db.builder
      .selectFrom(resource.name)
      .innerJoin(this.#rules.searchRanked(resource.name, search, spec.restricted === true).as('_rg_s'), (join) => join.on(sql<SqlBool>`${sql.ref('_rg_s._rg_id')} = ${sql.ref(`${resource.name}.id`)}`))
      .select(columns.map((name) => sql.ref(`${resource.name}.${name}`).as(name)))
      .where((eb) => whereClause(eb, this.#rules, resource, filters, undefined, this.#resources))
      .orderBy(sql.ref('_rg_s._rg_rank')) as unknown as Select;
    query = this.#orderAndPage(resource, { ...spec, sort: spec.sort.map((k) => ({ ...k, field: `${resource.name}.${k.field}` })) }, query);
    return query.compile();
  }

  #orderAndPage(resource: ResourceModel, spec: ListSpec, query: Select): Select {
    for (const key of spec.sort) {
      const explicitNulls = this.#rules.explicitNullsOrder && isNullable(resource, key.field);
      query = query.orderBy(key.field, (ob) => {
        const ordered = key.direction === 'asc' ? ob.asc() : ob.desc();
        if (!explicitNulls) return ordered;
        return key.direction === 'asc' ? ordered.nullsFirst() : ordered.nullsLast();
      });
    }
    query = query.limit(spec.limit);
    if (spec.offset !== undefined && spec.offset > 0) query = query.offset(spec.offset);
    return query;
  }

  /** How many rows match the filters. */
  async count(resource: ResourceModel, filters: readonly FilterCondition[], executor: SqlExecutor = this.#db): Promise<number> {
    const query = this.#db.builder
      .selectFrom(readSource(resource) as string)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => whereClause(eb, this.#rules, resource, filters, undefined, this.#resources));
    const rows = await executor.all(query.compile());
    return Number(rows[0]?.n ?? 0);
  }

  /** How many rows match the filters for each of `keys` in `field`: one grouped query. */
  async countByKeys(
    resource: ResourceModel,
    field: string,
    keys: readonly RecordId[],
    filters: readonly FilterCondition[],
    executor: SqlExecutor = this.#db,
  ): Promise<Map<RecordId, number>> {
    const counts = new Map<RecordId, number>();
    if (keys.length === 0) return counts;
    const query = this.#db.builder
      .selectFrom(readSource(resource) as string)
      .select((eb) => [eb.ref(field).as('k'), eb.fn.countAll<number>().as('n')])
      .where((eb) => eb.and([eb(field, 'in', [...keys]), whereClause(eb, this.#rules, resource, filters, undefined, this.#resources)]))
      .groupBy(field);
    for (const row of await executor.all(query.compile())) counts.set(keyOf(resource, field, row.k), Number(row.n));
    return counts;
  }

  /** The groups of an aggregate read, in its order: one statement. */
  async aggregate(resource: ResourceModel, spec: AggregateSpec, executor: SqlExecutor = this.#db): Promise<AggregateRow[]> {
    const rows = await executor.all(aggregateStatement(this.#db.builder, this.#rules, resource, spec, this.#resources));
    return rows.map((row) => decodeAggregateRow(this.#rules, resource, spec, row));
  }

  /**
   * The groups of an aggregate read for each of `keys` in `field` (a hasMany relation's foreign
   * key): one statement for any number of parents; keys without rows are left out.
   */
  async aggregateByKeys(resource: ResourceModel, field: string, keys: readonly RecordId[], spec: AggregateSpec, executor: SqlExecutor = this.#db): Promise<Map<RecordId, AggregateRow[]>> {
    const byKey = new Map<RecordId, AggregateRow[]>();
    if (keys.length === 0) return byKey;
    const rows = await executor.all(aggregateStatement(this.#db.builder, this.#rules, resource, spec, this.#resources, { field, keys }));
    for (const row of rows) {
      const key = keyOf(resource, field, row._rg_k);
      const list = byKey.get(key) ?? [];
      list.push(decodeAggregateRow(this.#rules, resource, spec, row));
      byKey.set(key, list);
    }
    return byKey;
  }

  /**
   * Rows of `resource` whose `field` is one of `keys`, at most `perKeyLimit` per key, in `sort`
   * order within each key: one query for any number of parents (embeds, relation loading). Fields
   * given as a list (a composite foreign key) take each key as a tuple of their values.
   */
  async listByKeys(
    resource: ResourceModel,
    field: string | readonly string[],
    keys: readonly RecordId[] | readonly (readonly unknown[])[],
    options: {
      sort: readonly SortKey[];
      perKeyLimit: number;
      filters?: readonly FilterCondition[];
      columns?: readonly string[];
      after?: readonly unknown[];
      before?: readonly unknown[];
    },
    executor: SqlExecutor = this.#db,
  ): Promise<StoredRecord[]> {
    if (keys.length === 0) return [];
    const columns = options.columns === undefined ? undefined : unique([...options.columns, ...(typeof field === 'string' ? [field] : field)]);
    const shape = typeof field === 'string' ? byKeysCacheKey(resource, field, keys.length, options) : undefined;
    const statement = this.#byKeysSql.statement(shape, keys, (some) => byKeysStatement(this.#db.builder, this.#rules, this.#resources, { resource, field, keys: some, columns, options }));
    const rows = await executor.all(statement);
    return rows.map((row) => this.decodeRow(resource, row, columns));
  }

  /** Inserts a row (values keyed by field name, already validated) and returns it as stored. */
  async insert(executor: SqlExecutor, resource: ResourceModel, values: StoredRecord): Promise<StoredRecord> {
    const rows = await executor.all(this.insertStatement(resource, values));
    return this.#decodeInPlace(resource, firstRow(rows));
  }

  /**
   * Makes way for a row of `resource` whose id the client chose, in the transaction that inserts
   * it: where other transactions could be numbering rows meanwhile (PostgreSQL), they wait until
   * this one ends ({@link SqlDialectRules.lockForImport}); then the id generator moves past `id`
   * ({@link SqlDialectRules.reserveIds}), so no create it numbers is given `id`. (SQLite's
   * AUTOINCREMENT moves past an id inserted as it is.)
   */
  async claimId(executor: SqlExecutor, resource: ResourceModel, id: number): Promise<void> {
    const lock = this.#rules.lockForImport([resource.name]);
    if (lock !== undefined) await executor.run(lock);
    await executor.all(this.#rules.reserveIds(resource.name, id, 0));
  }

  /** {@link insert} in a transaction that runs at once. */
  insertNow(executor: ImmediateExecutor, resource: ResourceModel, values: StoredRecord): StoredRecord {
    const row = executor.one(this.insertStatement(resource, values));
    if (row === undefined) throw new Error(`the insert into ${resource.name} returned no row`);
    return this.#decodeInPlace(resource, row);
  }

  /** The INSERT of one row, returning its columns (what {@link insert} runs), for composing. */
  insertStatement(resource: ResourceModel, values: StoredRecord): SqlStatement {
    const encoded = this.#encodeValues(resource, filledKeys(resource, values));
    const key = `insert|${resource.name}|${Object.keys(encoded).join(',')}`;
    let text = this.#writeSql.get(key);
    if (text === undefined) {
      text = this.#db.builder.insertInto(writeTable(resource)).withPlugin(writeTablePlugin(resource)).values(columnsOf(resource, encoded)).returning(returnedColumns(resource)).compile().sql;
      this.#cacheWrite(key, text);
    }
    // Kysely binds values in column order, so the cached text takes them in that order. A create
    // sets every writable field, so there is one text per resource: worth keeping prepared.
    return { sql: text, parameters: Object.values(encoded), reuse: true };
  }

  /** Updates the given columns of one row; returns it as stored, or undefined when it does not exist. */
  async update(executor: SqlExecutor, resource: ResourceModel, id: RecordId, values: StoredRecord): Promise<StoredRecord | undefined> {
    if (resource.mapping !== undefined && !keyFits(resource, id, this.#rules.int32Integers)) return undefined;
    const encoded = this.#encodeValues(resource, values);
    const key = `update|${resource.name}|${Object.keys(encoded).join(',')}`;
    let text = this.#writeSql.get(key);
    if (text === undefined) {
      let query = this.#db.builder.updateTable(writeTable(resource)).withPlugin(writeTablePlugin(resource)).set(columnsOf(resource, encoded));
      for (const column of keyColumns(resource)) query = query.where(column, '=', 0);
      text = query.returning(returnedColumns(resource)).compile().sql;
      this.#cacheWrite(key, text);
    }
    const rows = await executor.all({ sql: text, parameters: [...Object.values(encoded), ...recordKeyParts(resource, id)] });
    return rows[0] === undefined ? undefined : this.#decodeInPlace(resource, rows[0]);
  }

  /** Deletes one row; resolves to whether it existed. */
  async delete(executor: SqlExecutor, resource: ResourceModel, id: RecordId): Promise<boolean> {
    if (resource.mapping !== undefined && !keyFits(resource, id, this.#rules.int32Integers)) return false;
    let query = this.#db.builder.deleteFrom(writeTable(resource)).withPlugin(writeTablePlugin(resource));
    const parts = recordKeyParts(resource, id);
    for (const [i, column] of keyColumns(resource).entries()) query = query.where(column, '=', parts[i]);
    const changed = await executor.run(query.compile());
    return changed > 0;
  }

  /** Sets `values` on every row whose `field` equals `key`; resolves to how many changed. */
  async updateWhere(executor: SqlExecutor, resource: ResourceModel, field: string, key: RecordId, values: StoredRecord): Promise<number> {
    const query = this.#db.builder
      .updateTable(writeTable(resource))
      .withPlugin(writeTablePlugin(resource))
      .set(columnsOf(resource, this.#encodeValues(resource, values)))
      .where(columnRef(resource, field), '=', key);
    return executor.run(query.compile());
  }

  /** Ids of the rows whose `field` equals `key`, ascending. */
  async idsWhere(executor: SqlExecutor, resource: ResourceModel, field: string, key: RecordId, limit?: number): Promise<number[]> {
    let query = this.#db.builder.selectFrom(readSource(resource) as string).select('id').where(field, '=', key).orderBy('id');
    if (limit !== undefined) query = query.limit(limit);
    const rows = await executor.all(query.compile());
    return rows.map((r) => Number(r.id));
  }

  /**
   * Which of `ids` exist in `resource`. `forShare` (in a transaction) keeps them from being deleted
   * until it ends where writers run concurrently (PostgreSQL): a reference checked stays valid.
   */
  async existingIds(executor: SqlExecutor, resource: ResourceModel, ids: readonly RecordId[], options: { forShare?: boolean } = NO_OPTIONS): Promise<Set<RecordId>> {
    if (ids.length === 0) return new Set();
    const [field] = keyFields(resource);
    if (field === undefined || keyFields(resource).length > 1) throw new Error(`existingIds: ${resource.name} has no single-field key`);
    const query = this.#db.builder.selectFrom(readSource(resource) as string).select(field).where(field, 'in', [...ids]);
    const rows = await executor.all((options.forShare === true && this.#rules.rowLocks ? query.forShare() : query).compile());
    return new Set(rows.map((r) => keyOf(resource, field, r[field])));
  }

  /** Raw (stored) value of a field, as cursors carry it. */
  encodeValue(field: FieldModel, value: unknown): unknown {
    return this.#rules.encode(field, value);
  }

  /** Decodes a driver row into a record, in canonical key order (id, declared fields, createdAt, updatedAt); only the fields the dialect stores differently are decoded. */
  decodeRow(resource: ResourceModel, row: SqlRow, columns?: readonly string[]): StoredRecord {
    const record: StoredRecord = {};
    const rules = this.#rules;
    const decoded = decodedFields(resource, rules);
    for (const field of canonicalFields(resource)) {
      if (columns !== undefined && !columns.includes(field.name)) continue;
      record[field.name] = decoded.includes(field) ? rules.decode(field, row[field.name]) : (row[field.name] ?? null);
    }
    return record;
  }

  /**
   * Decodes a row selected with {@link columnNames} (or a subset of them, in the same order) where
   * it lies: its keys are already in canonical order, and only the fields the dialect stores
   * differently (booleans, JSON, …) are touched. The hot read path: no copy, no dynamic keys.
   */
  #decodeInPlace(resource: ResourceModel, row: SqlRow): StoredRecord {
    const rules = this.#rules;
    for (const field of decodedFields(resource, rules)) {
      const name = field.name;
      if (name in row) row[name] = rules.decode(field, row[name]);
    }
    return row;
  }

  /** PATCH bodies pick any subset of columns; the cache stays bounded whatever clients send. */
  #cacheWrite(key: string, text: string): void {
    if (this.#writeSql.size >= 1000) this.#writeSql.clear();
    this.#writeSql.set(key, text);
  }

  #selectColumns(resource: ResourceModel, columns: readonly string[] | undefined): Select {
    const all = columnNames(resource);
    return this.#db.builder.selectFrom(readSource(resource) as string).select(columns === undefined ? all : all.filter((name) => columns.includes(name)));
  }

  #encodeValues(resource: ResourceModel, values: StoredRecord): Record<string, unknown> {
    const encoded: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(values)) {
      encoded[name] = this.#rules.encode(fieldNamed(resource, name), value);
    }
    return encoded;
  }
}

function firstRow(rows: SqlRow[]): SqlRow {
  const row = rows[0];
  if (row === undefined) throw new Error('statement returned no row');
  return row;
}

/** A key value of `field` as the driver returns it, as a record name (see canonicalKeyPart; bigint columns come as text). */
function keyOf(resource: ResourceModel, field: string, value: unknown): RecordId {
  return canonicalKeyPart(fieldNamed(resource, field), value) ?? Number(value);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

