import { InvalidQueryError, type ErrorDetail } from '../errors.js';
import { type ResourceModel, LATER_QUERY_PARAMETERS, RESERVED_QUERY_PARAMETERS } from '../schema/schema-model.js';
import type { FilterCondition, QueryOperator, SortKey, TextSearch } from '../store/list-spec.js';
import { OPERATORS_BY_TYPE, parseFilterValue } from './filter-values.js';
import { DEFAULT_FILTER_LIMITS, readFilterExpression, type FilterLimits, type FilterResources } from './filter-expression/filter-parser.js';
import { decodeCursor, truncate } from './list-cursors.js';
import { parseSearch } from './text-search.js';
import { keyFields } from '../schema/record-key.js';

export { isCalendarDate, OPERATORS_BY_TYPE, parseFilterValue } from './filter-values.js';
export { decodeCursor, encodeCursor, type DecodedCursor } from './list-cursors.js';

/** Query-string values as an HTTP framework hands them over: repeated parameters become arrays. */
export type RawQuery = Record<string, string | string[] | undefined>;

export interface ListLimits {
  /** Page size when `limit` is absent. @default 100 */
  defaultLimit: number;
  /** Largest `limit` accepted. @default 1000 */
  maxLimit: number;
  /** Most values in one `in` filter (and in one `in (…)` of a filter expression). @default 100 */
  maxInValues: number;
  /** Most groups one aggregate answers without `limit` (more is a 400). @default 1000 */
  maxGroups: number;
  /** Most comparisons in one `filter` expression. @default 100 */
  maxFilterConditions?: number;
  /** Most levels of nesting in one `filter` expression. @default 8 */
  maxFilterDepth?: number;
  /** Most relations one `filter` expression follows from the listed resource. @default 3 */
  maxFilterHops?: number;
  /** Longest `filter` expression, in characters. @default 4096 */
  maxFilterLength?: number;
}

/** The bounds of `filter` expressions within list limits. */
export function filterLimitsOf(limits: ListLimits): FilterLimits {
  return {
    maxConditions: limits.maxFilterConditions ?? DEFAULT_FILTER_LIMITS.maxConditions,
    maxDepth: limits.maxFilterDepth ?? DEFAULT_FILTER_LIMITS.maxDepth,
    maxHops: limits.maxFilterHops ?? DEFAULT_FILTER_LIMITS.maxHops,
    maxLength: limits.maxFilterLength ?? DEFAULT_FILTER_LIMITS.maxLength,
    maxInValues: limits.maxInValues,
  };
}

/** A list request, checked against the schema. */
export interface ListQuery {
  filters: FilterCondition[];
  /** Always ends with `id`. */
  sort: SortKey[];
  limit: number;
  offset?: number;
  /** Decoded keyset cursor: stored values of the sort keys of the last row seen. */
  after?: unknown[];
  /** Decoded keyset cursor on the other side: only rows before it. */
  before?: unknown[];
  /**
   * Take the last `limit` rows of the (bounded) list instead of the first (Relay's `last`); they
   * still come back in `sort` order.
   */
  backward?: boolean;
  /** Fields to return, in the order asked; all when absent. */
  fields?: readonly string[];
  /** Relations to embed. */
  include: readonly string[];
  /** Whether to count every matching row. */
  count: boolean;
  /**
   * Most relevant first for this full-text search (also among the filters): a search without
   * `sort`. Such a list pages by offset, not by cursor.
   */
  relevance?: TextSearch;
}

const ALL_OPERATORS = new Set<string>(Object.values(OPERATORS_BY_TYPE).flat());
const FILTER_KEY = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[([A-Za-z]*)\])?$/;

/**
 * Parses list query parameters: `sort`, `limit`, `offset`, `after`, `count`, `fields`, `include`,
 * `filter` (an expression, see {@link readFilterExpression}; its relation paths lead to
 * `resources`, none when absent) and field filters (`name=Alice`, `age[gte]=18`), all ANDed.
 * Field names are checked against the schema and values against field types; everything wrong is
 * reported at once, each problem naming its parameter.
 *
 * @throws InvalidQueryError (400) listing every problem.
 */
