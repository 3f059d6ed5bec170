/**
 * The JSON Schema that checks a schema file mapping an existing database (`database:
 * {existing: true}`): the published one, with names as a database spells them. Resources,
 * fields and relations take snake_case (and a field or relation an uppercase start): the table and
 * column names as they are, as long as GraphQL can take them (letters, digits, `_`, not starting
 * with `__`). Other names are mapped by `column` and `table`.
 */

/** A resource name of a mapped database: a path segment and the start of GraphQL names. */
export const MAPPED_RESOURCE_NAME = '^(?!__)[a-z_][a-zA-Z0-9_]{0,62}$';

/** A field or relation name of a mapped database: a GraphQL name. */
export const MAPPED_FIELD_NAME = '^(?!__)[A-Za-z_][A-Za-z0-9_]{0,62}$';

/** Whether a parsed document maps an existing database (and is checked by {@link mappedJsonSchema}). */
export function isMappedDocument(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'database' in value;
}

/** The published JSON Schema (as parsed), with the name patterns of mapped databases. */
export function mappedJsonSchema(published: unknown): object {
  const schema = structuredClone(published) as JsonObject;
  const resources = objectAt(schema, ['properties', 'resources']);
  objectAt(resources, ['propertyNames']).pattern = MAPPED_RESOURCE_NAME;
  const resource = objectAt(schema, ['$defs', 'resource', 'properties']);
  objectAt(resource, ['singular']).pattern = MAPPED_RESOURCE_NAME;
  objectAt(resource, ['fields', 'propertyNames']).pattern = MAPPED_FIELD_NAME;
  objectAt(resource, ['relations', 'propertyNames']).pattern = MAPPED_FIELD_NAME;
  // An enum type's values as the database has them (PG-13): GraphQL serves those that are not names as strings.
  objectAt(schema, ['$defs', 'field', 'properties', 'values', 'items']).pattern = '^[^\\u0000]{1,255}$';
  return schema;
}

type JsonObject = Record<string, unknown>;

/** The object at a path of the published schema, which restgraph ships: a miss is a programming error. */
function objectAt(value: JsonObject, path: readonly string[]): JsonObject {
  let current: unknown = value;
  for (const key of path) {
    current = typeof current === 'object' && current !== null ? (current as JsonObject)[key] : undefined;
  }
  if (typeof current !== 'object' || current === null) throw new Error(`the published JSON Schema has no ${path.join('.')}`);
  return current as JsonObject;
}
