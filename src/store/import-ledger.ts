import { canonicalFields, type FieldModel, type ResourceModel } from '../schema/schema-model.js';
import { InsertTexts } from './insert-texts.js';
import type { StoredRecord } from './list-spec.js';
import { columnNames } from './record-store.js';
import type { DynamicTables, SqlDatabase, SqlExecutor } from './sql-database.js';
import type { Kysely } from 'kysely';

/**
 * What a bulk import has written so far, kept in temporary tables of its own transaction rather
 * than in memory (an import's memory stays bounded by its batches, whatever the file's size):
 *
 * - the id and file line of every row written, indexed by id (to name the line of a row found
 *   invalid later, and to tell the import's rows from those the table had before), so every
 *   question is one indexed query or one join, never a scan per row;
 * - the rows without ids, as JSON, a batch a row, until every row with an id is in.
 *
 * The tables live in the import's transaction: dropped at its end, gone with a rollback.
 */

const WRITTEN = '_restgraph_import_rows';
const WAITING = '_restgraph_import_waiting';
/** Ledger rows one INSERT takes (3 parameters each). */
const ROWS_PER_INSERT = 300;

/** A row of the import found with a reference field holding `value`. */
export interface ReferringRow {
  id: number;
  line: number;
  value: number;
}

/** A row of the import without an id, waiting to be numbered. */
export interface WaitingRow {
  line: number;
  record: StoredRecord;
}

export class ImportLedger {
  readonly #db: SqlDatabase;
  readonly #tx: SqlExecutor;
  /** Resources whose tables had rows before the import: their rows are told apart by the ledger. */
  readonly #hadRows: ReadonlySet<string>;
  readonly #insertTexts: InsertTexts;
  #batches = 0;

  private constructor(db: SqlDatabase, tx: SqlExecutor, hadRows: ReadonlySet<string>) {
    this.#db = db;
    this.#tx = tx;
    this.#hadRows = hadRows;
    this.#insertTexts = new InsertTexts(db.builder);
  }

  /** Creates the ledger inside the transaction `tx`. */
  static async create(db: SqlDatabase, tx: SqlExecutor, hadRows: ReadonlySet<string>): Promise<ImportLedger> {
    const schema = db.builder.schema;
    await tx.run(
      schema
        .createTable(WRITTEN)
        .temporary()
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('id', 'bigint', (c) => c.notNull())
        .addColumn('line', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint(`${WRITTEN}_key`, ['resource', 'id'])
        .compile(),
    );
    await tx.run(
      schema
        .createTable(WAITING)
        .temporary()
        .addColumn('batch', 'integer', (c) => c.primaryKey())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('lines', 'text', (c) => c.notNull())
        .addColumn('records', 'text', (c) => c.notNull())
        .compile(),
    );
    return new ImportLedger(db, tx, hadRows);
  }

  get #builder(): Kysely<DynamicTables> {
    return this.#db.builder;
  }

