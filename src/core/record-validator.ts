import type { ErrorObject, ValidateFunction } from 'ajv';
import { NUL_DETAIL, nulPointer } from './storable-text.js';
import { type ErrorDetail, MAX_LISTED_ERRORS, ValidationError } from '../errors.js';
import { createAjv, fieldJsonSchema, type JsonSchema } from '../schema/field-json-schema.js';
import { foldIdentifier } from '../schema/identifier-case.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import { isPlainObject } from './merge-patch.js';
import { canonicalInstant, decimalInput, decimalProblem, int64Input, int64Problem } from '../schema/mapped-values.js';
import { canonicalKeyPart, keyFields, recordKeyParts, type RecordId } from '../schema/record-key.js';

/**
 * `restore`: a record as an export wrote it (bulk import of a whole database): like create, but
 * any field may be null, required ones included, as stored rows older than a rule may be.
 */
export type WriteKind = 'create' | 'replace' | 'update' | 'restore';

interface CompiledValidators {
  /** A whole record (create and replace): required fields present and not null. */
  whole: ValidateFunction;
  /** Some fields (merge patch): only the fields given, required ones not null. */
  partial: ValidateFunction;
  /** A record as exported: any field may be null or absent. */
  restore: ValidateFunction;
}

/**
 * The largest id a client may choose for a new row ({@link ValidateOptions.acceptId}): 2^52, so
 * that the ids the server numbers after it stay exact JSON numbers (below 2^53) for a long while.
 */
export const MAX_CHOSEN_ID = 2 ** 52;

export interface ValidateOptions {
  /**
   * Create only: an `id` in the body chooses the new row's id (json-server compatibility). It must
   * be a positive integer up to {@link MAX_CHOSEN_ID}; null is no choice. Otherwise an `id` in a
   * create is refused: the server assigns ids.
   */
  acceptId?: boolean;
}

/**
 * Validates write bodies against a resource's fields with JSON Schema (ajv), reporting every bad
 * field as an RFC 6901 pointer with a sentence a person can act on.
 */
export class RecordValidator {
  readonly #validators = new Map<string, CompiledValidators>();
  readonly #caseFolded: ReadonlyMap<string, ReadonlySet<string>>;

