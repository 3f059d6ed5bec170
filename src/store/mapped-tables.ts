import { OperationNodeTransformer, sql, TableNode, type AliasedRawBuilder, type KyselyPlugin, type RawBuilder } from 'kysely';
import { canonicalFields, fieldNamed, type ResourceModel } from '../schema/schema-model.js';
import { keyFields, recordKeyParts, type RecordId } from '../schema/record-key.js';

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

/**
 * The table writes name, as Kysely's builders take it: the resource's name (an identifier). A
 * mapped table's own name may hold `.` or ` as `, which Kysely would parse in a string: the
 * statement names it through {@link writeTablePlugin} instead, as one identifier.
 */
export function writeTable(resource: ResourceModel): string {
  return resource.name;
}

/** Puts a mapped table (and its schema) in place of {@link writeTable}'s name in a write statement; no names are parsed. */
export function writeTablePlugin(resource: ResourceModel): KyselyPlugin {
  let plugin = writePlugins.get(resource);
  if (plugin === undefined) {
    const transformer = new MappedTableTransformer(resource);
    plugin = { transformQuery: (args) => transformer.transformNode(args.node), transformResult: (args) => Promise.resolve(args.result) };
    writePlugins.set(resource, plugin);
  }
  return plugin;
}

const writePlugins = new WeakMap<ResourceModel, KyselyPlugin>();

class MappedTableTransformer extends OperationNodeTransformer {
  readonly #resource: ResourceModel;
  readonly #table: TableNode | undefined;

  constructor(resource: ResourceModel) {
    super();
    this.#resource = resource;
    const mapping = resource.mapping;
    if (mapping !== undefined) this.#table = mapping.schema === undefined ? TableNode.create(mapping.table) : TableNode.createWithSchema(mapping.schema, mapping.table);
  }

  protected override transformTable(node: TableNode): TableNode {
    const named = node.table;
    if (this.#table !== undefined && named.schema === undefined && named.identifier.name === this.#resource.name) return this.#table;
    return super.transformTable(node);
  }
}

/** A column of the resource's table in a statement, as one identifier (a mapped column's name may hold `.`). */
export function columnRef(resource: ResourceModel, field: string): RawBuilder<unknown> {
  return sql.id(columnOf(resource, field));
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

/** The columns of the resource's key, in key order, as identifiers. */
export function keyColumns(resource: ResourceModel): RawBuilder<unknown>[] {
  return keyFields(resource).map((name) => columnRef(resource, name));
}

/** Values keyed by field name, keyed by their columns instead (a mapped table's). */
export function columnsOf(resource: ResourceModel, values: Record<string, unknown>): Record<string, unknown> {
  if (columnsAreFields(resource)) return values;
  const byColumn: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) byColumn[columnOf(resource, name)] = value;
  return byColumn;
}

/** What a write returns: the row's columns under the fields' names (identifiers, never parsed). */
export function returnedColumns(resource: ResourceModel): (string | AliasedRawBuilder<unknown, string>)[] {
  const names = canonicalFields(resource).map((f) => f.name);
  if (resource.mapping === undefined) return names;
  return names.map((name) => sql.id(columnOf(resource, name)).as(name));
}

/**
 * Whether a mapped key's integer parts fit their columns (`int32Integers`: a non-int64 integer
 * column holds 32 bits); a key past them names no row: a 404, not the database's range error.
 */
export function keyFits(resource: ResourceModel, id: RecordId, int32Integers: boolean): boolean {
  if (!int32Integers) return true;
  const parts = recordKeyParts(resource, id);
  return keyFields(resource).every((name, i) => {
    const field = fieldNamed(resource, name);
    const part = parts[i];
    return field.type !== 'integer' || field.format === 'int64' || (typeof part === 'number' && part >= -2147483648 && part <= 2147483647);
  });
}
