import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { relationJoin } from '../schema/relation-keys.js';
import { fieldNamed, type ResourceModel, isNullable } from '../schema/schema-model.js';
import { reverseSort, type FilterCondition, type ListSpec, type SortKey, type TextMatch, type TextSearch } from './list-spec.js';
import type { DynamicTables } from './sql-database.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';
import { foldCase } from './fold-case.js';
import { ValueSlot } from './list-templates.js';

type Builder = ExpressionBuilder<DynamicTables, string>;

/** The resources a filter's relation paths lead to, by name (the schema's). */
export type ResourceLookup = (name: string) => ResourceModel;

/**
 * WHERE clauses of list queries: filters, and keyset bounds. Field names come from the checked
 * spec (the schema's), values go in as bound parameters. `resources` resolves the targets of
 * relation paths (`related`, `some`, `noneOf`); without it a filter holding one is a programming error.
 */
export function whereClause(eb: Builder, rules: SqlDialectRules, resource: ResourceModel, filters: readonly FilterCondition[], page: ListSpec | undefined, resources: ResourceLookup): Expression<SqlBool> {
  const scope: Scope = { eb, rules, resources, guard: false, table: undefined, depth: 0 };
  const conditions: Expression<SqlBool>[] = filters.map((f) => condition(scope, resource, f));
  if (page?.after !== undefined) conditions.push(keysetCondition(eb, rules, resource, page.sort, page.after));
  // "Before p in this order" is "after p in the reverse order" (nulls first ascending mirror nulls last descending).
  if (page?.before !== undefined) conditions.push(keysetCondition(eb, rules, resource, reverseSort(page.sort), page.before));
  return eb.and(conditions);
}

/** Where a condition is compiled. */
interface Scope {
  eb: Builder;
  rules: SqlDialectRules;
  resources: ResourceLookup;
  /**
   * Under a `not`: each comparison that SQL would make unknown on a null field is made false
   * instead (`col is not null and …`), so that `not` matches exactly the other rows. Outside any
   * `not`, comparisons stay bare so that indexes serve them (unknown rejects a row as false does).
   */
  guard: boolean;
  /** The alias of the table inside a relation subquery; undefined for the query's own table (unqualified). */
  table: string | undefined;
  /** Relation subqueries around this condition (their aliases are `_rg_f<depth>`). */
  depth: number;
}

function condition(scope: Scope, resource: ResourceModel, filter: FilterCondition): Expression<SqlBool> {
  const { eb, rules } = scope;
  switch (filter.op) {
    case 'none':
      return sql<SqlBool>`1 = 0`;
    case 'search':
      return scope.rules.searchMatches(resource.name, filter.value as TextSearch);
    case 'any':
    case 'all': {
      const parts = (filter.value as readonly FilterCondition[]).map((part) => condition(scope, resource, part));
      if (filter.op === 'all') return eb.and(parts);
      return parts.length === 0 ? sql<SqlBool>`1 = 0` : eb.or(parts);
    }
    case 'not':
      return sql<SqlBool>`not (${condition({ ...scope, guard: true }, resource, filter.value as FilterCondition)})`;
    case 'related':
    case 'some':
    case 'noneOf':
      return relationCondition(scope, resource, filter);
    default:
  }
  const field = fieldNamed(resource, filter.field);
  const column = scope.table === undefined ? eb.ref(field.name) : eb.ref(`${scope.table}.${field.name}`);
  // A slot of a statement compiled once for many values (list-templates.ts) holds a value encoded already.
  const encode = (v: unknown): unknown => (v instanceof ValueSlot ? v : rules.encode(field, v));
  // A comparison false (not unknown) on null, where a `not` above needs it (see Scope.guard).
  const known = (test: Expression<SqlBool>): Expression<SqlBool> => (scope.guard && !field.system ? eb.and([eb(column, 'is not', null), test]) : test);
  switch (filter.op) {
    case 'eq':
      return filter.value === null ? eb(column, 'is', null) : known(eb(column, '=', encode(filter.value)));
    case 'ne':
      // "not equal" includes rows where the field is null, as a person reading the filter expects.
      return filter.value === null
        ? eb(column, 'is not', null)
        : eb.or([eb(column, '<>', encode(filter.value)), eb(column, 'is', null)]);
    case 'lt':
      return known(eb(column, '<', encode(filter.value)));
    case 'lte':
      return known(eb(column, '<=', encode(filter.value)));
    case 'gt':
      return known(eb(column, '>', encode(filter.value)));
    case 'gte':
      return known(eb(column, '>=', encode(filter.value)));
    case 'in':
      return known(eb(column, 'in', (filter.value as unknown[]).map(encode)));
    case 'contains':
      return known(rules.contains(column, filter.value as string));
    case 'startsWith':
      return known(rules.startsWith(column, filter.value as string));
    case 'containsIgnoringCase':
      return known(rules.containsFolded(column, foldCase(filter.value as string)));
    case 'isNull':
      return eb(column, filter.value === true ? 'is' : 'is not', null);
    case 'textMatch':
      return known(rules.likeIgnoringCase(column, likePattern(filter.value as TextMatch)));
  }
}

