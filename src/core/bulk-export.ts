import type { ResourceModel, SchemaModel } from '../schema/schema-model.js';
import type { BulkRows } from '../store/bulk-rows.js';
import type { CredentialStore } from '../store/credential-store.js';
import type { SqlExecutor } from '../store/sql-database.js';
import { exportedCredentials, type ExportedCredentials } from './accounts/exported-credentials.js';

/**
 * A whole database as NDJSON, one record a line: `{"resource":"users","record":{…}}`. The
 * resources come in an order an import can follow (those referenced before those referring to
 * them), each resource's rows by id; the rows are read in keyset pages, so memory stays bounded
 * whatever the tables' sizes. With credentials (`export data --with-credentials`), each line of the
 * accounts resource whose record has them carries them too: `{"resource":"users","record":{…},
 * "credentials":{"passwordHash":"$argon2id$…","emailVerified":true}}` (accounts/exported-credentials.ts).
 */

/** One line of a data export (and of a data import). */
export interface DataLine {
  resource: string;
  record: Record<string, unknown>;
  /** The account's password hash and verification mark (`--with-credentials`, the accounts resource only). */
  credentials?: ExportedCredentials;
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

/**
 * The lines of the export (each without its newline), resource after resource, read through
 * `reader` (a snapshot: one consistent export). With `credentials`, those of the accounts resource
 * carry its records' credentials (both read by id ascending, and merged).
 */
export async function* exportLines(schema: SchemaModel, rows: BulkRows, reader: SqlExecutor, pageSize = 1000, credentials?: CredentialStore): AsyncGenerator<string> {
  for (const resource of importOrder(schema)) {
    const prefix = `{"resource":${JSON.stringify(resource.name)},"record":`;
    const accounts = credentials !== undefined && schema.accounts?.resource === resource.name ? credentials.all(resource.name, reader, pageSize) : undefined;
    let next = await accounts?.next();
    for await (const record of rows.rows(resource, pageSize, reader)) {
      const id = Number(record.id);
      while (next?.done === false && next.value.recordId < id) next = await accounts?.next();
      // Credentials bound to an earlier record under this id (deleted, its id given again by an import) are not this record's.
      const own = next?.done === false && next.value.recordId === id && next.value.recordCreatedAt === String(record.createdAt) ? next.value : undefined;
      yield own === undefined ? `${prefix}${JSON.stringify(record)}}` : `${prefix}${JSON.stringify(record)},"credentials":${JSON.stringify(exportedCredentials(own, record[schema.accounts?.identifier ?? '']))}}`;
    }
    await accounts?.return(undefined);
  }
}
