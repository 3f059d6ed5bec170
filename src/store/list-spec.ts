/**
 * What a list or read asks of the record store, as the core hands it over: filters already checked
 * against the schema, a total sort order, keyset positions. Shared by the store's statements, its
 * cache keys and the core's list operations.
 */

/** A row as clients see it: decoded values, keys in the resource's canonical order. */
export type StoredRecord = Record<string, unknown>;

/** The operators clients may use in filters. */
export type QueryOperator = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in' | 'contains' | 'startsWith' | 'isNull';
/**
 * Operators no query string parameter names directly (filter expressions and json-server's
 * parameters reach some of them):
 * - `none` matches no row (access rules, filters that can match nothing);
 * - `textMatch` is a case-insensitive text test, ASCII letters only on SQLite ({@link TextMatch});
 * - `containsIgnoringCase` (`~` in filter expressions) matches a non-null text field holding the
 *   value (a string) anywhere, case folded for all of Unicode the same on every database
 *   (store/fold-case.ts); the value is matched as text (no wildcards);
 * - `any` matches a row that one of its conditions matches (`or`; json-server's repeated
 *   parameters and `q`), `all` a row all of them match (`and`; json-server 1.x's `_where`);
 * - `not` matches exactly the rows its one condition (the value) does not match: a comparison
 *   with an empty (null) field is false, never unknown, so a condition and its `not` partition the rows;
 * - `related`: `field` names a belongsTo relation; matches a row whose reference is set and whose
 *   referenced row, visible to the reader, matches the condition in `value` (a condition on the
 *   relation's target resource);
 * - `some` / `noneOf`: `field` names a hasMany relation; matches a row of which at least one / no
 *   related row (among those visible to the reader) matches the condition in `value`.
 */
export type FilterOperator = QueryOperator | 'none' | 'textMatch' | 'containsIgnoringCase' | 'any' | 'all' | 'not' | 'related' | 'some' | 'noneOf' | 'search';

/**
 * One filter, already checked against the schema; values are decoded JS values of the field's type.
 * A tree: `any`, `all`, `not` combine conditions of the same resource; `related`, `some` and
 * `noneOf` hold a condition of a related resource. Plain JSON (list cache keys serialise it).
 * Semantics of the own-field operators: `eq`, `lt`, `lte`, `gt`, `gte`, `in`, `contains`,
 * `startsWith`, `containsIgnoringCase`, `textMatch` are false on a null field; `ne` is true on it;
 * `eq`/`ne` with the value null mean is null / is not null.
 */
export interface FilterCondition {
  /** The field tested; the relation followed by `related`, `some`, `noneOf`; ignored by `none`, `any`, `all`, `not`. */
  field: string;
  op: FilterOperator;
  /**
   * A value; an array for `in`; a boolean for `isNull`; a {@link TextMatch} for `textMatch`; a
   * string for `containsIgnoringCase`; FilterConditions for `any` and `all`; one FilterCondition
   * for `not`, `related`, `some` and `noneOf`; a {@link TextSearch} for `search` (over the
   * resource's full-text index; `field` is ignored; only at the top of a list's filters, never
   * inside a relation path); ignored by `none`.
   */
  value: unknown;
}

/** A case-insensitive test of a text field: the text anywhere in it, at its start or at its end. */
export interface TextMatch {
  text: string;
  at: 'anywhere' | 'start' | 'end';
}

/**
 * A full-text search, already split into terms: a row matches when every term does. A term is one
 * word or a phrase (its words in this order); the last may match as a prefix. Words hold only
 * letters, digits and marks: the dialect quotes them into its own match syntax.
 */
export interface TextSearch {
  terms: readonly SearchTerm[];
}

export interface SearchTerm {
  words: readonly string[];
  /** Its last word matches the start of a word. */
  prefix: boolean;
}

export interface SortKey {
  field: string;
  direction: 'asc' | 'desc';
}

/**
 * A checked list query. `sort` always ends with `id` so the order is total and keyset paging is
 * exact. Ascending puts nulls first and descending puts them last, on every database.
 */
export interface ListSpec {
  filters: readonly FilterCondition[];
  sort: readonly SortKey[];
  limit: number;
  offset?: number;
  /** Keyset position: raw values of the sort keys of the last row already seen. */
  after?: readonly unknown[];
  /** Keyset bound on the other side: only rows strictly before this position in `sort` order. */
  before?: readonly unknown[];
  /**
   * Most relevant first for this search (which is also among the filters), before `sort`, which
   * breaks ties. No keyset bounds go with it.
   */
  relevance?: TextSearch;
  /**
   * A rule hides some of the table's rows from this reader (an owner rule): the relevance order
   * may not depend on them (see SqlDialectRules.searchRanked).
   */
  restricted?: boolean;
  /** Columns to return; all when absent. Always includes what sorting and cursors need. */
  columns?: readonly string[];
}

/** The same keys, each in the opposite direction. */
export function reverseSort(sort: readonly SortKey[]): SortKey[] {
  return sort.map((k) => ({ field: k.field, direction: k.direction === 'asc' ? 'desc' : 'asc' }));
}
