import type { SchemaProblem } from '../start-up-errors.js';
import type { DatabaseCatalog } from './database-catalog.js';
import type { SchemaModel } from './schema-model.js';

/** What serving a mapped schema finds when it compares the schema with the database's catalog. */
export interface MappedTableCheck {
  /** Tables and columns the schema names that the database lacks: serving is refused. */
  problems: SchemaProblem[];
  /** Columns of served tables that the schema does not name (`table.column`): served without them. */
  unnamed: string[];
}

/**
 * Compares a mapped schema with the database it maps, read from the catalog (nothing is changed
 * on either side): each resource's table must be there with every column its fields name.
 */
export function checkMappedTables(schema: SchemaModel, catalog: DatabaseCatalog): MappedTableCheck {
  const problems: SchemaProblem[] = [];
  const unnamed: string[] = [];
  for (const [name, mapping] of schema.mapping?.resources ?? []) {
    const where = catalog.schema === undefined ? mapping.table : `${catalog.schema}.${mapping.table}`;
    const table = catalog.tables.find((t) => t.name === mapping.table);
    if (table === undefined) {
      problems.push({ path: `resources.${name}${mapping.table === name ? '' : '.table'}`, message: `the database has no table or view ${where} (see restgraph init --from … --update)` });
      continue;
    }
    const columns = new Set(table.columns.map((c) => c.name));
    for (const [field, column] of mapping.columns) {
      if (!columns.has(column)) problems.push({ path: `resources.${name}.fields.${field}${column === field ? '' : '.column'}`, message: `${where} has no column ${column}` });
    }
    const named = new Set(mapping.columns.values());
    for (const column of table.columns) if (!named.has(column.name)) unnamed.push(`${mapping.table}.${column.name}`);
  }
  return { problems, unnamed };
}
