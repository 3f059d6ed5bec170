import { InvalidQueryError, type ErrorDetail } from '../errors.js';
import { invalidQuery, parseListQuery, withinInLimit, type ListLimits, type ListQuery, type RawQuery } from '../core/list-query.js';
import { resourceNamed, type RelationModel, type SchemaModel } from '../schema/schema-model.js';
import type { FilterCondition } from '../store/list-spec.js';
import { anyOf, conditionsOf, NONE } from './json-server-conditions.js';
import { parseWhere } from './json-server-where.js';
import { quoted, unknownParameter, type VersionTranslator } from './version-translation.js';

/**
 * json-server's list query language (0.17 and 1.x), translated into restgraph's {@link ListQuery}.
 * Behaviour follows json-server's own code (0.17: lib/server/router/plural.js; 1.x: service.ts,
 * parse-where.ts); where the versions differ, 0.17's. docs/json-server.md lists every parameter
 * and every deliberate difference.
 *
 * Names are the API version's: every field and relation a parameter names is looked up through the
 * version's {@link VersionTranslator}, as restgraph's own parameters are (which it translates before
 * {@link parseListQuery} reads them), and a name storage has but the version does not is refused
 * in the same words.
 */

/** How a json-server list is paged, and so how it is answered. */
export type JsonServerPaging =
  /** No json-server paging: up to `limit` rows, the restgraph way (a `Link` rel="next" beyond). */
  | { kind: 'none' }
  /** `_start`/`_end`/`_limit` (0.17): Array.prototype.slice over the whole list, with X-Total-Count. */
  | { kind: 'slice'; start: number; end: number }
  /** `_page` with `_limit` (0.17): a page, with X-Total-Count and a Link header. */
  | { kind: 'page'; page: number; perPage: number }
  /** `_page` with `_per_page` (1.x): a page in an envelope `{first, prev, next, last, pages, items, data}`. */
  | { kind: 'envelope'; page: number; perPage: number };

export interface JsonServerList {
  query: ListQuery;
  paging: JsonServerPaging;
}

