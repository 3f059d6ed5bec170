import { sql, type Kysely, type RawBuilder } from 'kysely';
import { fieldNamed, type ResourceModel } from '../schema/schema-model.js';
import type { AggregateRow, AggregateSortTarget, AggregateSpec, GroupKey, Measure } from './aggregate-spec.js';
import { quoteIdentifier, type DynamicTables, type SqlRow, type SqlStatement } from './sql-database.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';
import { whereClause, type ResourceLookup } from './sql-conditions.js';
import type { RecordId } from '../schema/record-key.js';

/**
 * The statement of an aggregate read: one SELECT … GROUP BY over the filtered rows. With `byKey`,
 * the rows of each of `keys` in `field` make their own groups too (the key first), for the
 * aggregates of a hasMany relation of many parents at once.
 *
 * Date truncation is text arithmetic on the ISO-8601 UTC text both dialects store, so it is the
 * same on each; sums and averages are taken over double precision, so a sum of big integers never
 * overflows (SQLite's integer sum would throw) and comes back as a number on every database.
 */
export function aggregateStatement(
  builder: Kysely<DynamicTables>,
  rules: SqlDialectRules,
  resource: ResourceModel,
  spec: AggregateSpec,
  resources: ResourceLookup,
  byKey?: { field: string; keys: readonly RecordId[] },
): SqlStatement {
  const groups = spec.groupBy.map((key, i) => ({ alias: `_rg_g${i}`, expression: groupExpression(key) }));
  if (byKey !== undefined) groups.unshift({ alias: '_rg_k', expression: sql.ref(byKey.field) });
  const measures = spec.measures.map((m, i) => ({ alias: `_rg_m${i}`, expression: measureExpression(m) }));
  // Groups sort by their own column; counts and measures by a column of their own.
  const sorts = spec.sort.map((key, i) => ({ alias: key.target.kind === 'group' ? `_rg_g${key.target.index}` : `_rg_s${i}`, key }));
  let query = builder
    .selectFrom(resource.name)
    .select(() => [
      ...groups.map((g) => g.expression.as(g.alias)),
      sql<number>`count(*)`.as('_rg_n'),
      ...measures.map((m) => m.expression.as(m.alias)),
      ...sorts.flatMap((s) => (s.key.target.kind === 'group' ? [] : [sortExpression(s.key.target).as(s.alias)])),
    ])
    .where((eb) => {
      const filtered = whereClause(eb, rules, resource, spec.filters, undefined, resources);
      return byKey === undefined ? filtered : eb.and([eb(byKey.field, 'in', [...byKey.keys]), filtered]);
    });
  if (groups.length > 0) query = query.groupBy(groups.map((g) => sql.ref(g.alias)));
  const order = [
    ...(byKey === undefined ? [] : [`${quoteIdentifier('_rg_k')} asc`]),
    ...sorts.map((s) => orderTerm(rules, s.alias, s.key.direction)),
    ...spec.groupBy.map((_key, i) => orderTerm(rules, `_rg_g${i}`, 'asc')),
  ];
  if (order.length > 0) query = query.orderBy(sql.raw(order.join(', ')));
  if (byKey === undefined) query = query.limit(spec.limit);
  return query.compile();
}

/** A row of {@link aggregateStatement} decoded: values as lists show them. */
export function decodeAggregateRow(rules: SqlDialectRules, resource: ResourceModel, spec: AggregateSpec, row: SqlRow): AggregateRow {
  return {
    group: spec.groupBy.map((key, i) => {
      const raw = row[`_rg_g${i}`];
      return key.unit === undefined ? rules.decode(fieldNamed(resource, key.field), raw) : (raw ?? null);
    }),
    count: Number(row._rg_n ?? 0),
    values: spec.measures.map((m, i) => {
      const raw = row[`_rg_m${i}`];
      if (raw === null || raw === undefined) return m.fn === 'countDistinct' ? 0 : null;
      return m.fn === 'min' || m.fn === 'max' ? rules.decode(fieldNamed(resource, m.field), raw) : Number(raw);
    }),
  };
}

function groupExpression(key: GroupKey): RawBuilder<unknown> {
  const column = sql.ref(key.field);
  switch (key.unit) {
    case undefined:
      return sql`${column}`;
    case 'day':
      return sql`substr(${column}, ${sql.raw('1, 10')})`;
    case 'month':
      return sql`substr(${column}, ${sql.raw('1, 7')}) || ${sql.raw("'-01'")}`;
    case 'year':
      return sql`substr(${column}, ${sql.raw('1, 4')}) || ${sql.raw("'-01-01'")}`;
  }
}

function measureExpression(measure: Measure): RawBuilder<unknown> {
  const column = sql.ref(measure.field);
  switch (measure.fn) {
    case 'sum':
      return sql`sum(cast(${column} as double precision))`;
    case 'avg':
      return sql`avg(cast(${column} as double precision))`;
    case 'min':
      return sql`min(${column})`;
    case 'max':
      return sql`max(${column})`;
    case 'countDistinct':
      return sql`count(distinct ${column})`;
  }
}

function sortExpression(target: Exclude<AggregateSortTarget, { kind: 'group' }>): RawBuilder<unknown> {
  return target.kind === 'count' ? sql`count(*)` : measureExpression(target.measure);
}

/** Ascending puts nulls first and descending last, as lists sort, on every database. */
function orderTerm(rules: SqlDialectRules, alias: string, direction: 'asc' | 'desc'): string {
  const nulls = rules.explicitNullsOrder ? (direction === 'asc' ? ' nulls first' : ' nulls last') : '';
  return `${quoteIdentifier(alias)} ${direction}${nulls}`;
}