  /** `caseFolded`: the fields whose values are stored lower-cased, by resource (an accounts' email identifier, schema/identifier-case.ts). */
  constructor(resources: Iterable<ResourceModel>, caseFolded: ReadonlyMap<string, ReadonlySet<string>> = new Map()) {
    this.#caseFolded = caseFolded;
    const ajv = createAjv({ validateSchema: false });
    for (const resource of resources) {
      const properties: Record<string, JsonSchema> = {};
      const partialProperties: Record<string, JsonSchema> = {};
      const restoreProperties: Record<string, JsonSchema> = {};
      for (const field of resource.writableFields) {
        // A file arrives through its upload route (docs/files.md): a body may only clear it, checked below.
        // An int64 or a decimal is checked by mappedValueProblem (ranges beyond what JSON Schema compares).
        const value = field.type === 'file' || checkedApart(field) ? {} : fieldJsonSchema(field);
        const nullable = (field.type === 'json' && field.format !== 'array') || field.type === 'file' || checkedApart(field) ? value : nullableSchema(value);
        properties[field.name] = field.required ? value : nullable;
        partialProperties[field.name] = field.required ? value : nullable;
        restoreProperties[field.name] = nullable;
      }
      const base = { type: 'object', additionalProperties: false };
      this.#validators.set(resource.name, {
        whole: ajv.compile({ ...base, properties, required: resource.writableFields.filter((f) => f.required).map((f) => f.name) }),
        partial: ajv.compile({ ...base, properties: partialProperties }),
        restore: ajv.compile({ ...base, properties: restoreProperties }),
      });
    }
  }

  /**
   * Checks a write body and returns the field values to store (system fields removed, datetimes
   * normalised; with `acceptId`, the `id` a create chose). For create and replace, absent fields
   * take their default, or null.
   *
   * @throws ValidationError listing every problem.
   */
  validate(resource: ResourceModel, kind: WriteKind, body: unknown, pathId?: RecordId, options: ValidateOptions = {}): StoredRecord {
    if (!isPlainObject(body)) {
      throw new ValidationError('The request body must be a JSON object.', { errors: [{ pointer: '', detail: 'must be a JSON object' }] });
    }
    const problems: ErrorDetail[] = [];
    const input: StoredRecord = {};
    // Unknown fields past those an error lists are only counted: JSON Schema would describe each
    // (50,000 of them in a 639 KB body took a third of a second).
    let unknownListed = 0;
    let unknownOmitted = 0;
    /** Pointers of required fields given as null: JSON Schema's own words on them are dropped. */
    const nullRequired = new Set<string>();
    let chosenId: number | undefined;
    for (const [name, value] of Object.entries(body)) {
      const field = resource.fields.get(name);
      if (field === undefined && ++unknownListed > MAX_LISTED_ERRORS) {
        unknownOmitted++;
        continue;
      }
      if (field?.system === true) {
        if (name === 'id' && kind === 'create' && options.acceptId === true) {
          if (isChosenId(value)) chosenId = value;
          else if (value !== null) problems.push({ pointer: '/id', detail: `must be a positive integer of at most ${MAX_CHOSEN_ID} (2^52)` });
        } else if (name === 'id' && (kind === 'create' || value !== pathId)) {
          problems.push({ pointer: '/id', detail: kind === 'create' ? 'is assigned by the server; leave it out' : `must match the id in the URL (${pathId ?? ''})` });
        }
        continue; // createdAt, updatedAt and a matching id are read-only and ignored, so GET → edit → PUT works.
      }
      if (field?.generated === 'always') {
        // The database computes it: refused on create, ignored otherwise (GET → edit → PUT works).
        if (kind === 'create') problems.push({ pointer: `/${escapePointer(name)}`, detail: 'is generated by the database; leave it out' });
        continue;
      }
      const pointer = `/${escapePointer(name)}`;
      if (field !== undefined && resource.mapping !== undefined && (kind === 'update' || kind === 'replace') && resource.mapping.key.includes(name)) {
        // A mapped key field names the row, as id does: the value in the URL is accepted (it changes nothing), another refused.
        const inPath = keyPartInPath(resource, name, pathId);
        if (canonicalKeyPart(field, value) !== inPath) {
          problems.push({ pointer, detail: `is part of the key: must match the ${name} in the URL (${String(inPath ?? '')})` });
          continue;
        }
      }
      input[name] = value;
      // Said as such, whatever the field's type (JSON Schema would say "must be a string").
      if (value === null && field?.required === true && kind !== 'restore') {
        problems.push({ pointer, detail: REQUIRED_NOT_NULL });
        nullRequired.add(pointer);
      }
      if (field?.type === 'file' && kind !== 'restore' && value !== null && !(Array.isArray(value) && value.length === 0 && field.multiple === true)) {
        problems.push({ pointer, detail: `is a file: upload it with PUT /${resource.name}/<id>/${name} (its bytes as the body); only null clears it here` });
        continue;
      }
      if (field !== undefined && value !== null && checkedApart(field)) {
        const problem = mappedValueProblem(field, value);
        if (problem !== undefined) problems.push({ pointer, detail: problem });
      }
      const nul = nulPointer(value, pointer);
      if (nul !== undefined) problems.push({ pointer: nul, detail: NUL_DETAIL });
    }
    // A replace leaving a mapped key field out keeps it: the value in the URL.
    if (kind === 'replace' && resource.mapping !== undefined) {
      for (const name of resource.mapping.key) if (!(name in input) && !(name in body)) input[name] = keyPartInPath(resource, name, pathId);
    }
    const validators = this.#validators.get(resource.name);
    if (validators === undefined) throw new Error(`no validator for ${resource.name}`);
    const validate = kind === 'update' ? validators.partial : kind === 'restore' ? validators.restore : validators.whole;
    if (!validate(input)) {
      for (const error of validate.errors ?? []) {
        if (!nullRequired.has(error.instancePath)) problems.push(describe(resource, error));
      }
    }
    if (problems.length > 0) {
      const listed = dedupe(problems);
      const count = listed.length + unknownOmitted;
      throw new ValidationError(count === 1 ? 'One field is invalid.' : `${count} fields are invalid.`, { errors: listed, errorsOmitted: unknownOmitted });
    }

    const values: StoredRecord = chosenId === undefined ? {} : { id: chosenId };
    const folded = this.#caseFolded.get(resource.name);
    for (const field of resource.writableFields) {
      if (field.name in input) values[field.name] = normalise(field, input[field.name], folded?.has(field.name) === true, resource.mapping !== undefined);
      // A field the database (or restgraph) generates is left to it when the body leaves it out.
      else if (kind !== 'update' && field.generated === undefined) values[field.name] = field.default === undefined ? null : structuredClone(field.default);
    }
    return values;
  }
}