/** json-server's own parameters: never filters. `_` (jQuery), `callback` (JSONP) and `_delay` are ignored as 0.17 does. */
const PAGING = ['_start', '_end', '_limit', '_page', '_per_page'] as const;
const OWN = new Set(['_', 'callback', '_delay', '_dependent', '_embed', '_expand', '_sort', '_order', 'q', '_where']);
const NATIVE = new Set(['sort', 'limit', 'offset', 'after', 'count', 'fields', 'include']);
const NATIVE_FILTER = /^[A-Za-z][A-Za-z0-9]*\[[A-Za-z]*\]$/;
/** 0.17's operator suffixes (and 1.x's `_gt`/`_lt`, which 1.x reads in the same style). */
const SUFFIX = /^(.+)_(gte|lte|gt|lt|ne|like)$/;
/** 1.x's `field:op` operators. */
const COLON_OPERATORS = new Set(['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'startsWith', 'endsWith']);

/**
 * Parses a list request in json-server's language, in the names of `tr`'s version, with restgraph's
 * own parameters (`sort`, `limit`, `after`, `fields`, `include`, `field[op]` filters, …) still
 * accepted beside it.
 * @throws InvalidQueryError for what cannot be served (a paging mix, a deep path into a json field,
 *   a name of another version)
 */
export function parseJsonServerList(schema: SchemaModel, tr: VersionTranslator, raw: RawQuery, limits: ListLimits): JsonServerList {
  const resource = tr.view.resource;
  const problems: ErrorDetail[] = [];
  const own: RawQuery = {};
  const filters: FilterCondition[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined || OWN.has(key) || (PAGING as readonly string[]).includes(key)) continue;
    // restgraph's search, unless a field takes the name (then a filter on it, as json-server reads it).
    if (NATIVE.has(key) || NATIVE_FILTER.test(key) || (key === 'search' && !resource.fields.has('search'))) own[key] = value;
    else filters.push(...filterOf(tr, key, values(value), limits, problems));
  }
  const native = translated(tr, own, problems);
  const whereText = first(raw._where);
  const where = whereText === undefined ? undefined : parseWhere(tr, whereText, limits, problems);
  // 1.x: a _where that is a JSON object takes the place of the other filter parameters.
  if (where !== undefined) filters.splice(0, filters.length, where);
  const q = first(raw.q);
  if (q !== undefined && q !== '') filters.push(searchOf(tr, q));
  const sort = sortOf(tr, first(raw._sort), first(raw._order), problems);
  if (sort !== undefined) {
    if (native.sort !== undefined) problems.push({ parameter: '_sort', detail: 'cannot be combined with sort; give one of them' });
    else if (sort !== '') native.sort = sort;
  }
  const paging = pagingOf(raw, limits);
  if (paging.kind !== 'none') {
    for (const name of ['limit', 'offset', 'after'] as const) {
      if (native[name] !== undefined) problems.push({ parameter: name, detail: `cannot be combined with json-server's paging (${PAGING.join(', ')}); use one way of paging` });
    }
  } else if (native.limit === undefined) {
    // json-server answers the whole list: as much of it as one page may hold.
    native.limit = String(limits.maxLimit);
  }
  const include = embedded(schema, tr, raw, problems);
  if (problems.length > 0) throw invalidQuery(problems);
  const query = parseListQuery(resource, native, limits);
  query.filters.push(...filters);
  for (const name of include) if (!query.include.includes(name)) query.include = [...query.include, name];
  return { query, paging };
}

/**
 * The relations `_embed`/`_expand` (0.17) of a single-object read name, with `include` and `fields`;
 * its other parameters are ignored, as json-server ignores them.
 */
export function parseJsonServerItem(schema: SchemaModel, tr: VersionTranslator, raw: RawQuery, limits: ListLimits): { include: readonly string[]; fields?: readonly string[] } {
  const problems: ErrorDetail[] = [];
  const own: RawQuery = {};
  if (raw.include !== undefined) own.include = raw.include;
  if (raw.fields !== undefined) own.fields = raw.fields;
  const native = translated(tr, own, problems);
  const more = embedded(schema, tr, raw, problems);
  if (problems.length > 0) throw invalidQuery(problems);
  const parsed = parseListQuery(tr.view.resource, native, limits);
  const include = [...parsed.include];
  for (const name of more) if (!include.includes(name)) include.push(name);
  return parsed.fields === undefined ? { include } : { include, fields: parsed.fields };
}

/** restgraph's own parameters in storage names, as the version translates them; what it refuses joins `problems`. */
function translated(tr: VersionTranslator, own: RawQuery, problems: ErrorDetail[]): RawQuery {
  try {
    return tr.query(own);
  } catch (error) {
    if (!(error instanceof InvalidQueryError)) throw error;
    problems.push(...(error.errors ?? []));
    return {};
  }
}

/** The relations `_embed` and `_expand` name (see {@link relationsOf}). */
function embedded(schema: SchemaModel, tr: VersionTranslator, raw: RawQuery, problems: ErrorDetail[]): string[] {
  return [...relationsOf(schema, tr, values(raw._embed), 'embed', problems), ...relationsOf(schema, tr, values(raw._expand), 'expand', problems)];
}

function values(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** A parameter given more than once counts once, as its first value (0.17 reads `q` so). */
function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * One filter parameter: `field=v` (repeated: any of the values), 0.17's `field_gte`, `_lte`, `_ne`,
 * `_like`, 1.x's `field:op`. A field the resource does not have: a plain `field=v` is ignored (0.17
 * drops parameters no row has), one with an operator matches no row (as both versions answer).
 */
function filterOf(tr: VersionTranslator, key: string, given: string[], limits: ListLimits, problems: ErrorDetail[]): FilterCondition[] {
  let path = key;
  let op = 'eq';
  const colon = key.lastIndexOf(':');
  if (colon !== -1) {
    path = key.slice(0, colon);
    op = key.slice(colon + 1) || 'eq';
    // 1.x skips a parameter whose operator it does not know.
    if (!COLON_OPERATORS.has(op)) return [];
  } else if (tr.field(key) === undefined) {
    const match = SUFFIX.exec(key);
    if (match !== null) [, path = key, op = 'eq'] = match;
  }
  const topName = path.split('.')[0] ?? '';
  const refused = tr.notInVersion(topName);
  if (refused !== undefined) {
    problems.push({ parameter: key, detail: unknownParameter(refused) });
    return [];
  }
  const field = tr.field(path);
  if (field === undefined) {
    const top = tr.field(topName);
    if (top?.type === 'json' || top?.type === 'file') {
      problems.push({ parameter: key, detail: `is a path into the json field ${top.name}: filters on parts of json values are not supported` });
      return [];
    }
    return op === 'eq' ? [] : [NONE];
  }
  if (field.type === 'json' || field.type === 'file') {
    problems.push({ parameter: key, detail: `${field.name} is a ${field.type} field: ${field.type} fields cannot be filtered` });
    return [];
  }
  const texts = op === 'in' ? given.flatMap((v) => v.split(',')) : given;
  if (!withinInLimit(key, texts.length, limits, problems)) return [];
  return conditionsOf(field, op, texts);
}

/** `q`: a case-insensitive substring of any text field (string or enum) the version shows, as one SQL condition. */
function searchOf(tr: VersionTranslator, q: string): FilterCondition {
  const branches: FilterCondition[] = [];
  for (const field of tr.fields) {
    if (field.type === 'string' || field.type === 'enum') branches.push({ field: field.name, op: 'textMatch', value: { text: q, at: 'anywhere' } });
  }
  return anyOf(branches);
}

/**
 * `_sort=a,b&_order=desc,asc` (0.17) and `_sort=-a,b` (1.x) as restgraph's `sort`, in storage names.
 * Fields the resource does not have (or cannot sort: json) are passed over, as sorting by a missing
 * value leaves json-server's order as it was; a field of another version is refused.
 */
function sortOf(tr: VersionTranslator, sort: string | undefined, order: string | undefined, problems: ErrorDetail[]): string | undefined {
  if (sort === undefined) return undefined;
  const orders = (order ?? '').split(',').map((o) => o.trim().toLowerCase());
  const keys: string[] = [];
  sort.split(',').forEach((term, i) => {
    const descending = term.startsWith('-') || orders[i] === 'desc';
    const name = term.trim().replace(/^[-+]/, '');
    const refused = tr.notInVersion(name);
    if (refused !== undefined) problems.push({ parameter: '_sort', detail: quoted(refused) });
    const field = tr.field(name);
    if (field === undefined || field.type === 'json' || field.type === 'file' || keys.some((k) => k.replace(/^-/, '') === field.name)) return;
    keys.push(descending ? `-${field.name}` : field.name);
  });
  return keys.join(',');
}

/** The largest page number, start or end taken as it is. */
const MAX_POSITION = 2 ** 31;

/** Which json-server paging a request asks for, its numbers read as json-server reads them (parseInt). */
function pagingOf(raw: RawQuery, limits: ListLimits): JsonServerPaging {
  const [start, end, limit, page, perPage] = PAGING.map((name) => first(raw[name]));
  // Positions past any table's rows (2^31) are read as 2^31: the answer is the same (no rows), and
  // an offset of 1e21 would reach the database as a number it cannot take.
  const int = (text: string | undefined): number => {
    const n = Number.parseInt(text ?? '', 10);
    return Number.isNaN(n) ? n : Math.max(-MAX_POSITION, Math.min(n, MAX_POSITION));
  };
  // A page larger than restgraph's largest page is cut to it (X-Total-Count still tells the whole).
  const capped = (n: number): number => Math.min(n, limits.maxLimit);
  if (page !== undefined && page !== '') {
    const n = int(page);
    const pageNumber = n >= 1 ? n : 1;
    if (perPage !== undefined) {
      const size = int(perPage);
      // 1.x: 10 when absent or not a number; at least 1.
      return { kind: 'envelope', page: pageNumber, perPage: capped(Number.isNaN(size) ? 10 : Math.max(size, 1)) };
    }
    const size = int(limit);
    // 0.17: `parseInt(_limit) || 10`; a negative size (which 0.17 slices oddly) counts as 10 too.
    return { kind: 'page', page: pageNumber, perPage: capped(size > 0 ? size : 10) };
  }
  if (end !== undefined && end !== '') return { kind: 'slice', start: int(start) || 0, end: int(end) };
  if (limit !== undefined && limit !== '') {
    const from = int(start) || 0;
    return { kind: 'slice', start: from, end: from + int(limit) };
  }
  return { kind: 'none' };
}

/**
 * The relations `_embed` and `_expand` name, among those the version shows. `_embed=comments`: the
 * hasMany relation of that name, or to that resource; 1.x's `_embed=post` and 0.17's `_expand=post`:
 * the belongsTo relation of that name, or to the resource whose singular it is. Names of no relation
 * are ignored, as json-server ignores them; a relation of another version is refused.
 */
function relationsOf(schema: SchemaModel, tr: VersionTranslator, names: string[], kind: 'embed' | 'expand', problems: ErrorDetail[]): string[] {
  const found: string[] = [];
  for (const name of names) {
    const refused = tr.notInVersion(name);
    if (refused !== undefined) {
      problems.push({ parameter: `_${kind}`, detail: quoted(refused) });
      continue;
    }
    const relation = (kind === 'embed' ? findRelation(schema, tr.relations, name, 'hasMany') : undefined) ?? findRelation(schema, tr.relations, name, 'belongsTo');
    if (relation !== undefined && !found.includes(relation.name)) found.push(relation.name);
  }
  return found;
}

function findRelation(schema: SchemaModel, relations: ReadonlyMap<string, RelationModel>, name: string, kind: RelationModel['kind']): RelationModel | undefined {
  const named = relations.get(name);
  if (named?.kind === kind) return named;
  for (const relation of relations.values()) {
    if (relation.kind !== kind) continue;
    const target = resourceNamed(schema, relation.target);
    if ((kind === 'hasMany' ? target.name : target.singular) === name) return relation;
  }
  return undefined;
}
