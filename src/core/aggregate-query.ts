import { InvalidQueryError, type ErrorDetail } from '../errors.js';
import { withIndefiniteArticle } from '../schema/indefinite-article.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import { AGGREGATE_FUNCTIONS, DATE_UNITS, type AggregateFunction, type AggregateRow, type AggregateSortKey, type DateUnit, type GroupKey, type Measure } from '../store/aggregate-spec.js';
import type { FilterCondition } from '../store/list-spec.js';
import type { FilterResources } from './filter-expression/filter-parser.js';
import { invalidQuery, parseListQuery, type ListLimits, type RawQuery } from './list-query.js';

/** Most group keys and most aggregate functions (over all fields) one aggregate read may ask for. */
export const MAX_GROUP_KEYS = 8;
export const MAX_MEASURES = 64;

/** An aggregate request, checked against the schema (REST's query string or GraphQL's arguments). */
export interface AggregateQuery {
  /** The same conditions as a list's (ListQuery.filters), ANDed. */
  filters: FilterCondition[];
  groupBy: GroupKey[];
  /** Whether answers show each group's row count (GraphQL always has it). */
  count: boolean;
  measures: Measure[];
  sort: AggregateSortKey[];
  /** Most groups answered. */
  limit: number;
  /** Whether more than `limit` groups is an error (no `limit` was given) rather than a cut. */
  strict: boolean;
}

/** One group as clients see it: its group values by group term, and what was asked of it. */
export interface AggregateGroup {
  group: Record<string, unknown>;
  count?: number;
  sum?: Record<string, unknown>;
  avg?: Record<string, unknown>;
  min?: Record<string, unknown>;
  max?: Record<string, unknown>;
  countDistinct?: Record<string, unknown>;
}

const GROUPABLE_TYPES: ReadonlySet<FieldModel['type']> = new Set(['enum', 'string', 'boolean', 'integer', 'date']);
const ORDERED_TYPES: ReadonlySet<FieldModel['type']> = new Set(['integer', 'number', 'date', 'datetime', 'string']);

/** Whether `fn` applies to `field`: sums and averages of numbers (not ids), extremes of ordered values, distinct counts of all but json. */
export function aggregates(fn: AggregateFunction, field: FieldModel): boolean {
  switch (fn) {
    case 'sum':
    case 'avg':
      return (field.type === 'integer' || field.type === 'number') && field.name !== 'id' && field.references === undefined;
    case 'min':
    case 'max':
      return ORDERED_TYPES.has(field.type);
    case 'countDistinct':
      return field.type !== 'json' && field.type !== 'file';
  }
}

/** Whether rows may be grouped by `field` (with `unit`, truncated: only dates and datetimes). */
export function groupable(field: FieldModel, unit?: DateUnit): boolean {
  if (unit !== undefined) return field.type === 'date' || field.type === 'datetime';
  return GROUPABLE_TYPES.has(field.type);
}

/** The name of a group key in answers and in `sort`: `status`, `createdAt:month`. */
export function groupTerm(key: GroupKey): string {
  return key.unit === undefined ? key.field : `${key.field}:${key.unit}`;
}

/** The query parameters of an aggregate besides the filters. */
export const AGGREGATE_PARAMETERS: readonly string[] = ['groupBy', 'count', ...AGGREGATE_FUNCTIONS, 'sort', 'limit'];
/** List parameters that mean nothing to an aggregate. */
const LIST_ONLY = new Set(['offset', 'after', 'fields', 'include']);

/** How the parser finds a field from the name a client used (a version's name); the resource's own names by default. */
export type FieldLookup = (name: string) => FieldModel | undefined;

/**
 * Parses `GET /<resource>/aggregate` query parameters: `groupBy`, `count`, `sum`, `avg`, `min`,
 * `max`, `countDistinct`, `sort`, `limit`, and filters, which {@link parseListQuery} reads as a
 * list's (so they mean the same; `filter=` expressions follow relations among `resources`). Every problem is reported at once, each naming its parameter
 * and what is allowed. Without any function, groups are counted. @throws InvalidQueryError
 */
