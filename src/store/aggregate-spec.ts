/**
 * What an aggregate read asks of the record store, as the core hands it over: filters checked as a
 * list's are ({@link ListSpec}'s `filters`, the same tree), group keys, aggregate functions and the
 * order of the groups, all already checked against the schema.
 */
import type { FilterCondition } from './list-spec.js';

/** The aggregate functions over one field (besides the row count of each group). */
export type AggregateFunction = 'sum' | 'avg' | 'min' | 'max' | 'countDistinct';
export const AGGREGATE_FUNCTIONS: readonly AggregateFunction[] = ['sum', 'avg', 'min', 'max', 'countDistinct'];

/** A date or datetime truncated to its day, month or year (in UTC), shown as an ISO date. */
export type DateUnit = 'day' | 'month' | 'year';
export const DATE_UNITS: readonly DateUnit[] = ['day', 'month', 'year'];

/** One value rows are grouped by: a field, or a date/datetime field truncated to `unit`. */
export interface GroupKey {
  field: string;
  unit?: DateUnit;
}

/** One aggregate function over one field. */
export interface Measure {
  fn: AggregateFunction;
  field: string;
}

/** What groups are sorted by: one of the group keys (by index), the row count, or a measure. */
export type AggregateSortTarget = { kind: 'group'; index: number } | { kind: 'count' } | { kind: 'measure'; measure: Measure };

export interface AggregateSortKey {
  target: AggregateSortTarget;
  direction: 'asc' | 'desc';
}

/**
 * A checked aggregate read: one statement, grouped by `groupBy` (one group over every row when it
 * is empty), the groups in `sort` order and then by their group values, ascending; nulls first
 * ascending and last descending, as lists sort.
 */
export interface AggregateSpec {
  filters: readonly FilterCondition[];
  groupBy: readonly GroupKey[];
  measures: readonly Measure[];
  sort: readonly AggregateSortKey[];
  /** Most groups returned. */
  limit: number;
}

/** One group as the store reads it: group values in `groupBy` order, its row count, measures in order. */
export interface AggregateRow {
  group: unknown[];
  count: number;
  values: unknown[];
}
