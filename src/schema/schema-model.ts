import type { AccountsDefinition, AccountsModel } from './accounts-model.js';
import type { RateLimitPolicy } from './rate-limit-policy.js';

/**
 * The compiled, validated form of a schema file: what every other layer reads.
 * Built once at start-up by {@link compileSchema}; frozen afterwards.
 */

export type FieldType = 'string' | 'integer' | 'number' | 'decimal' | 'boolean' | 'datetime' | 'date' | 'time' | 'enum' | 'json' | 'file';
export type StringFormat = 'email' | 'uri' | 'uuid' | 'hostname' | 'ipv4' | 'ipv6';
/**
 * Mapped databases only: `int64` (integer fields) a bigint column, sent as a JSON string beyond
 * 2^53; `base64` (string fields) a bytea or BLOB column; `array` (json fields) a PostgreSQL array
 * column, read and written as a JSON array.
 */
export type FieldFormat = StringFormat | 'int64' | 'base64' | 'array';
export type OnDelete = 'restrict' | 'cascade' | 'setNull';

/** A field as written in the schema file. */
export interface FieldDefinition {
  type: FieldType;
  description?: string;
  /** Why the field is deprecated and what to use instead; it keeps working. */
  deprecated?: string;
  required?: boolean;
  unique?: boolean;
  index?: boolean;
  /** Indexed for full-text search (string fields): `?search=` and GraphQL `search:`. */
  searchable?: boolean;
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: FieldFormat;
  values?: string[];
  default?: unknown;
  references?: string;
  onDelete?: OnDelete;
  /** The first version that has the field (earlier versions do not show or accept it). */
  addedIn?: string;
  /** The version from which the field is deprecated (shown as such; it keeps working). */
  deprecatedIn?: string;
  /** The first version without the field (its values stay stored for earlier versions). */
  removedIn?: string;
  /**
   * The field's former name: the database column is renamed once, its data kept. With
   * `renamedIn`, the versions before it show and accept the old name; without, every version
   * shows the new one (an in-place rename: a breaking change for clients).
   */
  renamedFrom?: string;
  /** The version that introduced the current name (with `renamedFrom`). */
  renamedIn?: string;
  /** File fields: the largest file, in bytes or as `5MB` (docs/files.md). */
  maxSize?: number | string;
  /** File fields: the media types taken (`image/png`, `image/*`), as sniffed from the bytes. */
  accept?: string[];
  /** File fields: a list of files. */
  multiple?: boolean;
  /** File fields with `multiple`: the most files the list holds. */
  maxFiles?: number;
  /** File fields: the thumbnail sizes served (`100x100` fit, `100x100c` crop); replaces the default list. */
  thumbs?: string[];
  /** Who may see the field: an access rule, or a rule expression over the record (docs/auth.md#field-access). */
  read?: FieldAccessDefinition;
  /** Who may set the field: an access rule, or a rule expression over the record as stored. */
  write?: FieldAccessDefinition;
  /** Mapped databases (docs/existing-database.md): the column, when its name is not the field's. */
  column?: string;
  /** Mapped databases: the database fills the column (see {@link GeneratedBy}). */
  generated?: GeneratedBy;
  /** Decimal fields: the most digits, and how many of them after the point (numeric(20,2)). */
  precision?: number;
  scale?: number;
}

/**
 * Who fills a column of a mapped database: `always` the database, never a client (identity
 * ALWAYS, computed columns); `byDefault` the database when a create leaves it out (defaults,
 * serial, identity BY DEFAULT); `uuid` restgraph, a random UUID when a create leaves it out.
 */
export type GeneratedBy = 'always' | 'byDefault' | 'uuid';

/** An access rule (`public`, `authenticated`, a list of scopes), or a rule expression (any other string). */
export type FieldAccessDefinition = string | string[];

/** The operations row rules are written for (docs/auth.md#rules). */
export type RuleOperation = 'list' | 'read' | 'create' | 'update' | 'delete';
export const RULE_OPERATIONS: readonly RuleOperation[] = ['list', 'read', 'create', 'update', 'delete'];

