import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { fieldNamed, type ResourceModel, isNullable } from '../schema/schema-model.js';
import { reverseSort, type FilterCondition, type ListSpec, type SortKey, type TextMatch, type TextSearch } from './list-spec.js';
import type { DynamicTables } from './sql-database.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';

type Builder = ExpressionBuilder<DynamicTables, string>;

/**
 * WHERE clauses of list queries: filters, and keyset bounds. Field names come from the checked
 * spec (the schema's), values go in as bound parameters.
 */
export function whereClause(eb: Builder, rules: SqlDialectRules, resource: ResourceModel, filters: readonly FilterCondition[], page?: ListSpec): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = filters.map((f) => condition(eb, rules, resource, f));
  if (page?.after !== undefined) conditions.push(keysetCondition(eb, rules, resource, page.sort, page.after));
  // "Before p in this order" is "after p in the reverse order" (nulls first ascending mirror nulls last descending).
  if (page?.before !== undefined) conditions.push(keysetCondition(eb, rules, resource, reverseSort(page.sort), page.before));
  return eb.and(conditions);
}

function condition(eb: Builder, rules: SqlDialectRules, resource: ResourceModel, filter: FilterCondition): Expression<SqlBool> {
  if (filter.op === 'none') return sql<SqlBool>`1 = 0`;
  if (filter.op === 'search') return rules.searchMatches(resource.name, filter.value as TextSearch);
  if (filter.op === 'any' || filter.op === 'all') {
    const parts = (filter.value as readonly FilterCondition[]).map((part) => condition(eb, rules, resource, part));
    if (filter.op === 'all') return eb.and(parts);
    return parts.length === 0 ? sql<SqlBool>`1 = 0` : eb.or(parts);
  }
  const field = fieldNamed(resource, filter.field);
  const column = eb.ref(field.name);
  const encode = (v: unknown): unknown => rules.encode(field, v);
  switch (filter.op) {
    case 'eq':
      return filter.value === null ? eb(column, 'is', null) : eb(column, '=', encode(filter.value));
    case 'ne':
      // "not equal" includes rows where the field is null, as a person reading the filter expects.
      return filter.value === null
        ? eb(column, 'is not', null)
        : eb.or([eb(column, '<>', encode(filter.value)), eb(column, 'is', null)]);
    case 'lt':
      return eb(column, '<', encode(filter.value));
    case 'lte':
      return eb(column, '<=', encode(filter.value));
    case 'gt':
      return eb(column, '>', encode(filter.value));
    case 'gte':
      return eb(column, '>=', encode(filter.value));
    case 'in':
      return eb(column, 'in', (filter.value as unknown[]).map(encode));
    case 'contains':
      return rules.contains(column, filter.value as string);
    case 'startsWith':
      return rules.startsWith(column, filter.value as string);
    case 'isNull':
      return eb(column, filter.value === true ? 'is' : 'is not', null);
    case 'textMatch':
      return rules.likeIgnoringCase(column, likePattern(filter.value as TextMatch));
  }
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