export function parseAggregateQuery(
  resource: ResourceModel,
  raw: RawQuery,
  limits: ListLimits,
  lookup: FieldLookup = (name) => resource.fields.get(name),
  resources?: FilterResources,
): AggregateQuery {
  const problems: ErrorDetail[] = [];
  const query: AggregateQuery = { filters: [], groupBy: [], count: false, measures: [], sort: [], limit: limits.maxGroups, strict: true };
  const filterEntries: [string, string | string[]][] = [];
  let sortText: string | undefined;
  let lastFunction = 'sum';
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (!AGGREGATE_PARAMETERS.includes(key)) {
      if (LIST_ONLY.has(key)) problems.push({ parameter: key, detail: `is a list parameter; an aggregate takes ${AGGREGATE_PARAMETERS.join(', ')} and filters` });
      else filterEntries.push([key, value]);
      continue;
    }
    if (Array.isArray(value)) {
      problems.push({ parameter: key, detail: 'is given more than once; give it once, with comma-separated values for several' });
      continue;
    }
    if (key === 'groupBy') query.groupBy = parseGroupBy(resource, value, lookup, problems);
    else if (key === 'count') {
      if (value !== 'true' && value !== 'false') problems.push({ parameter: 'count', detail: 'must be true or false' });
      else query.count = value === 'true';
    } else if (key === 'sort') sortText = value;
    else if (key === 'limit') {
      const n = /^\d{1,15}$/.test(value) ? Number(value) : 0;
      if (n < 1 || n > limits.maxGroups) problems.push({ parameter: 'limit', detail: `must be an integer from 1 to ${limits.maxGroups}` });
      else [query.limit, query.strict] = [n, false];
    } else {
      lastFunction = key;
      query.measures.push(...parseMeasures(resource, key as AggregateFunction, value, lookup, problems));
    }
  }
  if (query.measures.length > MAX_MEASURES) problems.push({ parameter: lastFunction, detail: `makes ${query.measures.length} aggregates in all; at most ${MAX_MEASURES} are allowed` });
  if (raw.count === undefined && query.measures.length === 0) query.count = true;
  if (sortText !== undefined) query.sort = parseAggregateSort(resource, sortText, query.groupBy, lookup, problems);
  try {
    // fromEntries makes own properties of every key, __proto__ too (an assignment would not).
    query.filters = parseListQuery(resource, Object.fromEntries(filterEntries), limits, [], resources).filters;
  } catch (error) {
    if (!(error instanceof InvalidQueryError)) throw error;
    problems.push(...(error.errors ?? [{ detail: error.message }]));
  }
  if (problems.length > 0) throw invalidQuery(problems);
  return query;
}

function parseGroupBy(resource: ResourceModel, value: string, lookup: FieldLookup, problems: ErrorDetail[]): GroupKey[] {
  const terms = value.split(',');
  if (terms.length > MAX_GROUP_KEYS) {
    problems.push({ parameter: 'groupBy', detail: `has ${terms.length} entries; at most ${MAX_GROUP_KEYS} are allowed` });
    return [];
  }
  const keys: GroupKey[] = [];
  for (const part of terms) {
    const term = part.trim();
    const [name = '', unitText, extra] = term.split(':');
    const field = lookup(name);
    const unit = unitText as DateUnit | undefined;
    const allowed = `groupBy takes fields of type enum, string, boolean, integer or date, or a date or datetime truncated as field:day, field:month or field:year; ${resource.name} has ${groupChoices(resource).join(', ') || 'none'}`;
    if (field === undefined) problems.push({ parameter: 'groupBy', detail: term === '' ? 'has an empty entry' : `"${short(name)}" is not a field of ${resource.name}; ${allowed}` });
    else if (extra !== undefined || (unit !== undefined && !DATE_UNITS.includes(unit))) problems.push({ parameter: 'groupBy', detail: `"${short(term)}": a date can be truncated to day, month or year` });
    else if (!groupable(field, unit)) problems.push({ parameter: 'groupBy', detail: `"${short(term)}" cannot group rows (${field.type}); ${allowed}` });
    else if (keys.some((k) => k.field === field.name)) problems.push({ parameter: 'groupBy', detail: `"${name}" is given twice` });
    else keys.push(unit === undefined ? { field: field.name } : { field: field.name, unit });
  }
  return keys;
}

function parseMeasures(resource: ResourceModel, fn: AggregateFunction, value: string, lookup: FieldLookup, problems: ErrorDetail[]): Measure[] {
  const terms = value.split(',');
  if (terms.length > MAX_MEASURES) {
    problems.push({ parameter: fn, detail: `has ${terms.length} entries; at most ${MAX_MEASURES} are allowed` });
    return [];
  }
  const measures: Measure[] = [];
  for (const part of terms) {
    const name = part.trim();
    const field = lookup(name);
    const problem = measureProblem(resource, fn, name, field);
    if (problem !== undefined) problems.push({ parameter: fn, detail: problem });
    else if (field !== undefined && measures.some((m) => m.field === field.name)) problems.push({ parameter: fn, detail: `"${name}" is given twice` });
    else if (field !== undefined) measures.push({ fn, field: field.name });
  }
  return measures;
}

