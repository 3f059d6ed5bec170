import fc from 'fast-check';

/**
 * The operations of a served OpenAPI document, with their parameters and body schema resolved,
 * and fast-check arbitraries of values that fit a JSON Schema (the "valid" half of the fuzz).
 */

/** A JSON Schema as the document holds it (data fetched from the server: loosely typed on purpose). */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  readOnly?: boolean;
  $ref?: string;
}

export interface Parameter {
  name: string;
  in: 'query' | 'header' | 'path';
  schema: Schema;
}

export interface Operation {
  method: string;
  /** The path template, e.g. `/v1/users/{id}`. */
  path: string;
  parameters: Parameter[];
  /** Media types and schema of the request body, when the operation takes one. */
  body: { contentTypes: string[]; schema: Schema } | undefined;
}

interface Document {
  paths: Record<string, Record<string, { parameters?: (Parameter | { $ref: string })[]; requestBody?: { content: Record<string, { schema?: Schema }> } }>>;
  components?: { parameters?: Record<string, Parameter>; schemas?: Record<string, Schema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of `document` (as served at /openapi.json), references resolved. */
export function operationsOf(document: unknown): Operation[] {
  const doc = document as Document;
  const resolveSchema = (schema: Schema, depth = 0): Schema => {
    if (depth > 20) return {};
    const target = schema.$ref === undefined ? schema : (doc.components?.schemas?.[schema.$ref.split('/').pop() ?? ''] ?? {});
    const properties = target.properties === undefined ? undefined : Object.fromEntries(Object.entries(target.properties).map(([k, v]) => [k, resolveSchema(v, depth + 1)]));
    return { ...target, ...(properties === undefined ? {} : { properties }), ...(target.items === undefined ? {} : { items: resolveSchema(target.items, depth + 1) }) };
  };
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const parameters = (op.parameters ?? []).flatMap((p) => {
        const found = '$ref' in p ? doc.components?.parameters?.[p.$ref.split('/').pop() ?? ''] : p;
        return found === undefined ? [] : [{ ...found, schema: resolveSchema(found.schema) }];
      });
      for (const name of path.match(/\{([^}]+)\}/g) ?? []) {
        const bare = name.slice(1, -1);
        if (!parameters.some((p) => p.in === 'path' && p.name === bare)) parameters.push({ name: bare, in: 'path', schema: { type: 'integer' } });
      }
      const content = op.requestBody?.content;
      const body = content === undefined ? undefined : { contentTypes: Object.keys(content), schema: resolveSchema(Object.values(content)[0]?.schema ?? {}) };
      operations.push({ method: method.toUpperCase(), path, parameters, body });
    }
  }
  return operations;
}

/** What the fuzz knows of the data: ids that exist, so that valid requests reach real rows. */
export interface KnownData {
  ids: readonly number[];
  /** A webhook target the server may call: loopback (allowed for the run), nothing listening. */
  webhookUrl: string;
}

/** Values that fit `schema` (bounded in size), preferring ids that exist for integer fields named like ids. */
export function valueFor(schema: Schema, known: KnownData, name = ''): fc.Arbitrary<unknown> {
  if (schema.enum !== undefined && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  if (types.length > 1) return fc.oneof(...types.map((type) => valueFor({ ...schema, type }, known, name)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      if (/id$/i.test(name) && known.ids.length > 0) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known.ids) }, fc.integer({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6 }));
      return fc.integer({ min: Math.max(schema.minimum ?? -1e6, -1e9), max: Math.min(schema.maximum ?? 1e6, 1e9) });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9 });
    case 'string':
      return stringFor(schema, known, name);
    case 'array': {
      const items = valueFor(schema.items ?? {}, known, name);
      return fc.array(items, { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) });
    }
    case 'object': {
      const properties = Object.entries(schema.properties ?? {}).filter(([, p]) => p.readOnly !== true);
      const record = Object.fromEntries(properties.map(([key, p]) => [key, valueFor(p, known, key)]));
      return fc.record(record, { requiredKeys: (schema.required ?? []).filter((key) => key in record) });
    }
    default:
      // A json field (no type): any JSON value, kept small.
      return fc.jsonValue({ maxDepth: 3 });
  }
}

function stringFor(schema: Schema, known: KnownData, name: string): fc.Arbitrary<string> {
  // Never a host but loopback: the server would call a webhook's URL.
  if (schema.format === 'uri' || name === 'url') return fc.constantFrom(known.webhookUrl, `${known.webhookUrl}?x=1`);
  if (schema.format === 'date-time') return fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (schema.format === 'date') return fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
  if (schema.format === 'email') return fc.stringMatching(/^[a-z]{1,10}$/).map((local) => `${local}@example.com`);
  if (schema.pattern !== undefined) {
    const maxLength = schema.maxLength ?? 200;
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= maxLength);
  }
  const minLength = schema.minLength ?? 0;
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 40, 40)) });
}
