/**
 * What the console knows of the schema, read from the public `GET /openapi.json`: each resource's
 * record schema carries `x-restgraph-resource`, each field `x-restgraph-type` (and references
 * `x-restgraph-references`, `x-restgraph-on-delete`); the `<Type>Create` schema has the write
 * constraints and the required list. Nothing else is asked of the server.
 */

export type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'date' | 'datetime' | 'enum' | 'json' | 'file';
export type OnDelete = 'restrict' | 'cascade' | 'setNull';

export interface FieldInfo {
  name: string;
  type: FieldType;
  /** Set by the server (id, createdAt, updatedAt): shown, never edited. */
  readOnly: boolean;
  /** Required on create. */
  required: boolean;
  enumValues?: string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  pattern?: string;
  default?: unknown;
  description?: string;
  references?: string;
  onDelete?: OnDelete;
  /**
   * Readable by this token only on the rows a rule admits (left out of the others): it cannot be
   * filtered, sorted or grouped by (the server refuses that with a 403).
   */
  readRule?: string;
  /** A file field (docs/files.md): uploaded and downloaded at its own route, never in JSON bodies. */
  file?: FileFieldInfo;
}

/** What the console knows of a file field, from the record schema and its download route. */
export interface FileFieldInfo {
  /** A list of files (each at its own url), rather than one. */
  multiple: boolean;
  /** With `multiple`: the most files the list holds. */
  maxFiles?: number;
  /** The thumbnail sizes the server renders (`?thumb=`), in the schema's order. */
  thumbs: string[];
}

/** A hasMany relation: the rows of `target` whose `foreignKey` holds this record's id. */
export interface RelationInfo {
  name: string;
  target: string;
  foreignKey: string;
}

export interface ResourceInfo {
  /** The resource's name, as in its path (`users`). */
  name: string;
  /** One record, in words (`user`). */
  singular: string;
  description?: string;
  fields: FieldInfo[];
  /** Its hasMany relations (`x-restgraph-foreign-key` on an array of another resource's records). */
  hasMany: RelationInfo[];
}

/** A field of another resource that refers to this one, and what deleting a row here does to it. */
export interface Referrer {
  resource: string;
  field: string;
  onDelete: OnDelete;
}

export interface SchemaInfo {
  resources: Map<string, ResourceInfo>;
  /** Event types of /v1/events, in schema order. */
  eventTypes: string[];
  /** Every scope an operation names, and `admin`: the choices when creating an API key. */
  scopes: string[];
  /** The schema has accounts (docs/accounts.md): the field they sign in with (`email`). */
  accounts?: { identifier: string };
}

/** Filter operators per field type (docs/list-queries.md). */
export const OPERATORS: Readonly<Record<FieldType, readonly string[]>> = {
  string: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'startsWith', 'isNull'],
  integer: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'isNull'],
  number: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'isNull'],
  datetime: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'isNull'],
  date: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'isNull'],
  enum: ['eq', 'ne', 'in', 'isNull'],
  boolean: ['eq', 'ne', 'isNull'],
  json: ['isNull'],
  file: ['isNull'],
};

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  pattern?: string;
  default?: unknown;
  description?: string;
  readOnly?: boolean;
  required?: string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  maxItems?: number;
  anyOf?: JsonSchema[];
  $ref?: string;
  'x-restgraph-resource'?: string;
  'x-restgraph-foreign-key'?: string;
  'x-restgraph-type'?: FieldType;
  'x-restgraph-references'?: string;
  'x-restgraph-on-delete'?: OnDelete;
}

