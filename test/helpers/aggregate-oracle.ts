/**
 * An in-memory computation of aggregates, what the SQL of GET /<resource>/aggregate must agree
 * with: groups by their values (null a group of its own), counts, sums and averages of the
 * non-null values (null when there are none), extremes, distinct counts; groups in ascending order
 * of their values, nulls first.
 */
export type Row = Record<string, unknown>;
export interface OracleKey {
  field: string;
  unit?: 'day' | 'month' | 'year';
}
export interface OracleMeasure {
  fn: 'sum' | 'avg' | 'min' | 'max' | 'countDistinct';
  field: string;
}

export interface OracleGroup {
  group: Record<string, unknown>;
  count: number;
  values: Record<string, Record<string, unknown>>;
}

const LENGTH = { day: 10, month: 7, year: 4 } as const;
const SUFFIX = { day: '', month: '-01', year: '-01-01' } as const;

export function groupValue(row: Row, key: OracleKey): unknown {
  const value = row[key.field] ?? null;
  if (key.unit === undefined || value === null) return value;
  return `${(value as string).slice(0, LENGTH[key.unit])}${SUFFIX[key.unit]}`;
}

export function term(key: OracleKey): string {
  return key.unit === undefined ? key.field : `${key.field}:${key.unit}`;
}

/** Ascending with nulls first: numbers by value, booleans false first, text by code unit. */
export function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'boolean' || typeof a === 'number') return Number(a) - Number(b);
  return (a as string) < (b as string) ? -1 : 1;
}

export function aggregateInMemory(rows: readonly Row[], groupBy: readonly OracleKey[], measures: readonly OracleMeasure[]): OracleGroup[] {
  const groups = new Map<string, { values: unknown[]; rows: Row[] }>();
  for (const row of rows) {
    const values = groupBy.map((k) => groupValue(row, k));
    const id = JSON.stringify(values);
    const group = groups.get(id) ?? { values, rows: [] };
    group.rows.push(row);
    groups.set(id, group);
  }
  if (groupBy.length === 0 && groups.size === 0) groups.set('[]', { values: [], rows: [] });
  const sorted = [...groups.values()].sort((x, y) => {
    for (let i = 0; i < groupBy.length; i++) {
      const c = compareValues(x.values[i], y.values[i]);
      if (c !== 0) return c;
    }
    return 0;
  });
  return sorted.map(({ values, rows: members }) => {
    const out: OracleGroup = { group: {}, count: members.length, values: {} };
    groupBy.forEach((k, i) => (out.group[term(k)] = values[i]));
    for (const m of measures) {
      const present = members.map((r) => r[m.field] ?? null).filter((v) => v !== null);
      let value: unknown;
      if (m.fn === 'countDistinct') value = new Set(present.map((v) => JSON.stringify(v))).size;
      else if (present.length === 0) value = null;
      else if (m.fn === 'sum') value = present.reduce((s: number, v) => s + Number(v), 0);
      else if (m.fn === 'avg') value = present.reduce((s: number, v) => s + Number(v), 0) / present.length;
      else value = [...present].sort(compareValues)[m.fn === 'min' ? 0 : present.length - 1];
      (out.values[m.fn] ??= {})[m.field] = value;
    }
    return out;
  });
}
