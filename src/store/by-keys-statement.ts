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
  /** One field, or a composite foreign key's fields (each key then a tuple of their values). */
  field: string | readonly string[];
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
  const { resource, keys, columns, options } = read;
  const fields = typeof read.field === 'string' ? [read.field] : read.field;
  const [first = ''] = fields;
  // A composite key's tuples as (a = ? and b = ?) or …, through the any/all filters.
  const tuples: FilterCondition = {
    field: first,
    op: 'any',
    value: keys.map((tuple): FilterCondition => ({ field: first, op: 'all', value: fields.map((field, i): FilterCondition => ({ field, op: 'eq', value: (tuple as readonly unknown[])[i] })) })),
  };
  const keyFilters = fields.length === 1 ? [] : [tuples];
  const orderBy = options.sort
    .map((k) => {
      const nulls = rules.explicitNullsOrder && isNullable(resource, k.field) ? (k.direction === 'asc' ? ' nulls first' : ' nulls last') : '';
      return `${quoteIdentifier(k.field)} ${k.direction}${nulls}`;
    })
    .join(', ');
  const ranked = builder
    .selectFrom(readSource(resource) as string)
    .select(columns ?? [...resource.fields.keys()])
    .select(sql<number>`row_number() over (partition by ${sql.join(fields.map((field) => sql.ref(field)))} order by ${sql.raw(orderBy)})`.as('_rg_rank'))
    .where((eb) =>
      eb.and([
        ...(fields.length === 1 ? [eb(first, 'in', [...keys])] : []),
        whereClause(eb, rules, resource, [...keyFilters, ...(options.filters ?? [])], { ...options, filters: [], limit: 0 }, resources),
      ]),
    );
  let statement = builder.selectFrom(ranked.as('ranked')).selectAll().where('_rg_rank', '<=', options.perKeyLimit);
  for (const field of fields) statement = statement.orderBy(field);
  return statement.orderBy('_rg_rank').compile();
}
