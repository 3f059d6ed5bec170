import type { FieldDefinition } from './schema-model.js';

/** A JSON Schema object (as field-json-schema.ts's). */
type JsonSchema = Record<string, unknown>;

/** A file field's limits, with their defaults (docs/files.md#declaring-file-fields). */
export interface FileFieldLimits {
  /** The largest file, in bytes. */
  maxSize: number;
  /** Media types taken (`image/*` a whole family); undefined: any. */
  accept: readonly string[] | undefined;
  multiple: boolean;
  /** With `multiple`: the most files the list holds. */
  maxFiles: number;
}

export const DEFAULT_MAX_FILE_SIZE = 10 * 1024 ** 2;
export const DEFAULT_MAX_FILES = 10;
/** The largest maxSize a schema may declare: 1 TiB (a safe integer, far above any disk a test has). */
const LARGEST_MAX_SIZE = 1024 ** 4;

const UNITS: Readonly<Record<string, number>> = { B: 1, KB: 1024, KIB: 1024, MB: 1024 ** 2, MIB: 1024 ** 2, GB: 1024 ** 3, GIB: 1024 ** 3, TB: 1024 ** 4, TIB: 1024 ** 4 };

/** Bytes of `5MB`, `500 KB`, `1.5GiB` or a number (powers of 1024); undefined when it is none of those. */
export function parseByteSize(size: number | string): number | undefined {
  if (typeof size === 'number') return Number.isSafeInteger(size) && size > 0 ? size : undefined;
  const match = /^([0-9]+(?:\.[0-9]+)?) ?([KMGT]i?B|B)$/i.exec(size);
  if (match === null) return undefined;
  const unit = UNITS[(match[2] ?? '').toUpperCase()];
  if (unit === undefined) return undefined;
  const bytes = Math.floor(Number(match[1]) * unit);
  return bytes > 0 ? bytes : undefined;
}

/** The limits of a file field (checked at compile time, so they parse). */
export function fileLimits(field: FieldDefinition): FileFieldLimits {
  return {
    maxSize: field.maxSize === undefined ? DEFAULT_MAX_FILE_SIZE : (parseByteSize(field.maxSize) ?? DEFAULT_MAX_FILE_SIZE),
    accept: field.accept,
    multiple: field.multiple === true,
    maxFiles: field.maxFiles ?? DEFAULT_MAX_FILES,
  };
}

/** Whether `type` (a sniffed media type, lower case, no parameters) is one of `accept`'s. */
export function acceptsType(accept: readonly string[] | undefined, type: string): boolean {
  if (accept === undefined) return true;
  return accept.some((pattern) => pattern === type || (pattern.endsWith('/*') && type.startsWith(pattern.slice(0, -1))));
}

/** What a schema may not say of a file field. */
export function checkFileField(at: string, field: FieldDefinition): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  for (const key of ['required', 'unique', 'index', 'default', 'references'] as const) {
    // A file arrives through its upload route after the record exists: a create could never give one.
    if (key in field && field[key] !== false) problems.push({ path: `${at}.${key}`, message: `"${key}" does not apply to file fields (a file is uploaded to a record that exists)` });
  }
  if (field.maxSize !== undefined) {
    const bytes = parseByteSize(field.maxSize);
    if (bytes === undefined) problems.push({ path: `${at}.maxSize`, message: 'must be a positive number of bytes, or a size such as 500KB, 5MB or 1GB' });
    else if (bytes > LARGEST_MAX_SIZE) problems.push({ path: `${at}.maxSize`, message: 'is larger than 1TB' });
  }
  if (field.maxFiles !== undefined && field.multiple !== true) problems.push({ path: `${at}.maxFiles`, message: 'maxFiles needs multiple: true' });
  return problems;
}

/** The JSON Schema of one file's value, as answers show it. */
export const FILE_VALUE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'The file name, sanitised.' },
    type: { type: 'string', description: 'The media type, sniffed from the bytes.' },
    size: { type: 'integer', minimum: 0, description: 'Bytes.' },
    url: { type: 'string', description: 'Where to download it (under the record\'s read rules).' },
    etag: { type: 'string', description: 'The entity tag of the bytes; a new upload has a new one.' },
  },
  required: ['name', 'type', 'size', 'url', 'etag'],
  additionalProperties: false,
};

/** The JSON Schema of a file field's non-null value: one file, or a list of them. */
export function fileFieldJsonSchema(field: FieldDefinition): JsonSchema {
  return field.multiple === true ? { type: 'array', items: FILE_VALUE_SCHEMA, maxItems: fileLimits(field).maxFiles } : { ...FILE_VALUE_SCHEMA };
}
