import type { FieldDefinition } from './schema-model.js';

/**
 * The values of the types only a mapped database has (docs/existing-database.md#types), as
 * clients send and see them, and the checks a JSON Schema cannot make: int64 ranges, decimal
 * precision and scale, the canonical text of an instant. Pure functions shared by the validator
 * (core), filters and cursors (core) and the dialects' encode/decode (store).
 */

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT64_TEXT = /^-?(0|[1-9][0-9]{0,18})$/;

/** An int64 as clients see it: a JSON number within ±(2^53−1), else its digits as a string. */
export type Int64Value = number | string;

/** An int64 from the database (pg's text of an int8, a better-sqlite3 bigint, a number) as clients see it. */
export function int64Value(raw: number | string | bigint): Int64Value {
  if (typeof raw === 'number') return raw;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : String(raw);
}

/** Why `value` is not an int64 a client may send (a safe integer, or a string of digits within int64), or undefined. */
export function int64Problem(value: unknown, field: Pick<FieldDefinition, 'min' | 'max'> = {}): string | undefined {
  let n: bigint;
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return 'must be an integer (a JSON number, or a string of digits beyond 2^53)';
    if (!Number.isSafeInteger(value)) return 'is beyond 2^53 as a JSON number, where digits are lost: send it as a string of digits ("9007199254740993")';
    n = BigInt(value);
  } else if (typeof value === 'string') {
    if (!INT64_TEXT.test(value) || value === '-0') return 'must be an integer: a JSON number, or a string of digits ("-9223372036854775808")';
    n = BigInt(value);
  } else {
    return 'must be an integer (a JSON number, or a string of digits beyond 2^53)';
  }
  if (n < INT64_MIN || n > INT64_MAX) return 'is out of range: a 64-bit integer is from -9223372036854775808 to 9223372036854775807';
  if (field.min !== undefined && n < BigInt(field.min)) return `must be at least ${field.min}`;
  if (field.max !== undefined && n > BigInt(field.max)) return `must be at most ${field.max}`;
  return undefined;
}

/** An int64 a client sent (checked by {@link int64Problem}) as clients see it: `"42"` becomes 42. */
export function int64Input(value: number | string): Int64Value {
  return typeof value === 'number' ? value : int64Value(value);
}

const DECIMAL_TEXT = /^([+-]?)([0-9]+)(?:\.([0-9]+))?$/;

/**
 * Why `value` is not a decimal of this field, or undefined: a string of digits with an optional
 * sign and point (`"-12.50"`), or a JSON number written without an exponent; at most
 * `precision - scale` digits before the point and `scale` after it (leading zeros before the point
 * and trailing ones after it do not count), as the database would otherwise round or refuse it.
 */
export function decimalProblem(value: unknown, field: Pick<FieldDefinition, 'precision' | 'scale'>): string | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? numberText(value) : value;
  if (typeof text !== 'string' || text.length > 2100) return 'must be a decimal number as a string ("12.50")';
  const match = DECIMAL_TEXT.exec(text);
  if (match === null) return 'must be a decimal number as a string: digits, a point and digits ("-12.50"), no exponent';
  const whole = (match[2] ?? '').replace(/^0+/, '');
  const fraction = (match[3] ?? '').replace(/0+$/, '');
  const scale = field.scale ?? (field.precision === undefined ? undefined : 0);
  if (scale !== undefined && fraction.length > scale) return `has more than ${scale} digit${scale === 1 ? '' : 's'} after the point`;
  if (field.precision !== undefined && whole.length > field.precision - (scale ?? 0)) {
    const most = field.precision - (scale ?? 0);
    return `has more than ${most} digit${most === 1 ? '' : 's'} before the point (precision ${field.precision}, scale ${scale ?? 0})`;
  }
  return undefined;
}

/** A decimal a client sent (checked by {@link decimalProblem}) as the text to store: `4.5` becomes `"4.5"`, `"+1"` `"1"`. */
export function decimalInput(value: number | string): string {
  const text = typeof value === 'number' ? numberText(value) : value;
  return text.startsWith('+') ? text.slice(1) : text;
}

/**
 * A decimal from the database as clients see it: PostgreSQL's numeric text as it is; a number
 * (SQLite stores NUMERIC columns' values as integers or reals) as its digits, with `scale` digits
 * after the point when the field has one (4.5 in numeric(4,2): `"4.50"`).
 */
export function decimalValue(raw: number | string | bigint, scale?: number): string {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'bigint') return scale === undefined || scale === 0 ? String(raw) : `${raw}.${'0'.repeat(scale)}`;
  if (scale !== undefined && Math.abs(raw) < 1e21) return raw.toFixed(scale);
  return numberText(raw);
}

/** A number's digits without an exponent (1e-7: `0.0000001`). */
function numberText(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  return Math.abs(value) < 1 ? value.toFixed(20).replace(/0+$/, '').replace(/\.$/, '') : BigInt(Math.round(value)).toString();
}

/**
 * The canonical text of an instant: ISO 8601 in UTC with milliseconds (`2026-01-02T01:04:05.000Z`,
 * as `Date.toISOString` writes it), or microseconds when it has them (PostgreSQL keeps them:
 * `2026-01-02T01:04:05.123456Z`). Takes RFC 3339 text with any offset, PostgreSQL's output
 * (`2026-01-02 03:04:05.123456+02`, and without an offset for `timestamp`: read as UTC), SQLite's
 * `CURRENT_TIMESTAMP` (`2026-01-02 01:04:05`) and a `Date`. Undefined when it is none of these.
 */
export function canonicalInstant(value: string | Date): string | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  const match = /^(\d{4,}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?\s*(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?$/i.exec(value);
  if (match === null) return undefined;
  const [, day = '', clock = '', fraction = '', zone = 'Z'] = match;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 3 ? `${zone}:00` : zone.replace(/^([+-]\d{2}):?(\d{2}).*$/, '$1:$2');
  const ms = Date.parse(`${day}T${clock.length === 5 ? `${clock}:00` : clock}.${(fraction + '000').slice(0, 3)}${offset}`);
  if (Number.isNaN(ms)) return undefined;
  const iso = new Date(ms).toISOString();
  const micros = fraction.slice(3, 6).replace(/0+$/, '');
  return micros === '' ? iso : `${iso.slice(0, -1)}${micros.padEnd(3, '0')}Z`;
}

/** Bytes as clients see them: base64. */
export function base64Value(raw: Uint8Array): string {
  return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64');
}