const REQUIRED_NOT_NULL = 'is required and cannot be null';

function isChosenId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= MAX_CHOSEN_ID;
}

/**
 * A valid value as it is stored: datetimes in UTC (with the microseconds a mapped database keeps),
 * int64 digits within 2^53 as numbers, decimals as their text.
 */
function normalise(field: FieldModel, value: unknown, foldCase: boolean, mapped: boolean): unknown {
  if (value === null) return null;
  if (foldCase && typeof value === 'string') return foldIdentifier(value);
  if (field.type === 'datetime') return (mapped ? canonicalInstant(value as string) : undefined) ?? new Date(value as string).toISOString();
  if (field.format === 'int64') return int64Input(value as number | string);
  if (field.type === 'decimal') return decimalInput(value as number | string);
  return value;
}

/** Fields whose values JSON Schema cannot check alone: int64 (a number or digits, within 64 bits) and decimal (precision and scale). */
function checkedApart(field: FieldModel): boolean {
  return field.format === 'int64' || field.type === 'decimal';
}

function mappedValueProblem(field: FieldModel, value: unknown): string | undefined {
  return field.type === 'decimal' ? decimalProblem(value, field) : int64Problem(value, field);
}

function describe(resource: ResourceModel, error: ErrorObject): ErrorDetail {
  const params = error.params as Record<string, unknown>;
  const pointer = error.instancePath;
  switch (error.keyword) {
    case 'required':
      return { pointer: `${pointer}/${escapePointer(String(params.missingProperty))}`, detail: 'is required' };
    case 'additionalProperties':
      return { pointer: `${pointer}/${escapePointer(String(params.additionalProperty))}`, detail: `is not a field of ${resource.name}` };
    case 'type':
      return { pointer, detail: `must be ${article(String(params.type))}` };
    case 'format':
      return { pointer, detail: `must be a valid ${formatName(String(params.format))}` };
    case 'maxLength':
      return { pointer, detail: `must be at most ${String(params.limit)} characters long` };
    case 'minLength':
      return { pointer, detail: `must be at least ${String(params.limit)} characters long` };
    case 'maximum':
      return { pointer, detail: `must be at most ${String(params.limit)}` };
    case 'minimum':
      return { pointer, detail: `must be at least ${String(params.limit)}` };
    case 'pattern':
      if (resource.fields.get(unescapePointer(pointer.slice(1)))?.type === 'time') return { pointer, detail: 'must be a time of day: HH:MM, HH:MM:SS or HH:MM:SS.ffffff' };
      return { pointer, detail: `must match the pattern ${String(params.pattern)}` };
    case 'enum':
      return { pointer, detail: `must be one of: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    default:
      return { pointer, detail: error.message ?? 'is invalid' };
  }
}

/** The same value schema, also accepting null (optional fields may be cleared). */
function nullableSchema(value: JsonSchema): JsonSchema {
  const schema: JsonSchema = { ...value, type: [value.type, 'null'] };
  if (Array.isArray(value.enum)) schema.enum = [...(value.enum as unknown[]), null];
  return schema;
}

function dedupe(problems: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.pointer ?? ''}|${p.detail}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function article(type: string): string {
  const names: Record<string, string> = { string: 'a string', integer: 'an integer', number: 'a number', boolean: 'a boolean', object: 'an object', array: 'an array', null: 'null' };
  return type.split(',').map((t) => names[t] ?? t).join(' or ');
}

function formatName(format: string): string {
  const names: Record<string, string> = { 'date-time': 'date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z)', date: 'date (YYYY-MM-DD)', email: 'email address', uri: 'absolute URI', uuid: 'UUID', base64: 'base64 text (RFC 4648: A–Z, a–z, 0–9, + and /, padded with =)' };
  return names[format] ?? format;
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The value the path gives one key field of a mapped resource, in canonical form. */
function keyPartInPath(resource: ResourceModel, name: string, pathId: RecordId | undefined): string | number | undefined {
  if (pathId === undefined) return undefined;
  return recordKeyParts(resource, pathId)[keyFields(resource).indexOf(name)];
}
