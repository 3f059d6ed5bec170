import { SchemaError } from '../errors.js';
import { compileSchema } from '../schema/compile-schema.js';
import type { InferredSchema } from '../schema/infer-schema.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { DataSourceStore, type DataSource } from '../store/data-source-store.js';
import { applyMigration, planMigration, recordedSchema } from '../store/migrate.js';
import type { SqlDatabase } from '../store/sql-database.js';
import type { SqlDialectRules } from '../store/sql-dialect-rules.js';
import { upgradeSystemTables } from '../store/system-migrations.js';
import { BulkImport } from './bulk-import.js';
import { dbJsonRecords } from './db-json-records.js';

/** A json-server database file, read and checked (cli/db-json-file.ts). */
export interface DbJsonSource {
  /** The file as the command named it. */
  file: string;
  data: Readonly<Record<string, unknown>>;
  /** SHA-256 of the file's bytes, in hex. */
  sha256: string;
}

export interface DbJsonDatabase {
  /** The schema to serve: the inferred one on the first start, afterwards the one the database holds. */
  schema: SchemaModel;
  /** Records imported now (first start), by resource; undefined when the database had been filled before. */
  imported?: Map<string, number>;
  /** The import that filled the database, when the file has changed since. */
  changedSince?: DataSource;
}

/**
 * The database of `restgraph serve db.json`. The file is imported into an empty database once, on
 * the first start; afterwards the database is served as it is (changes made through the API stay)
 * and the file is never imported over it. The schema served is then the one the database was last
 * migrated to (the inferred one, or one the user edited and served since).
 *
 * @throws DestructiveMigrationError when the database holds another schema that the inferred one would drop parts of
 * @throws DatabaseNotEmptyError when it holds rows but no record of an import (another schema's data)
 * @throws ImportRejectedError when records do not fit the inferred schema (nothing is imported)
 */
export async function prepareDbJsonDatabase(db: SqlDatabase, rules: SqlDialectRules, source: DbJsonSource, inferred: InferredSchema, model: SchemaModel): Promise<DbJsonDatabase> {
  await upgradeSystemTables(db);
  const sources = new DataSourceStore(db);
  const latest = await sources.latest();
  if (latest !== undefined) {
    const definition = await recordedSchema(db);
    const compiled = definition === undefined ? { model, problems: [] } : compileSchema(definition);
    if (compiled.model === undefined) throw new SchemaError(`the schema recorded in the database of ${source.file}`, compiled.problems);
    return { schema: compiled.model, ...(latest.sha256 === source.sha256 ? {} : { changedSince: latest }) };
  }
  await db.exclusively(async () => applyMigration(db, model, await planMigration(db, rules, model)));
  // The record of the import commits with its rows: a process killed halfway leaves neither.
  const result = await new BulkImport(db, model).run(dbJsonRecords(source.data, inferred, model), {
    mode: 'create',
    requireEmpty: true,
    beforeCommit: async (tx, imported) => {
      const records = [...imported.imported.values()].reduce((a, b) => a + b, 0);
      await sources.record({ file: source.file, sha256: source.sha256, records, importedAt: new Date().toISOString() }, tx);
    },
  });
  return { schema: model, imported: result.imported };
}
