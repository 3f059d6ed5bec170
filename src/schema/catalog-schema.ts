import pluralize from 'pluralize';
import { mappedType } from './catalog-field-type.js';
import type { ColumnCatalog, DatabaseCatalog, ForeignKeyCatalog, TableCatalog } from './database-catalog.js';
import { MAPPED_FIELD_NAME, MAPPED_RESOURCE_NAME } from './mapped-json-schema.js';
import { RESERVED_QUERY_PARAMETERS, RESERVED_RESOURCE_NAMES, type FieldDefinition, type RelationDefinition, type ResourceDefinition, type SchemaDefinition } from './schema-model.js';

/**
 * The schema `restgraph init --from <database-url>` writes for a database's catalog
 * (docs/existing-database.md): a resource per table or view, a field per column, relations both
 * ways per foreign key, and where each came from, for the comments of the file.
 */
export interface CatalogSchema {
  definition: SchemaDefinition;
  /** Where each resource came from, by resource name. */
  resourceNotes: Map<string, string>;
  /** Where each field came from, by `<resource>.<field>`. */
  fieldNotes: Map<string, string>;
  /** What the user should know: a table served read-only, a type served as text. */
  warnings: string[];
}

export function catalogSchema(catalog: DatabaseCatalog): CatalogSchema {
  const out: CatalogSchema = { definition: { database: { existing: true }, resources: {} }, resourceNotes: new Map(), fieldNotes: new Map(), warnings: [...catalog.warnings] };
  if (catalog.schema !== undefined) out.definition.database = { existing: true, schema: catalog.schema };
  const where = (name: string): string => (catalog.schema === undefined ? name : `${catalog.schema}.${name}`);
  const resourceOf = new Map<string, string>();
  const fieldOf = new Map<string, Map<string, string>>();
  const taken = new Set<string>();
  for (const table of catalog.tables) {
    const name = freeName(resourceName(table.name), taken);
    taken.add(name);
    resourceOf.set(table.name, name);
  }
  const resources = out.definition.resources;
  for (const table of catalog.tables) {
    const name = resourceOf.get(table.name) ?? table.name;
    const singular = pluralize.singular(name);
    const resource: ResourceDefinition = { table: table.name, singular, plural: singular === name ? pluralize.plural(singular) : name };
    const fields = new Map<string, string>();
    const fieldNames = new Set<string>();
    for (const column of table.columns) {
      const fieldName = freeName(fieldName_(column.name), fieldNames);
      fieldNames.add(fieldName);
      fields.set(column.name, fieldName);
    }
    fieldOf.set(table.name, fields);
    const keyed = table.kind === 'table' && table.primaryKey.length > 0;
    if (keyed) resource.key = table.primaryKey.map((c) => fields.get(c) ?? c);
    else resource.readOnly = true;
    const note = `from ${where(table.name)} (${table.kind})`;
    if (table.kind === 'view') out.resourceNotes.set(name, `${note}: read-only`);
    else if (!keyed) {
      out.resourceNotes.set(name, `${note}: no primary key, so read-only`);
      out.warnings.push(`${where(table.name)} has no primary key: served read-only (resource ${name})`);
    } else {
      const several = table.uniques.filter((u) => u.length > 1).map((u) => `unique (${u.join(', ')})`);
      out.resourceNotes.set(name, [`${note}, primary key (${table.primaryKey.join(', ')})`, ...several].join(', '));
    }
    resource.fields = {};
    for (const column of table.columns) {
      const fieldName = fields.get(column.name) ?? column.name;
      const { field, note: typeNote } = fieldOf_(table, column, catalog.dialect);
      if (fieldName !== column.name) field.column = column.name;
      resource.fields[fieldName] = field;
      const foreign = table.foreignKeys.filter((fk) => fk.columns.includes(column.name));
      const notes = [`from ${where(`${table.name}.${column.name}`)}`, column.dataType, ...columnFacts(table, column), ...foreign.map(foreignKeyNote), ...(typeNote === undefined ? [] : [typeNote])];
      out.fieldNotes.set(`${name}.${fieldName}`, notes.join(', '));
      if (typeNote?.startsWith('type ') === true) out.warnings.push(`${where(`${table.name}.${column.name}`)}: ${typeNote}`);
    }
    resources[name] = resource;
  }
  addRelations(catalog, resourceOf, fieldOf, resources, out.warnings);
  return out;
}

/** The field of a column: its type, and what the database says of it (NOT NULL, defaults, identity, unique). */
function fieldOf_(table: TableCatalog, column: ColumnCatalog, dialect: DatabaseCatalog['dialect']): { field: FieldDefinition; note?: string } {
  const { field, note } = mappedType(column, dialect);
  const generated = column.computed === true || column.identity === 'always' ? 'always' : column.identity !== undefined || column.default !== undefined ? 'byDefault' : undefined;
  if (generated !== undefined && table.kind === 'table') field.generated = generated;
  if (column.notNull && generated === undefined && table.kind === 'table') field.required = true;
  if (table.uniques.some((u) => u.length === 1 && u[0] === column.name)) field.unique = true;
  else if (table.indexes.some((i) => i[0] === column.name)) field.index = true;
  return note === undefined ? { field } : { field, note };
}