export interface RelationDefinition {
  hasMany?: string;
  belongsTo?: string;
  /** The field holding the other side's key; mapped databases: the fields of a composite foreign key, in key order. */
  foreignKey: string | string[];
  /** Mapped databases: the fields of the belongsTo side the key points at, when not its key (a unique constraint). */
  references?: string[];
  /** Mapped databases: what the database's foreign key does when the referenced row is deleted (reported, not re-implemented). */
  onDelete?: 'noAction' | 'restrict' | 'cascade' | 'setNull' | 'setDefault';
}

/** `public`, `authenticated`, or scopes of which a token needs any one. */
export type AccessRuleDefinition = 'public' | 'authenticated' | string[];

export type AccessOperation = 'read' | 'create' | 'update' | 'delete';

/** REST operations a resource can rate-limit on their own; `read` and `write` name groups of them. */
export type RestOperation = 'list' | 'get' | 'create' | 'replace' | 'update' | 'delete';
export const REST_OPERATIONS: readonly RestOperation[] = ['list', 'get', 'create', 'replace', 'update', 'delete'];
export const OPERATION_GROUPS: Readonly<Record<'read' | 'write', readonly RestOperation[]>> = {
  read: ['list', 'get'],
  write: ['create', 'replace', 'update', 'delete'],
};

/** Quotas as written: `"<count>/<window>"`, like `100/1m`. */
export type RateLimitDefinition = string;

export interface ResourceDefinition {
  description?: string;
  /** Mapped databases: the table or view (default: the resource name). */
  table?: string;
  /** Mapped databases: the primary key's fields, in key order (several: a composite key). */
  key?: string[];
  /** Mapped databases: served for reading only (views, tables without a primary key). */
  readOnly?: boolean;
  /** The plural of GraphQL list fields and reverse relations, when the resource name is not a plural (mapped tables: `rental`). */
  plural?: string;
  /** One record, not a collection: GET, PUT and PATCH on `/<name>` (json-server's `/profile`). */
  singleton?: boolean;
  singular?: string;
  access?: Partial<Record<AccessOperation | 'write', AccessRuleDefinition>>;
  owner?: string;
  /** Row rules per operation: filter expressions over the record and the credential. */
  rules?: Partial<Record<RuleOperation, string>>;
  /** Presets: fields filled from the credential on create (`orgId: "@auth.claims.org"`). */
  set?: Record<string, string>;
  fields?: Record<string, FieldDefinition>;
  relations?: Record<string, RelationDefinition>;
  /** Quotas of this resource's REST operations, on top of the server-wide ones. */
  rateLimits?: Partial<Record<RestOperation | 'read' | 'write', RateLimitDefinition>>;
  /** The first version that serves the resource. */
  addedIn?: string;
  /** The version from which the resource is deprecated. */
  deprecatedIn?: string;
  /** The first version that no longer serves it (its rows stay for earlier versions). */
  removedIn?: string;
}

/** A version as written: its name, or the name with its deprecation dates. */
export type VersionDefinition = string | { name: string; deprecated?: string; sunset?: string; description?: string };

/** Server-wide quotas (the environment overrides them). */
export interface RateLimitsDefinition {
  /** Requests per window per credential (per address when anonymous). */
  default?: RateLimitDefinition;
  /** Requests per window per address, for requests without a credential. */
  anonymous?: RateLimitDefinition;
  /** GraphQL cost points per window per credential. */
  graphql?: RateLimitDefinition;
}

/** The schema file's document, after it passed the published JSON Schema. */
/** A schema that maps an existing database: restgraph changes none of its tables (docs/existing-database.md). */
export interface DatabaseDefinition {
  existing: true;
  /** PostgreSQL: the schema holding the tables (default public). */
  schema?: string;
}

export interface SchemaDefinition {
  /** Set when the resources are tables of an existing database rather than tables restgraph creates. */
  database?: DatabaseDefinition;
  versions?: VersionDefinition[];
  rateLimits?: RateLimitsDefinition;
  /** Which resource holds end-user accounts (docs/accounts.md). */
  accounts?: AccountsDefinition;
  resources: Record<string, ResourceDefinition>;
}

export interface FieldModel extends FieldDefinition {
  name: string;
  required: boolean;
  unique: boolean;
  /** id, createdAt, updatedAt: assigned by the server, never written by clients. */
  system: boolean;
}

