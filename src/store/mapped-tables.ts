import { sql, type AliasedRawBuilder } from 'kysely';
import { canonicalFields, type ResourceModel } from '../schema/schema-model.js';
import { keyFields } from '../schema/record-key.js';

/**
 * Where a resource's rows lie: the table named after the resource (the tables restgraph creates),
 * or a mapped database's own table and columns (docs/existing-database.md). Reads select from
 * {@link readSource}, which shows the table under the resource's name with its columns under the
 * fields' names, so every read statement is written in field names; writes address the real
 * table ({@link writeTable}) and columns ({@link columnOf}).
 */

/** What a read selects from: the resource's name, or its mapped table aliased as it (through a derived table when columns are named otherwise). */
export function readSource(resource: ResourceModel): string | AliasedRawBuilder<unknown, string> {
  const mapping = resource.mapping;
  if (mapping === undefined) return resource.name;
  let source = readSources.get(resource);
  if (source === undefined) {
    const table = mapping.schema === undefined ? sql.id(mapping.table) : sql.id(mapping.schema, mapping.table);
    const fields = canonicalFields(resource);
    const renamed = fields.some((f) => columnOf(resource, f.name) !== f.name);
    // PostgreSQL and SQLite both flatten such a derived table into the query: indexes of the
    // table serve its filters and sorts as they would on the table itself.
    source = renamed
      ? sql`(select ${sql.join(fields.map((f) => sql`${sql.id(columnOf(resource, f.name))} as ${sql.id(f.name)}`))} from ${table})`.as(resource.name)
      : sql`${table}`.as(resource.name);
    readSources.set(resource, source);
  }
  return source;
}

const readSources = new WeakMap<ResourceModel, AliasedRawBuilder<unknown, string>>();

/** The table writes address: `schema.table` of a mapped resource, else the resource's name. */
export function writeTable(resource: ResourceModel): string {
  const mapping = resource.mapping;
  if (mapping === undefined) return resource.name;
  return mapping.schema === undefined ? mapping.table : `${mapping.schema}.${mapping.table}`;
}

/** The column of a field in its table. */
export function columnOf(resource: ResourceModel, field: string): string {
  return resource.mapping?.columns.get(field) ?? field;
}

/** Whether the resource's columns are the fields' names (its writes need no renaming). */
export function columnsAreFields(resource: ResourceModel): boolean {
  const mapping = resource.mapping;
  if (mapping === undefined) return true;
  for (const [field, column] of mapping.columns) if (field !== column) return false;
  return true;
}

/** The columns of the resource's key, in key order. */
export function keyColumns(resource: ResourceModel): string[] {
  return keyFields(resource).map((name) => columnOf(resource, name));
}

/** Values keyed by field name, keyed by their columns instead (a mapped table's). */
export function columnsOf(resource: ResourceModel, values: Record<string, unknown>): Record<string, unknown> {
  if (columnsAreFields(resource)) return values;
  const byColumn: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) byColumn[columnOf(resource, name)] = value;
  return byColumn;
}

/** What a write returns: the row's columns under the fields' names. */
export function returnedColumns(resource: ResourceModel): string[] {
  const names = canonicalFields(resource).map((f) => f.name);
  if (columnsAreFields(resource)) return names;
  return names.map((name) => `${columnOf(resource, name)} as ${name}`);
}