  /** Records rows written with these ids, from these lines. */
  async written(resource: ResourceModel, rows: readonly { id: number; line: number }[]): Promise<void> {
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + ROWS_PER_INSERT);
      const parameters: unknown[] = [];
      for (const { id, line } of chunk) parameters.push(resource.name, id, line);
      await this.#tx.run({ sql: this.#insertTexts.text(WRITTEN, ['resource', 'id', 'line'], chunk.length), parameters, reuse: chunk.length === ROWS_PER_INSERT });
    }
  }

  /** Keeps a batch of rows without ids until {@link waiting} reads them back. */
  async wait(resource: ResourceModel, rows: readonly WaitingRow[]): Promise<void> {
    if (rows.length === 0) return;
    const values = { batch: ++this.#batches, resource: resource.name, lines: JSON.stringify(rows.map((r) => r.line)), records: JSON.stringify(rows.map((r) => r.record)) };
    await this.#tx.run(this.#builder.insertInto(WAITING).values(values).compile());
  }

  /** The batches of rows of `resource` kept by {@link wait}, in file order. */
  async *waiting(resource: ResourceModel): AsyncGenerator<WaitingRow[]> {
    let after = 0;
    for (;;) {
      const row = await this.#tx.one(
        this.#builder.selectFrom(WAITING).select(['batch', 'lines', 'records']).where('resource', '=', resource.name).where('batch', '>', after).orderBy('batch').limit(1).compile(),
      );
      if (row === undefined) return;
      const lines = JSON.parse(String(row.lines)) as number[];
      const records = JSON.parse(String(row.records)) as StoredRecord[];
      yield lines.map((line, i) => ({ line, record: records[i] ?? {} }));
      after = Number(row.batch);
    }
  }

  /** The lines of the import's rows of `resource` among `ids`, by id. */
  async linesOf(resource: ResourceModel, ids: readonly number[]): Promise<Map<number, number>> {
    const lines = new Map<number, number>();
    const unique = [...new Set(ids)];
    for (let start = 0; start < unique.length; start += 500) {
      const rows = await this.#tx.all(
        this.#builder.selectFrom(WRITTEN).select(['id', 'line']).where('resource', '=', resource.name).where('id', 'in', unique.slice(start, start + 500)).compile(),
      );
      for (const row of rows) lines.set(Number(row.id), Number(row.line));
    }
    return lines;
  }

  /** The import's rows of `resource` whose `field` holds a value that is no id of `target` (one join). */
  async dangling(resource: ResourceModel, field: FieldModel, target: ResourceModel): Promise<ReferringRow[]> {
    const rows = await this.#tx.all(
      this.#builder
        .selectFrom(`${resource.name} as r`)
        .innerJoin(`${WRITTEN} as l`, (join) => join.onRef('l.id', '=', 'r.id').on('l.resource', '=', resource.name))
        .leftJoin(`${target.name} as t`, 't.id', `r.${field.name}`)
        .select(['r.id as id', 'l.line as line', `r.${field.name} as value`])
        .where(`r.${field.name}`, 'is not', null)
        .where('t.id', 'is', null)
        .compile(),
    );
    return rows.map(referringRow);
  }

  /** The import's rows of `resource` whose `field` holds one of `values`. */
  async referring(resource: ResourceModel, field: FieldModel, values: readonly number[]): Promise<ReferringRow[]> {
    const found: ReferringRow[] = [];
    for (let start = 0; start < values.length; start += 500) {
      const rows = await this.#tx.all(
        this.#builder
          .selectFrom(`${resource.name} as r`)
          .innerJoin(`${WRITTEN} as l`, (join) => join.onRef('l.id', '=', 'r.id').on('l.resource', '=', resource.name))
          .select(['r.id as id', 'l.line as line', `r.${field.name} as value`])
          .where(`r.${field.name}`, 'in', values.slice(start, start + 500))
          .compile(),
      );
      found.push(...rows.map(referringRow));
    }
    return found;
  }

  /** The import's rows of `resource` still in its table, decoded, a page at a time. */
  async *importedRows(resource: ResourceModel): AsyncGenerator<StoredRecord[]> {
    const rules = this.#db.rules;
    const fields = canonicalFields(resource);
    const ofImport = this.#hadRows.has(resource.name);
    let after = 0;
    for (;;) {
      // Where the table was empty before, every row is the import's (the tables are locked
      // against other writers for the import: see SqlDialectRules.lockForImport).
      let query = this.#builder.selectFrom(`${resource.name} as r`).select(columnNames(resource).map((name) => `r.${name}`)).where('r.id', '>', after).orderBy('r.id').limit(1000);
      if (ofImport) query = query.innerJoin(`${WRITTEN} as l`, (join) => join.onRef('l.id', '=', 'r.id').on('l.resource', '=', resource.name));
      const rows = await this.#tx.all(query.compile());
      if (rows.length === 0) return;
      yield rows.map((row) => {
        const record: StoredRecord = {};
        for (const field of fields) record[field.name] = rules.decode(field, row[field.name]);
        return record;
      });
      after = Number(rows[rows.length - 1]?.id);
    }
  }

  /** Drops the ledger (before the transaction commits). */
  async drop(): Promise<void> {
    await this.#tx.run(this.#db.builder.schema.dropTable(WRITTEN).compile());
    await this.#tx.run(this.#db.builder.schema.dropTable(WAITING).compile());
  }
}

function referringRow(row: Record<string, unknown>): ReferringRow {
  return { id: Number(row.id), line: Number(row.line), value: Number(row.value) };
}