function columnFacts(table: TableCatalog, column: ColumnCatalog): string[] {
  const facts: string[] = [];
  if (column.notNull) facts.push('NOT NULL');
  if (column.identity !== undefined) facts.push(column.identity === 'always' ? 'identity (always)' : table.kind === 'table' && column.default === undefined ? 'filled by the database' : 'identity');
  if (column.computed === true) facts.push('computed');
  if (column.default !== undefined) facts.push(`default ${column.default}`);
  if (table.primaryKey.includes(column.name)) facts.push(table.primaryKey.length > 1 ? `primary key (${table.primaryKey.indexOf(column.name) + 1} of ${table.primaryKey.length})` : 'primary key');
  else if (table.uniques.some((u) => u.length === 1 && u[0] === column.name)) facts.push('unique');
  return facts;
}

function foreignKeyNote(fk: ForeignKeyCatalog): string {
  const onDelete = fk.onDelete === 'noAction' ? '' : ` ON DELETE ${fk.onDelete.replace(/[A-Z]/g, (c) => ` ${c}`).toUpperCase()}`;
  return `FK → ${fk.table}${fk.columns.length > 1 ? ` (${fk.columns.join(', ')})` : ''}${onDelete}`;
}

/** belongsTo on the table holding each foreign key, hasMany on the table it points at. */
function addRelations(
  catalog: DatabaseCatalog,
  resourceOf: ReadonlyMap<string, string>,
  fieldOf: ReadonlyMap<string, ReadonlyMap<string, string>>,
  resources: Record<string, ResourceDefinition>,
  warnings: string[],
): void {
  const names = (resource: ResourceDefinition): Set<string> => new Set([...Object.keys(resource.fields ?? {}), ...Object.keys(resource.relations ?? {})]);
  for (const table of catalog.tables) {
    const holderName = resourceOf.get(table.name);
    const holder = holderName === undefined ? undefined : resources[holderName];
    if (holderName === undefined || holder === undefined) continue;
    for (const fk of table.foreignKeys) {
      const targetName = resourceOf.get(fk.table);
      const target = targetName === undefined ? undefined : resources[targetName];
      const targetTable = catalog.tables.find((t) => t.name === fk.table);
      if (targetName === undefined || target === undefined || targetTable === undefined) {
        warnings.push(`${table.name} (${fk.columns.join(', ')}) references ${fk.table}, which is not read: no relation made (add it to --tables)`);
        continue;
      }
      const own = fieldOf.get(table.name);
      const theirs = fieldOf.get(fk.table);
      const foreignKey = fk.columns.map((c) => own?.get(c) ?? c);
      const pointed = (fk.referencedColumns.length > 0 ? fk.referencedColumns : targetTable.primaryKey).map((c) => theirs?.get(c) ?? c);
      const samePair = table.foreignKeys.filter((other) => other.table === fk.table).length > 1;
      const single = foreignKey.length === 1 ? (foreignKey[0] ?? '').replace(/_?(id|Id|ID)$/, '') : '';
      const belongsTo = freeName(single !== '' && single !== foreignKey[0] ? single : targetName, names(holder), `${targetName}_by_${foreignKey.join('_')}`);
      const relation: RelationDefinition = { belongsTo: targetName, foreignKey: foreignKey.length === 1 ? (foreignKey[0] ?? '') : foreignKey };
      if (pointed.join('\0') !== (target.key ?? []).join('\0')) relation.references = pointed;
      if (fk.onDelete !== 'noAction') relation.onDelete = fk.onDelete;
      holder.relations = { ...holder.relations, [belongsTo]: relation };
      const plural = holder.plural ?? holderName;
      const hasMany = freeName(samePair ? `${plural}_by_${belongsTo}` : plural, names(target), `${plural}_by_${belongsTo}`);
      target.relations = { ...target.relations, [hasMany]: { hasMany: holderName, foreignKey: relation.foreignKey } };
    }
  }
}

/** A table's name as a resource name: as it is when it can be one, else made one (`table:` keeps the real name). */
function resourceName(table: string): string {
  if (new RegExp(MAPPED_RESOURCE_NAME).test(table) && !RESERVED_RESOURCE_NAMES.includes(table) && !/^v[0-9]+$/.test(table)) return table;
  const name = identifier(table).replace(/^[A-Z]/, (c) => c.toLowerCase());
  return /^[a-z_]/.test(name) && !RESERVED_RESOURCE_NAMES.includes(name) && !/^v[0-9]+$/.test(name) ? name : `table_${name}`.slice(0, 63);
}

/** A column's name as a field name: as it is when GraphQL and the query string can take it, else made one (`column:` keeps the real name). */
function fieldName_(column: string): string {
  if (new RegExp(MAPPED_FIELD_NAME).test(column) && !RESERVED_QUERY_PARAMETERS.includes(column)) return column;
  const name = identifier(column);
  return (/^[A-Za-z]/.test(name) ? name : `_${name}`).replace(/^__+/, '_').slice(0, 62) + (RESERVED_QUERY_PARAMETERS.includes(name) ? '_' : '');
}

/** Letters, digits and `_` only. */
function identifier(name: string): string {
  return name.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+(?=[A-Za-z])/, '') || '_';
}

/** `name`, or when taken `fallback`, or either with a number: a name not in `taken`. */
function freeName(name: string, taken: ReadonlySet<string>, fallback = name): string {
  if (!taken.has(name)) return name;
  if (!taken.has(fallback)) return fallback;
  for (let i = 2; ; i++) if (!taken.has(`${fallback}_${i}`)) return `${fallback}_${i}`;
}