/**
 * A relation path as a correlated subquery on the related table, aliased `_rg_f<depth>`: EXISTS
 * of the referenced row (belongsTo, by its primary key) or of a matching child (hasMany, by the
 * child's indexed foreign key), NOT EXISTS for `noneOf`. EXISTS is never unknown, so the
 * condition inside starts again without guards.
 */
function relationCondition(scope: Scope, resource: ResourceModel, filter: FilterCondition): Expression<SqlBool> {
  const relation = resource.relations.get(filter.field);
  if (relation === undefined) throw new Error(`unknown relation ${resource.name}.${filter.field}`);
  const target = scope.resources(relation.target);
  const alias = `_rg_f${scope.depth + 1}`;
  const outer = (column: string): Expression<unknown> => sql.ref(scope.table === undefined ? `${resource.name}.${column}` : `${scope.table}.${column}`);
  // The join's columns: `id` on restgraph's own tables; a mapped table's key, or what its foreign key references.
  const join = relationJoin(resource, relation);
  if (join === undefined) throw new Error(`relation ${resource.name}.${relation.name} has a composite foreign key`);
  const [innerKey, outerKey] = relation.kind === 'belongsTo' ? [join.referencedKey, join.foreignKey] : [join.foreignKey, join.referencedKey];
  const inner = condition({ ...scope, guard: false, table: alias, depth: scope.depth + 1 }, target, filter.value as FilterCondition);
  if (scope.rules.uncorrelatedRelationTests && scope.depth > 0) {
    // A path inside a path (`author.posts.any(…)`): as a correlated subquery it would run again for
    // every row of the subquery around it (every post of the author of every post), so it is the
    // related keys that match, computed once for the statement. Null keys are left out, so that
    // `not in` is never unknown; a null foreign key is unknown to `in`, which a `not` above needs
    // false (see Scope.guard). A path from the listed rows stays correlated: each listed row's
    // related rows are read once, through the key's index, and the search stops at the first match.
    const key = sql.ref(`${alias}.${innerKey}`);
    const keys = sql`select ${key} from ${sql.table(target.name)} as ${sql.id(alias)} where ${key} is not null and ${inner}`;
    if (filter.op === 'noneOf') return sql<SqlBool>`${outer(outerKey)} not in (${keys})`;
    const test = sql<SqlBool>`${outer(outerKey)} in (${keys})`;
    return relation.kind === 'belongsTo' && scope.guard ? sql<SqlBool>`(${outer(outerKey)} is not null and ${test})` : test;
  }
  const exists = sql<SqlBool>`exists (select 1 from ${sql.table(target.name)} as ${sql.id(alias)} where ${sql.ref(`${alias}.${innerKey}`)} = ${outer(outerKey)} and ${inner})`;
  return filter.op === 'noneOf' ? sql<SqlBool>`not ${exists}` : exists;
}

/**
 * The LIKE pattern of a text match, its own `%`, `_` and backslash escaped (with a backslash, the ESCAPE
 * character every dialect's `likeIgnoringCase` declares): what the client typed is matched as text.
 */
function likePattern(match: TextMatch): string {
  const text = match.text.replace(/[\\%_]/g, (c) => `\\${c}`);
  return `${match.at === 'start' ? '' : '%'}${text}${match.at === 'end' ? '' : '%'}`;
}

/**
 * Rows strictly after the cursor position in (sort..., id) order, with nulls first ascending
 * and last descending: OR over i of (k1 = v1 AND … AND k(i-1) = v(i-1) AND ki "after" vi).
 */
function keysetCondition(eb: Builder, rules: SqlDialectRules, resource: ResourceModel, sort: readonly SortKey[], position: readonly unknown[]): Expression<SqlBool> {
  // Cursors carry values as clients see them; compare with what the database stores.
  const after = sort.map((key, i) => rules.encode(fieldNamed(resource, key.field), position[i]));
  const branches: Expression<SqlBool>[] = [];
  for (let i = 0; i < sort.length; i++) {
    const parts: Expression<SqlBool>[] = [];
    for (let j = 0; j < i; j++) {
      const key = sort[j] as SortKey;
      const value = after[j];
      parts.push(value === null ? eb(eb.ref(key.field), 'is', null) : eb(eb.ref(key.field), '=', value));
    }
    const key = sort[i] as SortKey;
    const value = after[i];
    const column = eb.ref(key.field);
    const nullable = isNullable(resource, key.field);
    if (key.direction === 'asc') {
      if (value === null) parts.push(eb(column, 'is not', null));
      else parts.push(eb(column, '>', value));
    } else {
      if (value === null) continue; // nothing comes after null in descending order
      parts.push(nullable ? eb.or([eb(column, '<', value), eb(column, 'is', null)]) : eb(column, '<', value));
    }
    branches.push(eb.and(parts));
  }
  return branches.length === 0 ? sql<SqlBool>`1 = 0` : eb.or(branches);
}
