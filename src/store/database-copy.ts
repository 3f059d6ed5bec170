import { sql } from 'kysely';
import { ConfigError, CopyFailedError, DatabaseNotEmptyError, DatabaseNotFoundError, RestgraphError, SchemaError, SystemTablesVersionError, ValidationError } from '../errors.js';
import { compileSchema } from '../schema/compile-schema.js';
import { canonicalFields, type SchemaDefinition, type SchemaModel } from '../schema/schema-model.js';
import { migrateToSchema, recordedSchema } from './migrate.js';
import type { SqlDatabase, SqlExecutor } from './sql-database.js';
import { VERSIONS_TABLE } from './system-migrations.js';
import { SYSTEM_DATA_TABLES, SYSTEM_MIGRATIONS } from './system-tables.js';
import { TableCopy, type CopiedTable } from './table-copy.js';

/**
 * A whole restgraph database copied into another, of the same kind or not (SQLite to PostgreSQL
 * and back): the operation behind `restgraph copy`. What a running service depends on comes
 * along: records, API keys (hashed), webhook endpoints with their secrets, deliveries and
 * attempts, the event outbox and the readers' positions, idempotency keys, rate-limit counters
 * and the history of schema migrations.
 *
 * - The source is only read, in one snapshot: the copy is of one moment even if writes go on.
 * - The target is first migrated to the schema recorded in the source (as `migrate` would), then
 *   written in one transaction: a copy that fails writes no row.
 * - Each id generator of the target ends where the source's was, past the largest id.
 */

/** One side of a copy: the database and what to call it in messages (its URL without credentials). */
export interface CopySide {
  db: SqlDatabase;
  description: string;
}

export interface CopyOptions {
  /**
   * A target whose tables have rows is refused unless `replace`: then its rows are deleted in the
   * copy's transaction (the target must have been migrated to the source's schema).
   */
  replace?: boolean;
  /** Told once the checks have passed and the target is migrated, as the rows begin to be copied. */
  onStart?: () => void;
  /** Told when a table is copied, with its rows. */
  onTable?: (table: string, rows: number) => void;
  /** Told while a table is being copied, after each page of rows, with its rows so far. */
  onProgress?: (table: string, rows: number) => void;
  /** Work on the source's snapshot before any row is written (the files the rows reference); a failure writes no row. */
  beforeRows?: (reader: SqlExecutor, schema: SchemaModel) => Promise<void>;
}

export interface CopySummary {
  /** Every table copied, in order, with its rows. */
  tables: { name: string; rows: number }[];
  rows: number;
}

const MIGRATIONS_TABLE = '_restgraph_migrations';

/**
 * Copies `source` into `target`.
 *
 * @throws ConfigError when both name one database.
 * @throws DatabaseNotFoundError when the source holds no restgraph schema.
 * @throws SystemTablesVersionError when the source's internal tables are older or newer than this release's.
 * @throws DatabaseNotEmptyError when the target has rows (without `replace`), or rows of another schema.
 * @throws CopyFailedError when writing the rows fails (nothing is written).
 */