export function parseListQuery(resource: ResourceModel, raw: RawQuery, limits: ListLimits, extraAllowed: readonly string[] = [], resources?: FilterResources): ListQuery {
  const problems: ErrorDetail[] = [];
  const query: ListQuery = { filters: [], sort: [], limit: limits.defaultLimit, include: [], count: false };
  let cursor: string | undefined;
  let search: TextSearch | undefined;

  for (const [key, rawValue] of Object.entries(raw)) {
    if (rawValue === undefined || extraAllowed.includes(key)) continue;
    if (Array.isArray(rawValue)) {
      problems.push({ parameter: key, detail: 'is given more than once; give it once (use [in] with comma-separated values for several)' });
      continue;
    }
    const value = rawValue;
    switch (key) {
      case 'sort':
        query.sort = parseSort(resource, value, problems);
        break;
      case 'limit': {
        const n = parseNonNegativeInteger(value);
        if (n === undefined || n < 1 || n > limits.maxLimit) problems.push({ parameter: 'limit', detail: `must be an integer from 1 to ${limits.maxLimit}` });
        else query.limit = n;
        break;
      }
      case 'offset': {
        const n = parseNonNegativeInteger(value);
        if (n === undefined) problems.push({ parameter: 'offset', detail: 'must be a non-negative integer' });
        else query.offset = n;
        break;
      }
      case 'after':
        cursor = value;
        break;
      case 'count':
        if (value !== 'true' && value !== 'false') problems.push({ parameter: 'count', detail: 'must be true or false' });
        else query.count = value === 'true';
        break;
      case 'fields':
        query.fields = parseNameList(value, 'fields', problems, (name) => (resource.fields.has(name) ? undefined : `"${name}" is not a field of ${resource.name}`));
        break;
      case 'filter': {
        // A field named filter (allowed in schemas written before the parameter) is filtered with filter[eq]=.
        const reading = readFilterExpression(value, resource, resources, filterLimitsOf(limits));
        if (reading.problem !== undefined) problems.push({ parameter: 'filter', detail: reading.problem, offset: reading.offset });
        else query.filters.push(reading.condition);
        break;
      }
      case 'include':
        query.include = parseNameList(value, 'include', problems, (name) => (resource.relations.has(name) ? undefined : `"${name}" is not a relation of ${resource.name}${describeChoices([...resource.relations.keys()])}`));
        break;
      case 'search':
        // A field named search (from before the parameter was reserved) keeps its filter.
        if (resource.fields.has('search')) parseFilter(resource, key, value, limits, query.filters, problems);
        else search = parseSearch(resource, value, 'search', problems);
        break;
      default:
        parseFilter(resource, key, value, limits, query.filters, problems);
    }
  }

  if (search !== undefined) addSearch(query, search, raw.sort === undefined);
  for (const name of keyFields(resource)) if (!query.sort.some((k) => k.field === name)) query.sort.push({ field: name, direction: 'asc' });
  if (cursor !== undefined && query.relevance !== undefined) {
    problems.push({ parameter: 'after', detail: 'search results in order of relevance page with offset (the Link header rel="next" says where); give sort to page them with cursors' });
  } else if (cursor !== undefined) {
    if (query.offset !== undefined) problems.push({ parameter: 'after', detail: 'cannot be combined with offset; use one way of paging' });
    const after = decodeCursor(resource, cursor, query.sort);
    if (after.problem !== undefined) problems.push({ parameter: 'after', detail: `${after.problem}; follow the Link header rel="next"` });
    else query.after = after.values;
  }
  if (problems.length > 0) throw invalidQuery(problems);
  return query;
}

/** A search joins the filters; without a sort of its own, it orders the list by relevance. */
function addSearch(query: ListQuery, search: TextSearch, relevance: boolean): void {
  query.filters.push({ field: 'id', op: 'search', value: search });
  if (relevance) query.relevance = search;
}

/** The error listing `problems`; its detail names the first few (the list has up to 100). */
export function invalidQuery(problems: ErrorDetail[]): InvalidQueryError {
  const named = problems.slice(0, 5).map((p) => `${p.parameter ?? ''}: ${p.detail}`);
  if (problems.length > named.length) named.push(`and ${problems.length - named.length} more`);
  return new InvalidQueryError(named.join('; '), { errors: problems });
}

