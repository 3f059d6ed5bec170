import { filledFromCredential } from '../core/access-rules/write-access.js';
import { MAX_CHOSEN_ID } from '../core/record-validator.js';
import { readRestricted } from '../core/access-rules/field-reads.js';
import { fieldJsonSchema } from '../schema/field-json-schema.js';
import { fileFieldJsonSchema } from '../schema/file-field.js';
import { withIndefiniteArticle } from '../schema/indefinite-article.js';
import type { FieldModel } from '../schema/schema-model.js';
import { ref, type SchemaObject } from './openapi-types.js';
import { fieldAccessNote } from './rule-notes.js';
import type { FieldView, ResourceView } from './versioned-view.js';

/** Component schema names of a resource's representations. */
export function schemaNames(resource: ResourceView): { record: string; create: string; replace: string; patch: string } {
  const t = resource.typeName;
  return { record: t, create: `${t}Create`, replace: `${t}Replace`, patch: `${t}Patch` };
}

/**
 * The component schemas of one resource: the record as responses carry it, and the bodies of
 * create (POST), replace (PUT) and merge patch (PATCH). Request bodies reuse the JSON Schema the
 * server validates them with ({@link fieldJsonSchema}), so the document states the same rules.
 */
export function resourceSchemas(resource: ResourceView, options: { maxEmbedded: number; compat?: 'json-server' | undefined }): Record<string, SchemaObject> {
  const names = schemaNames(resource);
  return {
    [names.record]: recordSchema(resource, options.maxEmbedded),
    [names.create]: writeSchema(resource, options.compat === 'json-server' ? 'create with id' : 'create'),
    [names.replace]: writeSchema(resource, 'replace'),
    [names.patch]: writeSchema(resource, 'patch'),
  };
}

/**
 * A row as responses show it: every field present (null when empty), and the relations `include`
 * may embed. With `fields`, only the fields named are present (the parameter says so).
 */
function recordSchema(resource: ResourceView, maxEmbedded: number): SchemaObject {
  const properties: Record<string, SchemaObject> = {};
  for (const field of resource.fields) {
    const value = responseValueSchema(field.model);
    const shown = annotate(field.model.system || field.model.required ? value : nullable(value), field, resource);
    const hidden = `Left out where the credential may not read it (read: ${readAccessText(field.model)}).`;
    properties[field.name] = readRestricted(field.model) ? { ...shown, description: typeof shown.description === 'string' ? `${shown.description} ${hidden}` : hidden } : shown;
  }
  for (const relation of resource.relations) {
    const target = ref('schemas', relation.target.typeName);
    properties[relation.name] =
      relation.kind === 'hasMany'
        ? { type: 'array', items: target, maxItems: maxEmbedded, description: `Embedded with include=${relation.name}: the related ${relation.target.name}, by id (at most ${maxEmbedded}).`, 'x-restgraph-foreign-key': relation.foreignKey }
        : { anyOf: [target, { type: 'null' }], description: `Embedded with include=${relation.name}: the related ${relation.target.singular}, or null.`, 'x-restgraph-foreign-key': relation.foreignKey };
  }
  return {
    type: 'object',
    description: resource.description ?? `${withIndefiniteArticle(resource.singular, true)}.`,
    ...(resource.deprecated ? { deprecated: true } : {}),
    'x-restgraph-resource': resource.name,
    properties,
    // Field access may leave a field out of a row.
    required: resource.fields.filter((f) => !readRestricted(f.model)).map((f) => f.name),
    additionalProperties: false,
  };
}

/** `create with id`: json-server compatibility, where a create may choose its id. */
type WriteKind = 'create' | 'create with id' | 'replace' | 'patch';

const WRITE_DESCRIPTIONS: Record<WriteKind, (r: ResourceView) => string> = {
  create: (r) => `A new ${r.singular} (POST). Fields left out take their default, or null.`,
  'create with id': (r) => `A new ${r.singular} (POST). Fields left out take their default, or null; id, when given, chooses the new ${r.singular}'s id.`,
  replace: (r) => `A whole ${r.singular} (PUT): it replaces every field; fields left out are reset to their default, or null.`,
  patch: (r) => `A JSON Merge Patch (RFC 7396) of ${withIndefiniteArticle(r.singular)} (PATCH): only the fields sent change; null clears a field.`,
};