export interface RelationModel {
  name: string;
  kind: 'hasMany' | 'belongsTo';
  /** Resource name of the other side. */
  target: string;
  /** hasMany: the field on target holding our id. belongsTo: our field holding target's id. */
  foreignKey: string;
}

export interface ResourceModel {
  /** Plural name, as in the URL: `users`. */
  name: string;
  /** Singular name: `user`. */
  singular: string;
  /** GraphQL type name: `User`. */
  typeName: string;
  description?: string;
  /** Every field, system fields first (id, createdAt, updatedAt), then declared order. */
  fields: ReadonlyMap<string, FieldModel>;
  /** Declared (writable) fields only, in declared order. */
  writableFields: readonly FieldModel[];
  relations: ReadonlyMap<string, RelationModel>;
  /** What each operation needs; `write` in the file sets create, update and delete. */
  access: Readonly<Record<AccessOperation, AccessRule>>;
  /** Field holding the owner's subject, when rows belong to tokens. */
  owner?: string;
  /** Row rules as written (compiled and checked at start by core/access-rules; `read` defaults to `list`). */
  rules: Readonly<Partial<Record<RuleOperation, string>>>;
  /** Presets as written: field name → reference (`@auth.sub`). */
  presets: Readonly<Record<string, string>>;
  /** One record (id {@link SINGLETON_ID}), served at `/<name>` with GET, PUT and PATCH: no list, create or delete. */
  singleton: boolean;
  /** Quotas of REST operations on this resource (named `<resource>.<operation or group>`). */
  rateLimits: Readonly<Partial<Record<RestOperation, RateLimitPolicy>>>;
  /** Set on the resources of a schema that maps an existing database: its table, key and columns (also in {@link SchemaModel.mapping}). */
  mapping?: ResourceMapping;
}

/** How the resources of a mapped schema lie in the database (compiled by database-mapping.ts). */
export interface DatabaseMapping {
  /** PostgreSQL schema of the tables (undefined: the database's default; SQLite has none). */
  schema?: string;
  resources: ReadonlyMap<string, ResourceMapping>;
}

export interface ResourceMapping {
  /** PostgreSQL schema of the table, as in {@link DatabaseMapping.schema}. */
  schema?: string;
  table: string;
  /** Key fields in key order; empty for read-only resources without one. */
  key: readonly string[];
  readOnly: boolean;
  plural: string;
  /** Field name → column name, for every field. */
  columns: ReadonlyMap<string, string>;
  /** The fields the database (or restgraph, `uuid`) fills when a create leaves them out. */
  generated: ReadonlyMap<string, GeneratedBy>;
  /** Each relation's foreign key, by relation name. */
  relations: ReadonlyMap<string, RelationMapping>;
}

/** A relation's foreign key: `fields` of the side holding it point at `targetFields` of the other (its key, or a unique constraint). */
export interface RelationMapping {
  kind: 'hasMany' | 'belongsTo';
  target: string;
  /** On the belongsTo side (this resource for belongsTo, the target for hasMany), in key order. */
  fields: readonly string[];
  /** On the side pointed at, in the same order. */
  targetFields: readonly string[];
  onDelete?: RelationDefinition['onDelete'];
}

export type AccessRule = { kind: 'public' } | { kind: 'authenticated' } | { kind: 'scopes'; anyOf: readonly string[] };

/** An API version and its life cycle. */
export interface VersionModel {
  name: string;
  /** Position in `versions`, oldest 0: versions compare by it. */
  index: number;
  description?: string;
  /** When it was (or will be) deprecated: `Deprecation` header (RFC 9745). */
  deprecatedAt?: Date;
  /** When it stops being served: `Sunset` header (RFC 8594). */
  sunsetAt?: Date;
  /** The next version, which deprecated responses link to. */
  successor?: string;
}

export interface SchemaModel {
  /** Oldest first; the last is the latest, served at unversioned paths. */
  versions: readonly string[];
  /** Each version's life cycle, by name. */
  versionInfo: ReadonlyMap<string, VersionModel>;
  latestVersion: string;
  resources: ReadonlyMap<string, ResourceModel>;
  /** Server-wide quotas declared in the file (named `default`, `anonymous`, `graphql`). */
  rateLimits: Readonly<Partial<Record<keyof RateLimitsDefinition, RateLimitPolicy>>>;
  /** End-user accounts: the resource that holds them, its identifier and token claims (docs/accounts.md). */
  accounts?: AccountsModel;
  /** The definition it was compiled from (recorded by migrations). */
  definition: SchemaDefinition;
  /** Set when the schema maps an existing database: tables, columns and keys by resource. */
  mapping?: DatabaseMapping;
  /** The file it was read from, to place problems found after compiling (rule expressions, checked by the core). */
  source?: SchemaSource;
}

