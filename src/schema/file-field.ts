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
  /** The thumbnail sizes served (`100x100`, `100x100c`). */
  thumbs: readonly string[];
}

export const DEFAULT_MAX_FILE_SIZE = 10 * 1024 ** 2;
export const DEFAULT_MAX_FILES = 10;
/** The thumbnail sizes a file field serves unless its `thumbs` says otherwise (docs/files.md#thumbnails). */
export const DEFAULT_THUMBS: readonly string[] = Object.freeze(['100x100', '300x300', '600x600', '100x100c', '300x300c', '600x600c']);
/** A thumbnail size: width x height (1 to 4096 pixels each), `c` to crop to it rather than fit inside it. */
const THUMB_SIZE = /^([1-9][0-9]{0,3})x([1-9][0-9]{0,3})(c?)$/;
const MAX_THUMB_SIDE = 4096;
const MAX_THUMB_SIZES = 20;

/** A thumbnail size's parts, or undefined when `size` is not one. */
export function parseThumbSize(size: string): { width: number; height: number; crop: boolean } | undefined {
  const match = THUMB_SIZE.exec(size);
  if (match === null) return undefined;
  const width = Number(match[1]);
  const height = Number(match[2]);
  if (width > MAX_THUMB_SIDE || height > MAX_THUMB_SIDE) return undefined;
  return { width, height, crop: match[3] === 'c' };
}
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
    thumbs: field.thumbs ?? DEFAULT_THUMBS,
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
  if (field.thumbs !== undefined) {
    if (!Array.isArray(field.thumbs) || field.thumbs.length > MAX_THUMB_SIZES) problems.push({ path: `${at}.thumbs`, message: `must be a list of at most ${MAX_THUMB_SIZES} sizes` });
    else {
      field.thumbs.forEach((size, i) => {
        if (typeof size !== 'string' || parseThumbSize(size) === undefined) {
          problems.push({ path: `${at}.thumbs[${i}]`, message: `must be a size such as 100x100 (fit inside) or 100x100c (cropped to it), each side 1 to ${MAX_THUMB_SIDE} pixels` });
        }
      });
    }
  }
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
