/**
 * What a list or read asks of the record store, as the core hands it over: filters already checked
 * against the schema, a total sort order, keyset positions. Shared by the store's statements, its
 * cache keys and the core's list operations.
 */

/** A row as clients see it: decoded values, keys in the resource's canonical order. */
export type StoredRecord = Record<string, unknown>;

/** The operators clients may use in filters. */
export type QueryOperator = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in' | 'contains' | 'startsWith' | 'isNull';
/** `none` matches no row: internal (access rules), never parsed from a query. */
export type FilterOperator = QueryOperator | 'none';

/** One filter, already checked against the schema; values are decoded JS values of the field's type. */
export interface FilterCondition {
  field: string;
  op: FilterOperator;
  /** A value; an array for `in`; a boolean for `isNull`; ignored by `none` (matches no row: internal, never parsed from a query). */
  value: unknown;
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
  /** Columns to return; all when absent. Always includes what sorting and cursors need. */
  columns?: readonly string[];
}

/** The same keys, each in the opposite direction. */
export function reverseSort(sort: readonly SortKey[]): SortKey[] {
  return sort.map((k) => ({ field: k.field, direction: k.direction === 'asc' ? 'desc' : 'asc' }));
}
