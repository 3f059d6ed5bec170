import { sql, type Kysely } from 'kysely';
import { isNullable, type ResourceModel } from '../schema/schema-model.js';
import { quoteIdentifier, type DynamicTables, type SqlStatement } from './sql-database.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';
import { whereClause, type ResourceLookup } from './sql-conditions.js';
import type { FilterCondition, SortKey } from './list-spec.js';
import { readSource } from './mapped-tables.js';

/** What a listByKeys read asks for (RecordStore.listByKeys). */
export interface ByKeysRead {
  resource: ResourceModel;
  field: string;
  keys: readonly unknown[];
  columns: readonly string[] | undefined;
  options: {
    sort: readonly SortKey[];
    perKeyLimit: number;
    filters?: readonly FilterCondition[];
    after?: readonly unknown[];
    before?: readonly unknown[];
  };
}

/** The statement of a listByKeys read, by the query builder: rows ranked within each key, the first `perKeyLimit` of each. */
export function byKeysStatement(builder: Kysely<DynamicTables>, rules: SqlDialectRules, resources: ResourceLookup, read: ByKeysRead): SqlStatement {
  const { resource, field, keys, columns, options } = read;
  const orderBy = options.sort
    .map((k) => {
      const nulls = rules.explicitNullsOrder && isNullable(resource, k.field) ? (k.direction === 'asc' ? ' nulls first' : ' nulls last') : '';
      return `${quoteIdentifier(k.field)} ${k.direction}${nulls}`;
    })
    .join(', ');
  const ranked = builder
    .selectFrom(readSource(resource) as string)
    .select(columns ?? [...resource.fields.keys()])
    .select(sql<number>`row_number() over (partition by ${sql.ref(field)} order by ${sql.raw(orderBy)})`.as('_rg_rank'))
    .where((eb) => eb.and([eb(field, 'in', [...keys]), whereClause(eb, rules, resource, options.filters ?? [], { ...options, filters: [], limit: 0 }, resources)]));
  return builder.selectFrom(ranked.as('ranked')).selectAll().where('_rg_rank', '<=', options.perKeyLimit).orderBy(field).orderBy('_rg_rank').compile();
}
