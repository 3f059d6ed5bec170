import { resourceNamed, type RelationModel, type ResourceModel, type SchemaModel } from '../schema/schema-model.js';
import { reverseSort, type FilterCondition, type StoredRecord } from '../store/list-spec.js';
import type { RecordStore } from '../store/record-store.js';
import { authorize } from './access-policy.js';
import { readerFilters, visibleRowFilters } from './filter-access.js';
import type { ListQuery } from './list-query.js';
import { aggregateGroups, type AggregateGroup, type AggregateQuery } from './aggregate-query.js';
import type { OperationContext } from './principal.js';
import { keyFields, recordId, recordKeyParts, type RecordId } from '../schema/record-key.js';
import { assertAggregateUsable, assertForeignKeyUsable, assertSortUsable, shownRecords } from './access-rules/field-reads.js';

/**
 * Reads for many parents or ids in one query each, under the same access rules as single reads:
 * what GraphQL's per-request batch loaders call, so relation fields cost a query per level.
 */
export class BatchReads {
  readonly #schema: SchemaModel;
  readonly #store: RecordStore;

  constructor(schema: SchemaModel, store: RecordStore) {
    this.#schema = schema;
    this.#store = store;
  }

  /**
   * The rows of a hasMany relation for many parents at once (one query whatever their number):
   * for each parent id, the page `query` describes (filters, sort, first/last, cursors), and
   * whether more rows lie beyond it. The parents must be rows the principal may read.
   */
  async relatedPages(
    ctx: OperationContext,
    relation: RelationModel,
    parentIds: readonly RecordId[],
    query: ListQuery,
  ): Promise<Map<RecordId, { records: StoredRecord[]; more: boolean }>> {
    const target = resourceNamed(this.#schema, relation.target);
    authorize(ctx.principal, target, 'read');
    assertForeignKeyUsable(ctx.principal, target, relation.foreignKey);
    assertSortUsable(ctx.principal, target, query.sort);
    const backward = query.backward === true;
    const lower = backward ? query.before : query.after;
    const upper = backward ? query.after : query.before;
    // One row more than the page per parent tells whether more lie beyond it (also for first: 0).
    const rows = await this.#store.listByKeys(target, relation.foreignKey, [...new Set(parentIds)], {
      sort: backward ? reverseSort(query.sort) : query.sort,
      perKeyLimit: query.limit + 1,
      filters: readerFilters(ctx.principal, this.#schema, target, query.filters).filters,
      ...(lower === undefined ? {} : { after: lower }),
      ...(upper === undefined ? {} : { before: upper }),
    });
    const pages = new Map<RecordId, { records: StoredRecord[]; more: boolean }>();
    for (const id of parentIds) pages.set(id, { records: [], more: false });
    for (const row of shownRecords(ctx.principal, target, rows)) pages.get(row[relation.foreignKey] as RecordId)?.records.push(row);
    for (const page of pages.values()) {
      page.more = page.records.length > query.limit;
      if (page.more) page.records.length = query.limit;
      if (backward) page.records.reverse();
    }
    return pages;
  }

  /** How many rows of a hasMany relation each parent has, under the filters: one grouped query. */
  async relatedCounts(ctx: OperationContext, relation: RelationModel, parentIds: readonly RecordId[], filters: ListQuery['filters']): Promise<Map<RecordId, number>> {
    const target = resourceNamed(this.#schema, relation.target);
    authorize(ctx.principal, target, 'read');
    assertForeignKeyUsable(ctx.principal, target, relation.foreignKey);
    return this.#store.countByKeys(target, relation.foreignKey, [...new Set(parentIds)], readerFilters(ctx.principal, this.#schema, target, filters).filters);
  }

  /**
   * The aggregate of a hasMany relation for many parents at once (one statement, grouped by the
   * foreign key): per parent id, its groups; without groupBy the one group, also over no rows
   * (count 0, sums null). The parents must be rows the principal may read.
   */
  async relatedAggregates(ctx: OperationContext, relation: RelationModel, parentIds: readonly RecordId[], query: AggregateQuery): Promise<Map<RecordId, AggregateGroup[]>> {
    const target = resourceNamed(this.#schema, relation.target);
    authorize(ctx.principal, target, 'read');
    assertForeignKeyUsable(ctx.principal, target, relation.foreignKey);
    assertAggregateUsable(ctx.principal, target, query);
    const { filters } = readerFilters(ctx.principal, this.#schema, target, query.filters);
    const byKey = await this.#store.aggregateByKeys(target, relation.foreignKey, [...new Set(parentIds)], { ...query, filters });
    const empty = query.groupBy.length > 0 ? [] : [{ group: [], count: 0, values: query.measures.map((m) => (m.fn === 'countDistinct' ? 0 : null)) }];
    return new Map(parentIds.map((id) => [id, aggregateGroups(query, byKey.get(id) ?? empty)]));
  }

  /** The rows with these ids (a mapped table's keys, composite ones too) that the principal may read, by id (one query). */
  async getMany(ctx: OperationContext, resource: ResourceModel, ids: readonly RecordId[]): Promise<Map<RecordId, StoredRecord>> {
    authorize(ctx.principal, resource, 'read');
    const keys = [...new Set(ids)];
    if (keys.length === 0) return new Map();
    const fields = keyFields(resource);
    const [first] = fields;
    if (first === undefined) throw new Error(`getMany: ${resource.name} has no key`);
    // A composite key's tuples as (a = ? and b = ?) or …, through the any/all filters.
    const matches: FilterCondition =
      fields.length === 1
        ? { field: first, op: 'in', value: keys }
        : { field: first, op: 'any', value: keys.map((id): FilterCondition => ({ field: first, op: 'all', value: recordKeyParts(resource, id).map((part, i): FilterCondition => ({ field: fields[i] as string, op: 'eq', value: part })) })) };
    const rows = await this.#store.list(resource, {
      filters: [matches, ...visibleRowFilters(ctx.principal, resource, 'read')],
      sort: fields.map((field) => ({ field, direction: 'asc' as const })),
      limit: keys.length,
    });
    return new Map(shownRecords(ctx.principal, resource, rows).map((row) => [recordId(resource, row) as RecordId, row]));
  }
}