function parseSort(resource: ResourceModel, value: string, problems: ErrorDetail[]): SortKey[] {
  const keys: SortKey[] = [];
  for (const part of value.split(',')) {
    const term = part.trim();
    const direction = term.startsWith('-') ? 'desc' : 'asc';
    const name = term.replace(/^[-+]/, '');
    const field = resource.fields.get(name);
    if (field === undefined) {
      problems.push({ parameter: 'sort', detail: name === '' ? 'has an empty entry' : `"${name}" is not a field of ${resource.name}` });
    } else if (field.type === 'json' || field.type === 'file') {
      problems.push({ parameter: 'sort', detail: `"${name}" is a ${field.type} field and cannot be sorted` });
    } else if (keys.some((k) => k.field === name)) {
      problems.push({ parameter: 'sort', detail: `"${name}" is given twice` });
    } else {
      keys.push({ field: name, direction });
    }
  }
  return keys;
}

function parseNameList(value: string, parameter: string, problems: ErrorDetail[], check: (name: string) => string | undefined): string[] {
  const names: string[] = [];
  for (const part of value.split(',')) {
    const name = part.trim();
    const problem = name === '' ? 'has an empty entry' : check(name);
    if (problem !== undefined) problems.push({ parameter, detail: problem });
    else if (!names.includes(name)) names.push(name);
  }
  return names;
}

function parseFilter(resource: ResourceModel, key: string, value: string, limits: ListLimits, filters: FilterCondition[], problems: ErrorDetail[]): void {
  const match = FILTER_KEY.exec(key);
  const fieldName = match?.[1];
  const field = fieldName === undefined ? undefined : resource.fields.get(fieldName);
  if (match === null || field === undefined) {
    const allowed = `query parameters are ${[...RESERVED_QUERY_PARAMETERS, ...LATER_QUERY_PARAMETERS].join(', ')} and filters on the fields of ${resource.name}`;
    problems.push({ parameter: key, detail: `is not a known query parameter (${allowed})` });
    return;
  }
  const op = match[2] ?? 'eq';
  const allowed = OPERATORS_BY_TYPE[field.type];
  if (!allowed.includes(op as QueryOperator)) {
    const why = ALL_OPERATORS.has(op) ? `does not apply to ${field.type} fields` : 'is not a filter operator';
    problems.push({ parameter: key, detail: `operator "${op}" ${why}; ${field.name} takes ${allowed.join(', ')}` });
    return;
  }
  const operator = op as QueryOperator;
  if (operator === 'isNull') {
    if (value !== 'true' && value !== 'false') problems.push({ parameter: key, detail: 'must be true or false' });
    else filters.push({ field: field.name, op: operator, value: value === 'true' });
    return;
  }
  if (operator === 'in') {
    const parts = value.split(',');
    if (!withinInLimit(key, parts.length, limits, problems)) return;
    const values: unknown[] = [];
    for (const part of parts) {
      const parsed = parseFilterValue(field, part);
      if (parsed.problem !== undefined) {
        problems.push({ parameter: key, detail: `value "${part}" ${parsed.problem}` });
        return;
      }
      values.push(parsed.value);
    }
    filters.push({ field: field.name, op: operator, value: values });
    return;
  }
  const parsed = parseFilterValue(field, value);
  if (parsed.problem !== undefined) problems.push({ parameter: key, detail: `value "${truncate(value)}" ${parsed.problem}` });
  else filters.push({ field: field.name, op: operator, value: parsed.value });
}

/**
 * Whether one filter's `count` values are within {@link ListLimits.maxInValues}: every filter that
 * takes several values (`[in]`, GraphQL's `in`, json-server's repeated parameters, `:in` and `_where`
 * operands) is held to it here. When not, the problem joins `problems`, naming `parameter`.
 */
export function withinInLimit(parameter: string, count: number, limits: ListLimits, problems: ErrorDetail[]): boolean {
  if (count <= limits.maxInValues) return true;
  problems.push({ parameter, detail: `has ${count} values; at most ${limits.maxInValues} are allowed` });
  return false;
}

/** A list request in structured form, as GraphQL arguments give it (values already typed). */
export interface StructuredListInput {
  filters?: readonly { field: string; op: QueryOperator; value: unknown }[];
  sort?: readonly SortKey[];
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
  count?: boolean;
  /** A full-text search, as `search=` takes it. */
  search?: string | null;
}