function measureProblem(resource: ResourceModel, fn: AggregateFunction, name: string, field: FieldModel | undefined): string | undefined {
  if (field !== undefined && aggregates(fn, field)) return undefined;
  const choices = measureChoices(resource, fn);
  const allowed = `${fn} takes ${FUNCTION_TYPES[fn]}; ${resource.name} has ${choices.length === 0 ? 'none' : choices.join(', ')}`;
  if (name === '') return `has an empty entry; ${allowed}`;
  return field === undefined ? `"${short(name)}" is not a field of ${resource.name}; ${allowed}` : `"${name}" is ${withIndefiniteArticle(field.type)} field; ${allowed}`;
}

const FUNCTION_TYPES: Record<AggregateFunction, string> = {
  sum: 'number and integer fields (not ids or references)',
  avg: 'number and integer fields (not ids or references)',
  min: 'number, integer, date, datetime and string fields',
  max: 'number, integer, date, datetime and string fields',
  countDistinct: 'any field but json ones',
};

/** Terms of `sort`: a group term, `count`, or `<function>.<field>`; `-` in front for descending. */
function parseAggregateSort(resource: ResourceModel, value: string, groupBy: readonly GroupKey[], lookup: FieldLookup, problems: ErrorDetail[]): AggregateSortKey[] {
  const keys: AggregateSortKey[] = [];
  const terms = value.split(',');
  if (terms.length > MAX_GROUP_KEYS + MAX_MEASURES) {
    problems.push({ parameter: 'sort', detail: `has ${terms.length} entries; at most ${MAX_GROUP_KEYS + MAX_MEASURES} are allowed` });
    return keys;
  }
  const seen = new Set<string>();
  for (const part of terms) {
    const text = part.trim();
    const direction = text.startsWith('-') ? 'desc' : 'asc';
    const term = text.replace(/^[-+]/, '');
    if (seen.has(term)) {
      problems.push({ parameter: 'sort', detail: `"${short(term)}" is given twice` });
      continue;
    }
    seen.add(term);
    if (term === 'count') {
      keys.push({ target: { kind: 'count' }, direction });
      continue;
    }
    const [name = '', unit] = term.split(':');
    const named = lookup(name);
    const group = named === undefined ? -1 : groupBy.findIndex((k) => k.field === named.name && k.unit === unit);
    if (group >= 0) {
      keys.push({ target: { kind: 'group', index: group }, direction });
      continue;
    }
    const dot = term.indexOf('.');
    const fn = term.slice(0, dot) as AggregateFunction;
    if (dot > 0 && AGGREGATE_FUNCTIONS.includes(fn)) {
      const fieldName = term.slice(dot + 1);
      const field = lookup(fieldName);
      const problem = measureProblem(resource, fn, fieldName, field);
      if (problem !== undefined || field === undefined) problems.push({ parameter: 'sort', detail: `"${short(term)}": ${problem ?? ''}` });
      else keys.push({ target: { kind: 'measure', measure: { fn, field: field.name } }, direction });
      continue;
    }
    const groups = groupBy.map(groupTerm);
    problems.push({
      parameter: 'sort',
      detail: `"${short(term)}" is not something to sort groups by; sort takes count, <function>.<field> (e.g. -sum.total) and the groupBy terms${groups.length === 0 ? ' (there are none)' : ` (${groups.join(', ')})`}`,
    });
  }
  return keys;
}

/** The fields `fn` applies to, by name. */
export function measureChoices(resource: ResourceModel, fn: AggregateFunction): string[] {
  return [...resource.fields.values()].filter((f) => aggregates(fn, f)).map((f) => f.name);
}

function groupChoices(resource: ResourceModel): string[] {
  return [...resource.fields.values()].filter((f) => groupable(f) || groupable(f, 'day')).map((f) => (groupable(f) ? f.name : `${f.name}:month`));
}

/** Groups as the store read them → what clients see, keyed by group term and field name. */
export function aggregateGroups(query: AggregateQuery, rows: readonly AggregateRow[]): AggregateGroup[] {
  const terms = query.groupBy.map(groupTerm);
  return rows.map((row) => {
    const out: AggregateGroup = { group: {} };
    terms.forEach((term, i) => (out.group[term] = row.group[i] ?? null));
    if (query.count) out.count = row.count;
    query.measures.forEach((m, i) => ((out[m.fn] ??= {})[m.field] = row.values[i] ?? null));
    return out;
  });
}

/** The error of an aggregate with more groups than `limit` and no `limit` given. */
export function tooManyGroups(max: number): InvalidQueryError {
  return invalidQuery([
    {
      parameter: 'groupBy',
      detail: `makes more than ${max} groups, the most one aggregate answers (RESTGRAPH_MAX_AGGREGATE_GROUPS); filter the rows, group by less, or take the first groups with limit (and sort)`,
    },
  ]);
}

function short(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
