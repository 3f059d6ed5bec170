import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { fileFieldJsonSchema } from './file-field.js';
import type { FieldDefinition } from './schema-model.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsImport as unknown as typeof addFormatsImport.default;

/** The text of a decimal field's value: `-12.50`, `1e3` is not one. */
export const DECIMAL_PATTERN = '^-?[0-9]{1,1000}(\\.[0-9]{1,1000})?$';

/** The text of a time field's value: `13:45`, `13:45:30`, `13:45:30.250`, with an offset or not. */
export const TIME_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?$';

/** The text of an int64 beyond 2^53 (its range is checked apart: schema/mapped-values.ts). */
export const INT64_PATTERN = '^-?(0|[1-9][0-9]{0,18})$';

/** The pattern of a decimal field's text: at most precision − scale digits before the point and scale after it. */
export function decimalPattern(field: Pick<FieldDefinition, 'precision' | 'scale'>): string {
  if (field.precision === undefined) return field.scale === undefined ? DECIMAL_PATTERN : `^-?[0-9]{1,1000}(\\.[0-9]{1,${field.scale}})?$`;
  const scale = field.scale ?? 0;
  const whole = field.precision - scale;
  const before = whole === 0 ? '0' : `[0-9]{1,${whole}}`;
  return `^-?${before}${scale === 0 ? '' : `(\\.[0-9]{1,${scale}})?`}$`;
}

/** A JSON Schema (draft 2020-12) object; kept loose because it is data we generate. */
export type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema of one field's non-null value, as clients send and receive it. Used for request
 * validation and, later, for OpenAPI and GraphQL input types, so the rules are written once.
 */
export function fieldJsonSchema(field: FieldDefinition): JsonSchema {
  const schema: JsonSchema = {};
  switch (field.type) {
    case 'string':
      schema.type = 'string';
      if (field.minLength !== undefined) schema.minLength = field.minLength;
      if (field.maxLength !== undefined) schema.maxLength = field.maxLength;
      if (field.pattern !== undefined) schema.pattern = field.pattern;
      if (field.format !== undefined) schema.format = field.format;
      break;
    case 'integer':
      if (field.format === 'int64') {
        // A JSON number within ±(2^53−1), its digits beyond: the range of a bigint is checked by the validator (mapped-values.ts).
        schema.oneOf = [
          { type: 'integer', minimum: field.min ?? Number.MIN_SAFE_INTEGER, maximum: field.max ?? Number.MAX_SAFE_INTEGER },
          { type: 'string', format: 'int64', pattern: INT64_PATTERN },
        ];
        break;
      }
      schema.type = 'integer';
      schema.minimum = field.min ?? Number.MIN_SAFE_INTEGER;
      schema.maximum = field.max ?? Number.MAX_SAFE_INTEGER;
      break;
    case 'number':
      schema.type = 'number';
      if (field.min !== undefined) schema.minimum = field.min;
      if (field.max !== undefined) schema.maximum = field.max;
      break;
    case 'decimal':
      // A string, so that no digit is lost to a double (numeric(20,2) holds more than 2^53).
      schema.type = 'string';
      schema.format = 'decimal';
      schema.pattern = decimalPattern(field);
      break;
    case 'time':
      schema.type = 'string';
      schema.pattern = TIME_PATTERN;
      break;
    case 'boolean':
      schema.type = 'boolean';
      break;
    case 'datetime':
      schema.type = 'string';
      schema.format = 'date-time';
      break;
    case 'date':
      schema.type = 'string';
      schema.format = 'date';
      break;
    case 'enum':
      schema.type = 'string';
      schema.enum = field.values ?? [];
      break;
    case 'json':
      // A PostgreSQL array column of a mapped database.
      if (field.format === 'array') schema.type = 'array';
      break;
    case 'file':
      Object.assign(schema, fileFieldJsonSchema(field));
      break;
  }
  if (field.description !== undefined) schema.description = field.description;
  return schema;
}

/**
 * One shared validator factory so formats and options are configured once.
 *
 * `validateSchema: false` skips checking each compiled schema against the draft 2020-12
 * meta-schema, which ajv compiles first, once per instance (~50 ms, three times in a start-up of
 * `restgraph serve`): for schemas restgraph itself writes (the published schema file's schema,
 * the fields'), which the tests check against the meta-schema (schema-loading, openapi).
 */
export function createAjv(options: { strictRequired?: boolean; validateSchema?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictRequired: options.strictRequired ?? true,
    validateSchema: options.validateSchema ?? true,
    coerceTypes: false,
    useDefaults: false,
    allowUnionTypes: true,
  });
  addFormats(ajv, ['email', 'uri', 'uuid', 'hostname', 'ipv4', 'ipv6', 'date']);
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime, compare: dateTimeFormat.compare });
  // Bytes of a mapped database's bytea or BLOB column (docs/existing-database.md).
  // Mapped databases' int64 (beyond 2^53) and decimal texts, as OpenAPI names them.
  ajv.addFormat('int64', { type: 'string', validate: new RegExp(INT64_PATTERN) });
  ajv.addFormat('decimal', { type: 'string', validate: new RegExp(DECIMAL_PATTERN) });
  ajv.addFormat('base64', { type: 'string', validate: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/ });
  return ajv;
}

const dateTimeFormat = fullFormats['date-time'] as { validate: (text: string) => boolean; compare: (a: string, b: string) => number | undefined };

/**
 * Whether `text` is an RFC 3339 date-time of a real day (not 2024-02-30) that an instant can hold:
 * RFC 3339 allows a leap second (:60), which no stored instant can, so it is refused.
 */
export function isDateTime(text: string): boolean {
  return dateTimeFormat.validate(text) && !Number.isNaN(Date.parse(text));
}

/** Whether `text` is a date a `date` field accepts: `YYYY-MM-DD`, a day of the calendar. */
export function isDateText(text: string): boolean {
  const date = fullFormats.date as { validate: (text: string) => boolean };
  return date.validate(text);
}

let defaultsAjv: Ajv2020 | undefined;

/** Returns why a field's declared default does not fit the field, or undefined when it does. */
export function checkDefault(field: FieldDefinition): string | undefined {
  defaultsAjv ??= createAjv({ validateSchema: false });
  const validate = defaultsAjv.compile(fieldJsonSchema(field));
  if (validate(field.default)) return undefined;
  return `default ${JSON.stringify(field.default)} does not fit the field: ${validate.errors?.map((e) => e.message).join(', ') ?? 'invalid'}`;
}
