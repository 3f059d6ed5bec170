import type { FieldModel, ResourceModel } from '../../schema/schema-model.js';
import { base64Value, canonicalInstant, decimalValue, int64Value } from '../../schema/mapped-values.js';

/**
 * SQLite's values of the types only a mapped database has (docs/existing-database.md#types),
 * between restgraph's form (schema/mapped-values.ts) and what better-sqlite3 binds and returns.
 * A statement that reads a column declared BIGINT (INT8, UNSIGNED BIG INT) returns its integers as
 * bigints (sqlite-connection.ts: safeIntegers), so none beyond 2^53 is rounded: every integer
 * field of a resource with an int64 field is decoded.
 */

/** A validated value → the parameter to bind. */
export function encodeSqlite(field: FieldModel, value: unknown): unknown {
  switch (field.type) {
    case 'boolean':
      return value === true ? 1 : 0;
    case 'json':
    case 'file':
      return JSON.stringify(value);
    case 'datetime':
      return canonicalInstant(value as string) ?? new Date(value as string).toISOString();
    case 'integer':
      // Digits beyond 2^53 as a 64-bit integer (a JS number would round them).
      return typeof value === 'string' ? BigInt(value) : value;
    case 'string':
      return field.format === 'base64' ? Buffer.from(value as string, 'base64') : value;
    default:
      return value;
  }
}

/** Whether a field's raw values need {@link decodeSqlite}. */
export function sqliteNeedsDecode(field: FieldModel, resource?: ResourceModel): boolean {
  if (field.type === 'boolean' || field.type === 'json' || field.type === 'file') return true;
  if (resource?.mapping === undefined) return false;
  if (field.type === 'datetime' || field.type === 'decimal' || field.format === 'base64') return true;
  return field.type === 'integer' && hasInt64(resource);
}

/**
 * A raw column value → restgraph's form. Total: a value another program wrote that is not of the
 * field's type (text that is no JSON, a boolean stored as 'yes', a date in no ISO form) is
 * returned as stored, never an error (docs/existing-database.md#values-restgraph-cannot-read).
 */
export function decodeSqlite(field: FieldModel, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  switch (field.type) {
    case 'boolean':
      // SQLite's own truth: any number but 0 is true.
      return typeof raw === 'number' || typeof raw === 'bigint' ? raw !== 0 && raw !== 0n : raw;
    case 'json':
    case 'file':
      return typeof raw === 'string' ? jsonOrText(raw) : raw;
    case 'integer':
      // A bigint of a statement reading a BIGINT column; digits as text (a row image captured with cast(… as text)).
      if (typeof raw === 'bigint' || (typeof raw === 'string' && /^-?\d+$/.test(raw))) return int64Value(raw);
      // Read without safeIntegers (a column not declared BIGINT), a value past 2^53 has lost digits already: refuse it rather than pass it on.
      if (typeof raw === 'number' && Number.isInteger(raw) && !Number.isSafeInteger(raw)) throw new RangeError(`integer value of ${field.name} is beyond JavaScript's safe integers`);
      return raw;
    case 'decimal':
      // NUMERIC affinity keeps a decimal as an integer or a real when it converts without loss, else as its text.
      return typeof raw === 'number' || typeof raw === 'bigint' || typeof raw === 'string' ? decimalValue(raw, field.scale) : raw;
    case 'datetime':
      return typeof raw === 'string' ? (canonicalInstant(raw) ?? raw) : raw;
    case 'string':
      return field.format === 'base64' && raw instanceof Uint8Array ? base64Value(raw) : raw;
    default:
      return raw;
  }
}

/** The JSON a text holds, or the text itself when it holds none. */
function jsonOrText(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

const int64Resources = new WeakMap<ResourceModel, boolean>();

function hasInt64(resource: ResourceModel): boolean {
  let found = int64Resources.get(resource);
  if (found === undefined) {
    found = [...resource.fields.values()].some((f) => f.format === 'int64');
    int64Resources.set(resource, found);
  }
  return found;
}