export async function copyDatabase(source: CopySide, target: CopySide, options: CopyOptions = {}): Promise<CopySummary> {
  try {
    await refuseSameDatabase(source, target);
    return await source.db.snapshot(async (reader) => {
      const definition = await sourceSchema(reader, source);
      const { model, problems } = compileSchema(definition);
      if (model === undefined) throw new SchemaError(`the schema recorded in ${source.description}`, problems);
      const tables = copiedTables(model);
      const replace = await prepareTarget(target, definition, model, options.replace === true);
      options.onStart?.();
      await options.beforeRows?.(reader, model);
      return target.db.transaction((tx) => copyRows(reader, tx, source, target, tables, replace, options));
    });
  } catch (error) {
    // Coded errors say what happened; anything else (a connection lost, a statement refused) is the copy failing.
    if (error instanceof RestgraphError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new CopyFailedError(`The copy failed: the target ${target.description} holds none of its rows. ${reason}`, { cause: error });
  }
}

/** Every table a copy carries: restgraph's own, then the resources'. */
function copiedTables(model: SchemaModel): CopiedTable[] {
  return [
    ...SYSTEM_DATA_TABLES.map((table) => ({ ...table, columns: table.columns.map((name) => ({ name })) })),
    ...[...model.resources.values()].map((resource) => ({
      name: resource.name,
      columns: canonicalFields(resource).map((field) => ({ name: field.name, field })),
      key: ['id'],
      generatedId: true,
    })),
  ];
}

async function refuseSameDatabase(source: CopySide, target: CopySide): Promise<void> {
  // A database without the functions the statement uses (CockroachDB has no pg_control_system) is known by its URL.
  const identity = async ({ db, description }: CopySide): Promise<string> =>
    db.all(db.rules.databaseIdentity()).then(
      (rows) => String(rows[0]?.identity),
      () => description,
    );
  const [from, to] = await Promise.all([identity(source), identity(target)]);
  if (from === to) throw new ConfigError('--to', `is the database of --from (${target.description}): copy into another database`);
}

/** The schema recorded in the source, once its internal tables are known to be this release's. */
async function sourceSchema(reader: SqlExecutor, { db, description }: CopySide): Promise<SchemaDefinition> {
  const exists = async (table: string): Promise<boolean> => {
    const found = (await reader.all(db.rules.tableExists(table)))[0]?.found;
    return found === true || Number(found) > 0;
  };
  if (!(await exists(MIGRATIONS_TABLE))) {
    throw new DatabaseNotFoundError(`The source ${description} holds no restgraph database (no schema was ever migrated to it): there is nothing to copy.`);
  }
  const versions = (await exists(VERSIONS_TABLE)) ? (await reader.all(db.builder.selectFrom(VERSIONS_TABLE).select('version').compile())).map((row) => Number(row.version)) : [];
  const at = Math.max(0, ...versions);
  const latest = SYSTEM_MIGRATIONS.at(-1)?.version ?? 0;
  if (at < latest) {
    throw new SystemTablesVersionError(
      `The source ${description} has its internal tables at version ${at}, older than this release's (${latest}). A copy only reads its source: ` +
        `upgrade it first by starting its server with this release once, or with npx restgraph migrate <schema-file> -d ${description}`,
    );
  }
  if (at > latest) {
    throw new SystemTablesVersionError(
      `The source ${description} has its internal tables at version ${at}, newer than this release knows (up to ${latest}): copy it with the release that upgraded it, or a later one.`,
    );
  }
  const row = (await reader.all(db.builder.selectFrom(MIGRATIONS_TABLE).select('schema').orderBy('id', 'desc').limit(1).compile()))[0];
  if (typeof row?.schema !== 'string') throw new DatabaseNotFoundError(`The source ${description} has no schema recorded: there is nothing to copy.`);
  return JSON.parse(row.schema) as SchemaDefinition;
}

/**
 * Refuses a target with rows (unless replacing them, and then only rows of the same schema), and
 * migrates it to the source's schema. Resolves to whether its rows are to be deleted.
 */
async function prepareTarget(target: CopySide, definition: SchemaDefinition, model: SchemaModel, replace: boolean): Promise<boolean> {
  const { db, description } = target;
  const recorded = await recordedSchema(db);
  const own = recorded === undefined ? [] : SYSTEM_DATA_TABLES.filter((table) => table.name !== MIGRATIONS_TABLE).map((table) => table.name);
  const occupied: string[] = [];
  for (const table of [...own, ...Object.keys(recorded?.resources ?? {})]) {
    if (await hasRows(db, db, table)) occupied.push(table);
  }
  if (occupied.length > 0) {
    if (!replace) {
      throw new DatabaseNotEmptyError(
        `The target ${description} already has rows in ${occupied.join(', ')}: copy fills an empty database (--replace deletes them, in the copy's transaction).`,
      );
    }
    if (JSON.stringify(recorded) !== JSON.stringify(definition)) {
      throw new DatabaseNotEmptyError(
        `The target ${description} has rows of another schema than the source's (in ${occupied.join(', ')}): --replace only replaces the rows of a database migrated to the same schema. Copy into an empty database.`,
      );
    }
  }
  // Tables without rows lose nothing, whatever the plan drops.
  await migrateToSchema(db, db.rules, model, { allowDestructive: occupied.length === 0 });
  return occupied.length > 0;
}

/** The copy proper, in the target's transaction `tx`. */
async function copyRows(
  reader: SqlExecutor,
  tx: SqlExecutor,
  source: CopySide,
  target: CopySide,
  tables: CopiedTable[],
  replace: boolean,
  { onTable, onProgress }: CopyOptions,
): Promise<CopySummary> {
  const db = target.db;
  // The schema history comes from the source (the migration above recorded one of its own); a
  // writer that came in since the check is not overwritten unawares.
  for (const table of tables) {
    if (replace || table.name === MIGRATIONS_TABLE) await tx.run(db.builder.deleteFrom(table.name).compile());
    else if (await hasRows(db, tx, table.name)) throw new DatabaseNotEmptyError(`The target ${target.description} got rows in ${table.name} while the copy began: stop what writes to it, and copy again.`);
  }
  const copier = new TableCopy(source.db, db);
  const summary: CopySummary = { tables: [], rows: 0 };
  for (const table of tables) {
    let rows: number;
    try {
      rows = await copier.copy(table, reader, tx, onProgress && ((copied) => onProgress(table.name, copied)));
      if (table.generatedId) {
        const position = Number((await reader.all(source.db.rules.idGeneratorPosition(table.name)))[0]?.position ?? 0);
        for (const statement of db.rules.moveIdGeneratorPast(table.name, position)) await tx.all(statement);
      }
    } catch (error) {
      // A value the target refuses (a NUL byte in PostgreSQL text: ValidationError) is the copy failing, not a client's error.
      if (error instanceof RestgraphError && !(error instanceof ValidationError)) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new CopyFailedError(`Copying ${table.name} failed, and the copy was rolled back: the target ${target.description} holds none of its rows. ${reason}`, { cause: error });
    }
    summary.tables.push({ name: table.name, rows });
    summary.rows += rows;
    onTable?.(table.name, rows);
  }
  return summary;
}

async function hasRows(db: SqlDatabase, executor: SqlExecutor, table: string): Promise<boolean> {
  return (await executor.all(db.builder.selectFrom(table).select(sql<number>`1`.as('one')).limit(1).compile())).length > 0;
}
