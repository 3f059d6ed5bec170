import type { FieldModel } from '../../schema/schema-model.js';
import { base64Value, canonicalInstant, int64Value } from '../../schema/mapped-values.js';

/**
 * PostgreSQL's values of the types only a mapped database has (docs/existing-database.md#types),
 * between restgraph's form (schema/mapped-values.ts) and what node-postgres binds and returns
 * (with the type parsers of postgres-database.ts: int8 as a number or, beyond 2^53, its digits;
 * dates and timestamps as text; numeric, time and uuid as text; bytea as a Buffer; json and jsonb
 * parsed; arrays of built-in types as JS arrays).
 */

/** A validated value → the parameter to bind. */
export function encodePostgres(field: FieldModel, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (field.type) {
    case 'json':
    case 'file':
      // An array column (format: array) takes a JS array, which the driver writes as a PostgreSQL
      // array literal; json and jsonb take the text (the driver would make an array literal of it).
      return field.format === 'array' && Array.isArray(value) ? value : JSON.stringify(value);
    case 'datetime':
      // UTC text: a timestamptz keeps the instant; a timestamp (without time zone) ignores the
      // offset of what it is given, so it is given UTC's wall-clock time.
      // PostgreSQL's 'infinity' and '-infinity' (a mapped row's, given back in a cursor) as they are.
      if (value === 'infinity' || value === '-infinity') return value;
      return canonicalInstant(value as string) ?? new Date(value as string).toISOString();
    case 'string':
      return field.format === 'base64' ? Buffer.from(value as string, 'base64') : value;
    default:
      // int64 as a number or its digits, decimals as their text: PostgreSQL reads both exactly.
      return value;
  }
}

/** Whether a mapped field's raw values need {@link decodePostgres}. */
export function postgresNeedsDecode(field: FieldModel): boolean {
  return field.type === 'datetime' || field.format === 'base64' || field.format === 'array' || field.type === 'json';
}

/** A raw column value → restgraph's form. */
export function decodePostgres(field: FieldModel, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  switch (field.type) {
    case 'datetime':
      // timestamptz as the server writes it ('2026-01-02 01:04:05.123+00'), timestamp without an offset (read as UTC).
      return typeof raw === 'string' || raw instanceof Date ? (canonicalInstant(raw) ?? raw) : raw;
    case 'json':
      if (typeof raw === 'string' && field.format === 'array') return parseArrayLiteral(raw) ?? raw;
      return Array.isArray(raw) ? raw.map(plainElement) : raw;
    case 'string':
      return field.format === 'base64' && raw instanceof Uint8Array ? base64Value(raw) : raw;
    case 'integer':
      // The int8 parser gives the digits of a value past 2^53; only an int64 field may hold one.
      if (typeof raw === 'string' && field.format !== 'int64') throw new RangeError(`bigint value ${raw} of ${field.name} is beyond JavaScript's safe integers`);
      return raw;
    default:
      return raw;
  }
}

/** An element of an array the driver parsed, as JSON holds it (timestamp[] elements arrive as Dates, bytea[] as Buffers). */
function plainElement(element: unknown): unknown {
  if (Array.isArray(element)) return element.map(plainElement);
  if (element instanceof Date) return element.toISOString();
  if (element instanceof Uint8Array) return base64Value(element);
  return element;
}

/**
 * A PostgreSQL array literal the driver left as text (arrays of enum types and other types it does
 * not know): `{a,"b c",NULL}` → ["a", "b c", null]; nested braces make nested arrays. Undefined
 * when the text is not one.
 */
export function parseArrayLiteral(text: string): unknown[] | undefined {
  let i = 0;
  const parse = (): unknown[] | undefined => {
    if (text[i] !== '{') return undefined;
    i++;
    const out: unknown[] = [];
    if (text[i] === '}') {
      i++;
      return out;
    }
    for (;;) {
      if (text[i] === '{') {
        const inner = parse();
        if (inner === undefined) return undefined;
        out.push(inner);
      } else if (text[i] === '"') {
        let value = '';
        i++;
        while (i < text.length && text[i] !== '"') {
          if (text[i] === '\\') i++;
          value += text[i] ?? '';
          i++;
        }
        if (text[i] !== '"') return undefined;
        i++;
        out.push(value);
      } else {
        const start = i;
        while (i < text.length && text[i] !== ',' && text[i] !== '}') i++;
        const value = text.slice(start, i).trim();
        out.push(value.toUpperCase() === 'NULL' ? null : value);
      }
      if (text[i] === ',') i++;
      else if (text[i] === '}') {
        i++;
        return out;
      } else return undefined;
    }
  };
  const parsed = parse();
  return parsed !== undefined && i === text.length ? parsed : undefined;
}

/**
 * A column's value in PostgreSQL's text output form (`column::text`, what a trigger or logical
 * decoding captures of a row without a driver's parsing) → restgraph's form, the same as
 * {@link decodePostgres} makes of what the driver returns: `'9007199254740993'` → its digits,
 * `'t'` → true, `'2026-01-02 03:04:05+02'` → `'2026-01-02T01:04:05.000Z'`, `'\x00ff'` → `'AP8='`,
 * `'{a,b}'` → ['a', 'b'] (an array's elements stay text, but a JSON array, as `to_json` writes
 * it, is taken as it is). Capture row images as text (or JSON of text): a JSON number of a bigint
 * or numeric column has lost digits already.
 */
export function decodePostgresText(field: FieldModel, text: string | null): unknown {
  if (text === null) return null;
  switch (field.type) {
    case 'integer':
      return field.format === 'int64' ? int64Value(text) : Number(text);
    case 'number':
      return Number(text);
    case 'boolean':
      return text === 't' || text === 'true';
    case 'datetime':
      return canonicalInstant(text) ?? text;
    case 'json':
    case 'file':
      if (field.format === 'array' && text.startsWith('{')) return parseArrayLiteral(text) ?? text;
      return JSON.parse(text) as unknown;
    case 'string':
      return field.format === 'base64' ? Buffer.from(text.replace(/^\\x/, ''), 'hex').toString('base64') : text;
    default:
      // decimal, date, time, enum: their text is restgraph's form.
      return text;
  }
}
