import type { ResourceModel, SchemaModel } from '../schema/schema-model.js';
import type { BulkRows } from '../store/bulk-rows.js';
import type { SqlExecutor } from '../store/sql-database.js';

/**
 * A whole database as NDJSON, one record a line: `{"resource":"users","record":{…}}`. The
 * resources come in an order an import can follow (those referenced before those referring to
 * them), each resource's rows by id; the rows are read in keyset pages, so memory stays bounded
 * whatever the tables' sizes.
 */

/** One line of a data export (and of a data import). */
export interface DataLine {
  resource: string;
  record: Record<string, unknown>;
}

/**
 * The resources, each after the resources its reference fields point to where that is possible
 * (a cycle of references keeps the schema's order among its members: the import checks the
 * references at its end, so any order imports).
 */
export function importOrder(schema: SchemaModel): ResourceModel[] {
  const ordered: ResourceModel[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (resource: ResourceModel): void => {
    if (state.has(resource.name)) return;
    state.set(resource.name, 'visiting');
    for (const field of resource.fields.values()) {
      const target = field.references === undefined ? undefined : schema.resources.get(field.references);
      if (target !== undefined && target !== resource) visit(target);
    }
    state.set(resource.name, 'done');
    ordered.push(resource);
  };
  for (const resource of schema.resources.values()) visit(resource);
  return ordered;
}

/** The lines of the export (each without its newline), resource after resource, read through `reader` (a snapshot: one consistent export). */
export async function* exportLines(schema: SchemaModel, rows: BulkRows, reader: SqlExecutor, pageSize = 1000): AsyncGenerator<string> {
  for (const resource of importOrder(schema)) {
    const prefix = `{"resource":${JSON.stringify(resource.name)},"record":`;
    for await (const record of rows.rows(resource, pageSize, reader)) yield `${prefix}${JSON.stringify(record)}}`;
  }
}