export interface SchemaSource {
  file: string;
  /** Line and column where a dotted path (`resources.posts.rules.list`) is written, when known. */
  position(path: string): { line: number; column: number } | undefined;
}

/** The id of a singleton resource's one record. */
export const SINGLETON_ID = 1;

export const SYSTEM_FIELDS: readonly FieldModel[] = Object.freeze([
  { name: 'id', type: 'integer', required: false, unique: true, system: true, description: 'Assigned by the server.' },
  { name: 'createdAt', type: 'datetime', required: false, unique: false, system: true, description: 'When the row was created.' },
  { name: 'updatedAt', type: 'datetime', required: false, unique: false, system: true, description: 'When the row last changed.' },
]);

/** Query parameters of list requests; no field may take one of these names. */
export const RESERVED_QUERY_PARAMETERS: readonly string[] = ['sort', 'limit', 'after', 'offset', 'count', 'fields', 'include', 'search'];

/**
 * Query parameters reserved after fields could already take their names: a field may still be
 * named so (schemas and db.json files written before). On its resource the parameter keeps
 * filtering that field, and the resource cannot have searchable fields.
 */
export const FIELD_NAMED_QUERY_PARAMETERS: readonly string[] = ['search'];

/** The fields of a resource indexed for full-text search, in declared order. */
export function searchableFields(resource: ResourceModel): FieldModel[] {
  let fields = searchableCache.get(resource);
  if (fields === undefined) {
    fields = resource.writableFields.filter((f) => f.searchable === true);
    searchableCache.set(resource, fields);
  }
  return fields;
}

const searchableCache = new WeakMap<ResourceModel, FieldModel[]>();

/**
 * Query parameters of list requests added after fields could take their names: a field may still
 * have one (schemas and json-server files that use it keep loading, their data kept), and lists of
 * its resource read the parameter as the parameter; the field is filtered with `<name>[eq]=` and
 * in filter expressions.
 */
export const LATER_QUERY_PARAMETERS: readonly string[] = ['filter'];

/** First path segments restgraph keeps for itself; no resource may take one of these names. */
export const RESERVED_RESOURCE_NAMES: readonly string[] = [
  'graphql', 'docs', 'healthz', 'readyz', 'metrics', 'openapi', 'webhooks', 'events', 'tokens', 'admin', 'auth',
];

/** The resource named `name`. Names come from the compiled schema, so a miss is a programming error. */
export function resourceNamed(schema: SchemaModel, name: string): ResourceModel {
  const resource = schema.resources.get(name);
  if (resource === undefined) throw new Error(`unknown resource ${name}`);
  return resource;
}

/** The field named `name` of a resource. Names are checked against the schema first, so a miss is a programming error. */
export function fieldNamed(resource: ResourceModel, name: string): FieldModel {
  const field = resource.fields.get(name);
  if (field === undefined) throw new Error(`unknown field ${resource.name}.${name}`);
  return field;
}

const canonicalCache = new WeakMap<ResourceModel, FieldModel[]>();

/**
 * id, then declared fields, then createdAt and updatedAt: the key order of every response. Each
 * field once: a mapped table's column named `id` is a declared field, in its declared place.
 */
export function canonicalFields(resource: ResourceModel): FieldModel[] {
  let fields = canonicalCache.get(resource);
  if (fields === undefined) {
    const all = [...resource.fields.values()];
    fields = [
      ...all.filter((f) => f.system && f.name === 'id'),
      ...all.filter((f) => !f.system),
      ...all.filter((f) => f.system && f.name !== 'id'),
    ];
    canonicalCache.set(resource, fields);
  }
  return fields;
}

/** Declared fields may hold null even when required: rows older than the rule keep what they had. */
export function isNullable(resource: ResourceModel, fieldName: string): boolean {
  const field = resource.fields.get(fieldName);
  return field !== undefined && !field.system;
}
