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
 * Operators no query string names directly: `none` matches no row (access rules, filters that can
 * match nothing); `textMatch` is a case-insensitive text test ({@link TextMatch}); `any` matches a
 * row that one of its conditions matches (json-server's repeated parameters and `q`), `all` a row
 * all of them match (json-server 1.x's `_where`).
 */
export type FilterOperator = QueryOperator | 'none' | 'textMatch' | 'any' | 'all' | 'search';

/** One filter, already checked against the schema; values are decoded JS values of the field's type. */
export interface FilterCondition {
  /** The field tested; ignored by `none`, `any` and `all`. */
  field: string;
  op: FilterOperator;
  /**
   * A value; an array for `in`; a boolean for `isNull`; a {@link TextMatch} for `textMatch`;
   * FilterConditions for `any` and `all`; a {@link TextSearch} for `search` (over the resource's
   * full-text index; `field` is ignored); ignored by `none`.
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
  /** Columns to return; all when absent. Always includes what sorting and cursors need. */
  columns?: readonly string[];
}

/** The same keys, each in the opposite direction. */
export function reverseSort(sort: readonly SortKey[]): SortKey[] {
  return sort.map((k) => ({ field: k.field, direction: k.direction === 'asc' ? 'desc' : 'asc' }));
}
