import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import type { SortKey } from '../store/list-spec.js';
import { parseFilterValue } from './filter-values.js';
import { canonicalInstant } from '../schema/mapped-values.js';

/**
 * Cursors are opaque to clients: base64url of JSON `{"s": "<sort>", "v": [<values>]}`, where
 * the values are those of the sort keys of the last row of a page, as responses show them. See
 * docs/cursors.md.
 */
export function encodeCursor(sort: readonly SortKey[], values: readonly unknown[]): string {
  return Buffer.from(JSON.stringify({ s: sortSignature(sort), v: values })).toString('base64url');
}

/** A decoded cursor: the stored values of its sort keys, or why it cannot be one this list returned. */
export type DecodedCursor = { values: unknown[]; problem?: undefined } | { values?: undefined; problem: string };

const NOT_OURS = 'is not a cursor this list returned for the same sort';

/**
 * The sort-key values a cursor carries, or the problem with it when it is not one this list could
 * have returned: each value must be one its field could hold (of its type, a real date for a date,
 * a member of an enum, null only where the field may be empty), so that a forged cursor never
 * reaches the database, nor any conversion on the way there, as a value of another type.
 * Datetimes come back normalised to ISO 8601 UTC, as they are stored.
 */
export function decodeCursor(resource: ResourceModel, cursor: string, sort: readonly SortKey[]): DecodedCursor {
  if (cursor.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return { problem: NOT_OURS };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return { problem: NOT_OURS };
  }
  if (typeof parsed !== 'object' || parsed === null) return { problem: NOT_OURS };
  const { s, v } = parsed as { s?: unknown; v?: unknown };
  if (s !== sortSignature(sort) || !Array.isArray(v) || v.length !== sort.length) return { problem: NOT_OURS };
  const values: unknown[] = [];
  for (const [i, key] of sort.entries()) {
    const field = resource.fields.get(key.field);
    const given: unknown = v[i];
    const checked = field === undefined ? { problem: 'is not a field' } : cursorValue(field, given, resource.mapping !== undefined);
    if (checked.problem !== undefined) return { problem: `${NOT_OURS}: its value ${truncate(JSON.stringify(given))} for ${key.field} ${checked.problem}` };
    values.push(checked.value);
  }
  return { values };
}

/** A cursor value as its field stores it, or why the field could not hold it. */
function cursorValue(field: FieldModel, value: unknown, mapped: boolean): { value?: unknown; problem?: string } {
  if (value === null) return field.system ? { problem: 'is null, and the field is never empty' } : { value: null };
  switch (field.type) {
    case 'datetime': {
      // PostgreSQL's own instants past every date, as a mapped row holds them and the server returns them.
      if (mapped && (value === 'infinity' || value === '-infinity')) return { value };
      // A mapped database's instants keep their microseconds (PostgreSQL): the next page starts
      // after the row's own instant, not after its millisecond.
      const exact = mapped && typeof value === 'string' && parseFilterValue(field, value).problem === undefined ? canonicalInstant(value) : undefined;
      return exact === undefined ? (typeof value === 'string' ? parseFilterValue(field, value) : { problem: 'is not text' }) : { value: exact };
    }
    case 'integer':
      if (field.format === 'int64' && typeof value === 'string') return parseFilterValue(field, value);
      return Number.isSafeInteger(value) ? { value } : { problem: 'is not an integer' };
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? { value } : { problem: 'is not a number' };
    case 'boolean':
      return typeof value === 'boolean' ? { value } : { problem: 'is not true or false' };
    case 'json':
    case 'file':
      return { problem: `is of a ${field.type} field, which cannot be sorted` };
    default:
      // Text in responses (strings, enum values, dates, datetimes): checked as a filter value is.
      return typeof value === 'string' ? parseFilterValue(field, value) : { problem: `is not ${field.type === 'enum' ? 'one of the values' : 'text'}` };
  }
}

function sortSignature(sort: readonly SortKey[]): string {
  return sort.map((k) => (k.direction === 'desc' ? `-${k.field}` : k.field)).join(',');
}

/** A value as an error message quotes it: at most 60 characters. */
export function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