/**
 * Checks a structured list request against the schema and the limits, the way
 * {@link parseListQuery} checks a query string: the same operators per type, the same value rules,
 * the same cursors. Relay's arguments: `first`/`after` page forward, `last`/`before` backward.
 * Problems name the argument (`first`, `filter.name.eq`, …). @throws InvalidQueryError
 */
export function structuredListQuery(resource: ResourceModel, input: StructuredListInput, limits: ListLimits): ListQuery {
  const problems: ErrorDetail[] = [];
  const query: ListQuery = { filters: [], sort: [], limit: limits.defaultLimit, include: [], count: input.count === true };
  for (const filter of input.filters ?? []) {
    const parameter = `filter.${filter.field}.${filter.op}`;
    const field = resource.fields.get(filter.field);
    if (field === undefined || !OPERATORS_BY_TYPE[field.type].includes(filter.op)) {
      problems.push({ parameter, detail: `is not a filter of ${resource.name}` });
      continue;
    }
    if (filter.op === 'isNull') {
      if (typeof filter.value !== 'boolean') problems.push({ parameter, detail: 'must be true or false' });
      else query.filters.push({ field: field.name, op: 'isNull', value: filter.value });
      continue;
    }
    const values = filter.op === 'in' ? (Array.isArray(filter.value) ? (filter.value as unknown[]) : [filter.value]) : [filter.value];
    if (filter.op === 'in' && !withinInLimit(parameter, values.length, limits, problems)) continue;
    const parsed: unknown[] = [];
    for (const value of values) {
      const result =
        typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
          ? parseFilterValue(field, String(value))
          : { problem: 'must be a single value' };
      if (result.problem !== undefined) problems.push({ parameter, detail: `value ${truncate(JSON.stringify(value))} ${result.problem}` });
      else parsed.push(result.value);
    }
    if (parsed.length === values.length) query.filters.push({ field: field.name, op: filter.op, value: filter.op === 'in' ? parsed : parsed[0] });
  }
  for (const key of input.sort ?? []) {
    const field = resource.fields.get(key.field);
    if (field === undefined || field.type === 'json' || field.type === 'file') problems.push({ parameter: 'sort', detail: `"${key.field}" cannot be sorted` });
    else if (query.sort.some((k) => k.field === key.field)) problems.push({ parameter: 'sort', detail: `"${key.field}" is given twice` });
    else query.sort.push({ field: key.field, direction: key.direction });
  }
  if (input.search !== undefined && input.search !== null) {
    const search = parseSearch(resource, input.search, 'search', problems);
    if (search !== undefined) addSearch(query, search, query.sort.length === 0);
  }
  for (const name of keyFields(resource)) if (!query.sort.some((k) => k.field === name)) query.sort.push({ field: name, direction: 'asc' });
  const { first, last } = input;
  if (first !== undefined && first !== null && last !== undefined && last !== null) {
    problems.push({ parameter: 'last', detail: 'cannot be combined with first; page forward with first/after or backward with last/before' });
  }
  for (const [name, n] of [['first', first], ['last', last]] as const) {
    if (n === undefined || n === null) continue;
    if (!Number.isSafeInteger(n) || n < 0 || n > limits.maxLimit) problems.push({ parameter: name, detail: `must be an integer from 0 to ${limits.maxLimit}` });
    else query.limit = n;
  }
  if (last !== undefined && last !== null) query.backward = true;
  if (query.backward === true && query.relevance !== undefined) {
    problems.push({ parameter: 'last', detail: 'search results in order of relevance are read from the most relevant; use first, or give sort' });
  }
  for (const name of ['after', 'before'] as const) {
    const cursor = input[name];
    if (cursor === undefined || cursor === null) continue;
    if (query.relevance !== undefined) {
      problems.push({ parameter: name, detail: 'search results in order of relevance have no cursors; give sort to page them with cursors' });
      continue;
    }
    const position = decodeCursor(resource, cursor, query.sort);
    if (position.problem !== undefined) problems.push({ parameter: name, detail: position.problem });
    else query[name] = position.values;
  }
  if (problems.length > 0) throw invalidQuery(problems);
  return query;
}

function parseNonNegativeInteger(text: string): number | undefined {
  if (!/^\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

function describeChoices(names: string[]): string {
  return names.length === 0 ? ' (it has none)' : ` (it has ${names.join(', ')})`;
}
