import { fieldNamed, type FieldModel, type ResourceModel } from './schema-model.js';

/**
 * How a record is named: by `id` on the tables restgraph creates, by its primary key on a mapped
 * database's (docs/existing-database.md). One value names one record wherever the core, the
 * store, events and the transports pass it around:
 *
 * - a number: `id`, or a single integer key column within 2^53;
 * - a string: a single text or uuid key (as it is), an int64 key beyond 2^53 (its digits), or a
 *   composite key: its parts in key order, each in its canonical text form, joined by `,` (a
 *   part holding `,` or `%` is percent-encoded), the form of the key in a URL: `/film_actor/1,23`.
 *
 * Values are canonical (see {@link canonicalKeyPart}), so two names of one record are equal with
 * `===` and serve as Map keys.
 */
export type RecordId = number | string;

/** One part of a key, as the database takes it: a number, or a string (text, uuid, int64 beyond 2^53). */
export type KeyPart = number | string;

/** The fields that make a resource's key, in key order: `id`, a mapped table's primary key, or none (read-only without one). */
export function keyFields(resource: ResourceModel): readonly string[] {
  return resource.mapping === undefined ? ID_KEY : resource.mapping.key;
}

const ID_KEY: readonly string[] = Object.freeze(['id']);

/** Whether the resource is named by the `id` restgraph assigns (every resource restgraph creates). */
export function hasIdKey(resource: ResourceModel): boolean {
  return resource.mapping === undefined;
}

/** The name of a record (as stored or returned), or undefined when it lacks a key part. */
export function recordId(resource: ResourceModel, record: Readonly<Record<string, unknown>>): RecordId | undefined {
  const fields = keyFields(resource);
  if (fields.length === 1) {
    const name = fields[0] as string;
    return canonicalKeyPart(fieldNamed(resource, name), record[name]);
  }
  if (fields.length === 0) return undefined;
  const parts: KeyPart[] = [];
  for (const name of fields) {
    const part = canonicalKeyPart(fieldNamed(resource, name), record[name]);
    if (part === undefined) return undefined;
    parts.push(part);
  }
  return joinKeyParts(parts);
}

/**
 * The canonical form of one key value (from a record, a path or an argument), or undefined when
 * it is not a value of the field: integers as numbers within 2^53 and as digit strings beyond
 * (int64), uuids in lower case, other strings as they are.
 */
export function canonicalKeyPart(field: FieldModel, value: unknown): KeyPart | undefined {
  if (field.type === 'integer') {
    if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
    if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    if (typeof value !== 'string' || !/^-?(0|[1-9][0-9]*)$/.test(value)) return undefined;
    const n = Number(value);
    if (Number.isSafeInteger(n)) return n;
    return field.format === 'int64' && BigInt.asIntN(64, BigInt(value)) === BigInt(value) ? value : undefined;
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string' || value === '') return undefined;
  if (field.format !== 'uuid') return value;
  // Text that is no uuid names no record (a 404, not the database's refusal of the text).
  return UUID.test(value) ? value.toLowerCase() : undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A record's name from its text in a URL path (already percent-decoded for a single key), or undefined when it names no record of the resource. */
export function parseRecordId(resource: ResourceModel, text: string): RecordId | undefined {
  const fields = keyFields(resource);
  if (fields.length === 1) return canonicalKeyPart(fieldNamed(resource, fields[0] as string), text);
  if (fields.length === 0) return undefined;
  const texts = text.split(',');
  if (texts.length !== fields.length) return undefined;
  const parts: KeyPart[] = [];
  for (const [i, name] of fields.entries()) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(texts[i] as string);
    } catch {
      return undefined;
    }
    const part = canonicalKeyPart(fieldNamed(resource, name), decoded);
    if (part === undefined) return undefined;
    parts.push(part);
  }
  return joinKeyParts(parts);
}

/** The key values a record name stands for, in key order (what the store binds). */
export function recordKeyParts(resource: ResourceModel, id: RecordId): readonly KeyPart[] {
  const fields = keyFields(resource);
  if (fields.length <= 1) return [id];
  return String(id)
    .split(',')
    .map((text, i) => {
      const part = canonicalKeyPart(fieldNamed(resource, fields[i] as string), decodeURIComponent(text));
      if (part === undefined) throw new Error(`${String(id)} is not a key of ${resource.name}`);
      return part;
    });
}

/** The record name of a composite key's canonical parts. */
export function joinKeyParts(parts: readonly KeyPart[]): string {
  return parts.map((part) => (typeof part === 'string' && /[,%]/.test(part) ? encodeURIComponent(part) : String(part))).join(',');
}