/** A request body: the writable fields, plus the read-only ones the server accepts and ignores. */
function writeSchema(resource: ResourceView, kind: WriteKind): SchemaObject {
  const properties: Record<string, SchemaObject> = {};
  for (const field of resource.fields) {
    if (field.model.system) {
      if (field.name === 'id' && kind === 'create with id') {
        properties.id = { type: ['integer', 'null'], minimum: 1, maximum: MAX_CHOSEN_ID, description: `The new ${resource.singular}'s id, if no ${resource.singular} has it (else a 409); left out or null, the server numbers it.` };
        continue;
      }
      if (field.name === 'id' && kind === 'create') continue;
      const note = field.name === 'id' ? 'Read-only: if sent, it must equal the id in the path.' : 'Read-only: ignored if sent.';
      properties[field.name] = { ...responseValueSchema(field.model), readOnly: true, description: note };
      continue;
    }
    if (field.model.type === 'file') {
      properties[field.name] = { type: 'null', description: `A file: upload it with PUT ${'/' + resource.name}/{id}/${field.name} (docs/files.md); only null (clears it) is taken here.` };
      continue;
    }
    const value = fieldJsonSchema(field.model);
    // json fields take any value, null included; other optional fields may be null (cleared).
    let schema = field.model.required || (field.model.type === 'json' && field.model.format !== 'array') ? value : nullable(value);
    if (kind !== 'patch' && field.model.default !== undefined) schema = { ...schema, default: field.model.default };
    properties[field.name] = annotate(schema, field, resource);
  }
  const required =
    kind === 'patch' ? [] : resource.writableFields.filter((f) => f.model.required && !filledFromCredential(resource.model, f.model.name)).map((f) => f.name);
  return {
    type: 'object',
    description: WRITE_DESCRIPTIONS[kind](resource),
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/**
 * A field's value in responses: its type (and enum values and date formats, which stored values
 * always have) without the write constraints, which rows stored before a constraint changed may not meet.
 */
export function responseValueSchema(field: FieldModel): SchemaObject {
  switch (field.type) {
    case 'string':
      // A mapped database's uuid and bytea columns say what their text is.
      return field.format === 'uuid' ? { type: 'string', format: 'uuid' } : field.format === 'base64' ? { type: 'string', contentEncoding: 'base64' } : { type: 'string' };
    case 'integer':
      if (field.format === 'int64') return { oneOf: [{ type: 'integer' }, { type: 'string', format: 'int64', pattern: '^-?[0-9]+$' }], description: 'A 64-bit integer: a JSON number within ±(2^53−1), a string of digits beyond.' };
      return { type: field.type };
    case 'number':
    case 'boolean':
      return { type: field.type };
    case 'datetime':
      return { type: 'string', format: 'date-time' };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'decimal':
      return { type: 'string', format: 'decimal', pattern: '^-?[0-9]+(\\.[0-9]+)?$' };
    case 'time':
      return { type: 'string' };
    case 'enum':
      return { type: 'string', enum: field.values ?? [] };
    case 'json':
      return field.format === 'array' ? { type: 'array' } : {};
    case 'file':
      return fileFieldJsonSchema(field);
  }
}

/** The same value schema, also accepting null. A json schema (any value) already does. */
export function nullable(value: SchemaObject): SchemaObject {
  if (Array.isArray(value.oneOf)) return { ...value, oneOf: [...(value.oneOf as unknown[]), { type: 'null' }] };
  if (value.type === undefined) return value;
  const schema: SchemaObject = { ...value, type: [value.type, 'null'].flat() };
  if (Array.isArray(value.enum)) schema.enum = [...(value.enum as unknown[]), null];
  return schema;
}

/** Adds the field's description (with what unique, references and the owner rule mean) and deprecation. */
/** restgraph's specification extensions in schemas (annotations: a validator may ignore them, or declare them as keywords). */
export const SCHEMA_EXTENSIONS = ['x-restgraph-resource', 'x-restgraph-type', 'x-restgraph-references', 'x-restgraph-on-delete', 'x-restgraph-foreign-key'] as const;

/**
 * What a generated form or table needs beyond JSON Schema (the admin console reads these):
 * restgraph's field type, and for a reference the resource it points to and what deleting a row
 * of that resource does to this one.
 */
function fieldExtensions(field: FieldView): SchemaObject {
  const model = field.model;
  if (model.references === undefined) return { 'x-restgraph-type': model.type };
  return { 'x-restgraph-type': model.type, 'x-restgraph-references': model.references, 'x-restgraph-on-delete': model.onDelete ?? 'restrict' };
}

/** A field's read access as the schema writes it. */
function readAccessText(field: FieldModel): string {
  return Array.isArray(field.read) ? `[${field.read.join(', ')}]` : String(field.read);
}

function annotate(schema: SchemaObject, field: FieldView, resource: ResourceView): SchemaObject {
  const notes = [field.description];
  if (field.model.unique && !field.model.system) notes.push(`Unique among ${resource.name} (a taken value is a 409 unique-conflict).`);
  if (field.model.references !== undefined) notes.push(`The id of a row of ${field.model.references}.`);
  if (field.name === resource.owner && !field.model.system) {
    notes.push("The owner: tokens without the admin scope may leave it out (it is set to the token's subject) and may not set another.");
  }
  notes.push(fieldAccessNote(resource.model, field.model.name));
  const preset = resource.model.presets[field.model.name];
  if (preset !== undefined && Object.hasOwn(resource.model.presets, field.model.name)) {
    notes.push(`Set from the credential (${preset}) on create: it may be left out, may not name another value, and may not be changed afterwards (except with the admin scope).`);
  }
  const description = notes.filter((n) => n !== undefined).join(' ');
  const out: SchemaObject = { ...schema, ...(field.deprecated ? { deprecated: true } : {}), ...fieldExtensions(field) };
  if (description === '') delete out.description;
  else out.description = description;
  return out;
}