interface OpenApiOperation {
  security?: Record<string, string[]>[];
  parameters?: { name: string; schema?: JsonSchema }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function fieldOf(name: string, record: JsonSchema, write: JsonSchema | undefined, required: ReadonlySet<string>): FieldInfo | undefined {
  const type = record['x-restgraph-type'];
  if (type === undefined) return undefined;
  // The write schema carries the constraints (bounds, lengths, enum values, defaults).
  const facts: JsonSchema = { ...record, ...write };
  const field: FieldInfo = { name, type, readOnly: write === undefined || write.readOnly === true, required: required.has(name) };
  if (facts.enum !== undefined) field.enumValues = facts.enum.filter((value): value is string => typeof value === 'string');
  if (facts.minimum !== undefined && Math.abs(facts.minimum) < Number.MAX_SAFE_INTEGER) field.minimum = facts.minimum;
  if (facts.maximum !== undefined && Math.abs(facts.maximum) < Number.MAX_SAFE_INTEGER) field.maximum = facts.maximum;
  if (facts.minLength !== undefined) field.minLength = facts.minLength;
  if (facts.maxLength !== undefined) field.maxLength = facts.maxLength;
  if (facts.format !== undefined) field.format = facts.format;
  if (facts.pattern !== undefined) field.pattern = facts.pattern;
  if (facts.default !== undefined) field.default = facts.default;
  if (record.description !== undefined) field.description = record.description;
  if (record['x-restgraph-references'] !== undefined) field.references = record['x-restgraph-references'];
  if (record['x-restgraph-on-delete'] !== undefined) field.onDelete = record['x-restgraph-on-delete'];
  return field;
}

/** The record schema's hasMany relations: arrays of another resource's records, with their foreign key. */
function hasManyOf(record: JsonSchema, schemas: Record<string, JsonSchema>): RelationInfo[] {
  const found: RelationInfo[] = [];
  for (const [name, property] of Object.entries(record.properties ?? {})) {
    const foreignKey = property['x-restgraph-foreign-key'];
    const targetType = property.type === 'array' ? property.items?.$ref?.replace('#/components/schemas/', '') : undefined;
    const target = targetType === undefined ? undefined : schemas[targetType]?.['x-restgraph-resource'];
    if (foreignKey !== undefined && target !== undefined) found.push({ name, target, foreignKey });
  }
  return found;
}

/** A file field's facts: a list when its value is an array; the thumbnail sizes its download route takes (`?thumb=`). */
function fileFieldOf(document: OpenApiDocument, resource: string, field: string, property: JsonSchema): FileFieldInfo {
  const types = Array.isArray(property.type) ? property.type : [property.type];
  const list = property.anyOf?.find((option) => option.type === 'array') ?? (types.includes('array') ? property : undefined);
  const multiple = list !== undefined;
  const download = document.paths[`/${resource}/{id}/${field}${multiple ? '/{key}' : ''}`]?.get;
  const thumb = download?.parameters?.find((parameter) => parameter.name === 'thumb');
  const thumbs = (thumb?.schema?.enum ?? []).filter((value): value is string => typeof value === 'string');
  return { multiple, ...(list?.maxItems === undefined ? {} : { maxFiles: list.maxItems }), thumbs };
}

/** Reads the resources, their fields, the event types and the scopes out of an OpenAPI document. */
export function schemaInfo(document: OpenApiDocument): SchemaInfo {
  const schemas = document.components.schemas;
  const resources = new Map<string, ResourceInfo>();
  for (const [typeName, record] of Object.entries(schemas)) {
    const name = record['x-restgraph-resource'];
    if (name === undefined) continue;
    // A singleton (one record at /<name>, no POST there) is not a table: the console leaves it out for now.
    if (document.paths[`/${name}`]?.post === undefined) continue;
    const create = schemas[`${typeName}Create`];
    const required = new Set(create?.required ?? []);
    const fields: FieldInfo[] = [];
    for (const [fieldName, property] of Object.entries(record.properties ?? {})) {
      const field = fieldOf(fieldName, property, create?.properties?.[fieldName], required);
      if (field?.type === 'file') field.file = fileFieldOf(document, name, fieldName, property);
      if (field !== undefined) fields.push(field);
    }
    // The schema's own fields first, after the id; when rows were made and changed last.
    const stamps = new Set(['createdAt', 'updatedAt']);
    fields.sort((a, b) => Number(stamps.has(a.name)) - Number(stamps.has(b.name)));
    resources.set(name, { name, singular: lowerFirst(typeName), ...(record.description === undefined ? {} : { description: record.description }), fields, hasMany: hasManyOf(record, schemas) });
  }
  const eventParameter = document.paths['/v1/events']?.get?.parameters?.find((parameter) => parameter.name === 'types');
  const eventTypes = (eventParameter?.schema?.items?.enum ?? []).filter((value): value is string => typeof value === 'string');
  const scopes = new Set<string>(['admin']);
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      for (const requirement of operation.security ?? []) for (const list of Object.values(requirement)) for (const scope of list) scopes.add(scope);
    }
  }
  const accounts = accountsOf(document);
  return { resources, eventTypes, scopes: [...scopes].sort(), ...(accounts === undefined ? {} : { accounts }) };
}

/** Whether the server has accounts, and their sign-in field: the first required member of `POST /v1/auth/sign-in`'s body besides the password. */
export function accountsOf(document: OpenApiDocument): { identifier: string } | undefined {
  const body = document.paths['/v1/auth/sign-in']?.post?.requestBody?.content?.['application/json']?.schema;
  const identifier = body?.required?.find((name) => name !== 'password');
  return identifier === undefined ? undefined : { identifier };
}

/** The fields of other resources (and of this one) that refer to `resource`. */
export function referrersOf(schema: SchemaInfo, resource: string): Referrer[] {
  const found: Referrer[] = [];
  for (const other of schema.resources.values()) {
    for (const field of other.fields) {
      if (field.references === resource) found.push({ resource: other.name, field: field.name, onDelete: field.onDelete ?? 'restrict' });
    }
  }
  return found;
}

/** The resource an event type belongs to (`user.created` → users). */
export function resourceOfEventType(schema: SchemaInfo, type: string): ResourceInfo | undefined {
  const singular = type.slice(0, type.lastIndexOf('.'));
  for (const resource of schema.resources.values()) if (resource.singular === singular) return resource;
  return undefined;
}

export type { OpenApiDocument };

/** Names that usually say which row a record is, best first. */
const LABEL_NAMES = ['name', 'title', 'label', 'displayName', 'fullName', 'username', 'email', 'slug', 'sku', 'code'];

/**
 * The field that names a row of `resource` for people (a reference picker searches it, related
 * rows show it): a string field called name, title, label and the like, else its first short
 * string field; none when it has no string field.
 */
export function labelFieldOf(resource: ResourceInfo): FieldInfo | undefined {
  const strings = resource.fields.filter((field) => field.type === 'string');
  for (const wanted of LABEL_NAMES) {
    const found = strings.find((field) => field.name.toLowerCase() === wanted.toLowerCase());
    if (found !== undefined) return found;
  }
  return strings.find((field) => field.maxLength !== undefined && field.maxLength <= 500) ?? strings[0];
}
