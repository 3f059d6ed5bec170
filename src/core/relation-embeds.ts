import { resourceNamed, type RelationMapping, type ResourceModel, type SchemaModel } from '../schema/schema-model.js';
import type { FilterCondition, StoredRecord } from '../store/list-spec.js';
import type { RecordStore } from '../store/record-store.js';
import { authorize } from './access-policy.js';
import { assertForeignKeyUsable, shownRecords } from './access-rules/field-reads.js';
import { visibleRowFilters } from './filter-access.js';
import type { OperationContext } from './principal.js';
import { keyFields } from '../schema/record-key.js';
import { relationJoin } from '../schema/relation-keys.js';

/**
 * `include`: related rows embedded in the rows of a read, one query per relation whatever the
 * number of rows, under the target's access: its read access first, its row rules in the query
 * (a list of related rows under the list rule, one related row under the read rule), its field
 * access on each embedded row.
 */
export class RelationEmbeds {
  readonly #schema: SchemaModel;
  readonly #store: RecordStore;
  /** Most related rows embedded per parent. */
  readonly #maxEmbedded: number;

  constructor(schema: SchemaModel, store: RecordStore, maxEmbedded: number) {
    this.#schema = schema;
    this.#store = store;
    this.#maxEmbedded = maxEmbedded;
  }

  /**
   * Embedding a relation reads its target: the same rule applies, before any row is read; a
   * hasMany relation groups the target's rows by its foreign key, which the principal must be
   * able to read on every row. @throws AuthenticationRequiredError, ForbiddenError
   */
  authorize(ctx: OperationContext, resource: ResourceModel, include: readonly string[]): void {
    for (const name of include) {
      const relation = resource.relations.get(name);
      if (relation === undefined) continue;
      const target = resourceNamed(this.#schema, relation.target);
      authorize(ctx.principal, target, 'read');
      if (relation.kind === 'hasMany') assertForeignKeyUsable(ctx.principal, target, relation.foreignKey);
    }
  }

  /**
   * Sets each relation of `include` on each of `records` (as the principal sees them: a belongsTo
   * relation whose foreign key it may not read on a record is left out of it).
   */
  async embed(ctx: OperationContext, resource: ResourceModel, records: StoredRecord[], include: readonly string[]): Promise<void> {
    if (records.length === 0) return;
    for (const name of include) {
      const relation = resource.relations.get(name);
      if (relation === undefined) continue;
      const target = resourceNamed(this.#schema, relation.target);
      const filters = visibleRowFilters(ctx.principal, target, relation.kind === 'hasMany' ? 'list' : 'read');
      const join = relationJoin(resource, relation);
      if (join === undefined) {
        // A composite foreign key of a mapped database: its belongsTo side (a hasMany is not embedded yet).
        const mapped = resource.mapping?.relations.get(relation.name);
        if (relation.kind === 'belongsTo' && mapped !== undefined) await this.#embedCompositeParent(ctx, records, name, target, mapped, filters);
        continue;
      }
      const { foreignKey, referencedKey } = join;
      if (relation.kind === 'hasMany') {
        const parentIds = records.map((r) => r[referencedKey] as number);
        const children = await this.#store.listByKeys(target, foreignKey, parentIds, {
          sort: keyFields(target).map((field) => ({ field, direction: 'asc' as const })),
          perKeyLimit: this.#maxEmbedded,
          filters,
        });
        const byParent = new Map<unknown, StoredRecord[]>();
        for (const child of shownRecords(ctx.principal, target, children)) {
          const list = byParent.get(child[foreignKey]) ?? [];
          list.push(child);
          byParent.set(child[foreignKey], list);
        }
        for (const record of records) record[name] = byParent.get(record[referencedKey]) ?? [];
      } else {
        const keys = [...new Set(records.map((r) => r[foreignKey]).filter((k): k is number | string => typeof k === 'number' || typeof k === 'string'))];
        const parents = keys.length === 0 ? [] : await this.#store.list(target, { filters: [{ field: referencedKey, op: 'in', value: keys }, ...filters], sort: [{ field: referencedKey, direction: 'asc' }], limit: keys.length });
        const byId = new Map(shownRecords(ctx.principal, target, parents).map((p) => [p[referencedKey], p]));
        for (const record of records) {
          // A foreign key hidden on this record hides what it points to as well.
          if (foreignKey in record) record[name] = byId.get(record[foreignKey]) ?? null;
        }
      }
    }
  }

  /**
   * Sets the row a composite foreign key (`fields` holding `targetFields` of `target`) points to on
   * each record: one query, the key tuples matched as `(a = ? and b = ?) or …`.
   */
  async #embedCompositeParent(ctx: OperationContext, records: StoredRecord[], name: string, target: ResourceModel, mapped: RelationMapping, filters: FilterCondition[]): Promise<void> {
    const { fields, targetFields } = mapped;
    const tuples = new Map<string, unknown[]>();
    for (const record of records) {
      const values = fields.map((field) => record[field]);
      if (values.every((value) => typeof value === 'number' || typeof value === 'string')) tuples.set(JSON.stringify(values), values);
    }
    const [first = ''] = targetFields;
    const matches: FilterCondition = {
      field: first,
      op: 'any',
      value: [...tuples.values()].map((values): FilterCondition => ({ field: first, op: 'all', value: targetFields.map((field, i): FilterCondition => ({ field, op: 'eq', value: values[i] })) })),
    };
    const parents = tuples.size === 0 ? [] : await this.#store.list(target, { filters: [matches, ...filters], sort: targetFields.map((field) => ({ field, direction: 'asc' as const })), limit: tuples.size });
    const byKey = new Map(shownRecords(ctx.principal, target, parents).map((parent) => [JSON.stringify(targetFields.map((field) => parent[field])), parent]));
    for (const record of records) {
      // A foreign key hidden on this record hides what it points to as well.
      if (fields.every((field) => field in record)) record[name] = byKey.get(JSON.stringify(fields.map((field) => record[field]))) ?? null;
    }
  }
}
