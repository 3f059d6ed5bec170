import { canonicalFields, type FieldModel, type ResourceModel } from '../schema/schema-model.js';
import type { BulkRows } from './bulk-rows.js';
import type { StoredRecord } from './list-spec.js';
import { columnNames } from './record-store.js';
import type { DynamicTables, SqlDatabase, SqlExecutor } from './sql-database.js';
import type { Kysely } from 'kysely';

/**
 * What a bulk import has written so far, kept in a temporary table of its own transaction rather
 * than in memory (an import's memory stays bounded by its batch, whatever the file's size), one
 * ledger row per batch:
 *
 * - the ids and file lines of the rows of each batch written (to name the line of a row found
 *   invalid later, and to tell the import's rows from those the table had before);
 * - the rows without ids, as JSON, until every row with an id is in (then they are numbered).
 *
 * The table lives in the import's transaction: dropped at its end, gone with a rollback.
 */

const LEDGER = '_restgraph_import_ledger';

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
  readonly #rows: BulkRows;
  /** Resources whose tables had rows before the import: their rows are told apart by the ledger. */
  readonly #hadRows: ReadonlySet<string>;
  #batches = 0;

  private constructor(db: SqlDatabase, tx: SqlExecutor, rows: BulkRows, hadRows: ReadonlySet<string>) {
    this.#db = db;
    this.#tx = tx;
    this.#rows = rows;
    this.#hadRows = hadRows;
  }

  /** Creates the ledger inside the transaction `tx`. */
  static async create(db: SqlDatabase, tx: SqlExecutor, rows: BulkRows, hadRows: ReadonlySet<string>): Promise<ImportLedger> {
    const schema = db.builder.schema;
    await tx.run(
      schema
        .createTable(LEDGER)
        .temporary()
        .addColumn('batch', 'integer', (c) => c.primaryKey())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('lowest', 'bigint')
        .addColumn('highest', 'bigint')
        .addColumn('ids', 'text')
        .addColumn('lines', 'text', (c) => c.notNull())
        .addColumn('records', 'text')
        .compile(),
    );
    return new ImportLedger(db, tx, rows, hadRows);
  }

  get #builder(): Kysely<DynamicTables> {
    return this.#db.builder;
  }

  /** Records a batch of rows written with these ids, from these lines. */
  async written(resource: ResourceModel, rows: readonly { id: number; line: number }[]): Promise<void> {
    if (rows.length === 0) return;
    const ids = rows.map((r) => r.id);
    await this.#add({ resource: resource.name, kind: 'written', lowest: Math.min(...ids), highest: Math.max(...ids), ids: JSON.stringify(ids), lines: JSON.stringify(rows.map((r) => r.line)), records: null });
  }

  /** Keeps a batch of rows without ids until {@link waiting} reads them back. */
  async wait(resource: ResourceModel, rows: readonly WaitingRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.#add({ resource: resource.name, kind: 'waiting', lowest: null, highest: null, ids: null, lines: JSON.stringify(rows.map((r) => r.line)), records: JSON.stringify(rows.map((r) => r.record)) });
  }

  async #add(row: Record<string, unknown>): Promise<void> {
    await this.#tx.run(this.#builder.insertInto(LEDGER).values({ batch: ++this.#batches, ...row }).compile());
  }

  /** The batches of rows of `resource` kept by {@link wait}, in file order. */
  async *waiting(resource: ResourceModel): AsyncGenerator<WaitingRow[]> {
    let after = 0;
    for (;;) {
      const row = await this.#tx.one(
        this.#builder.selectFrom(LEDGER).select(['batch', 'lines', 'records']).where('resource', '=', resource.name).where('kind', '=', 'waiting').where('batch', '>', after).orderBy('batch').limit(1).compile(),
      );
      if (row === undefined) return;
      const lines = JSON.parse(String(row.lines)) as number[];
      const records = JSON.parse(String(row.records)) as StoredRecord[];
      yield lines.map((line, i) => ({ line, record: records[i] ?? {} }));
      after = Number(row.batch);
    }
  }

  /** The lines of the import's rows of `resource` among `ids` (a few: rows being rejected), by id. */
  async linesOf(resource: ResourceModel, ids: readonly number[]): Promise<Map<number, number>> {
    const lines = new Map<number, number>();
    for (const id of new Set(ids)) {
      const batches = await this.#tx.all(
        this.#builder.selectFrom(LEDGER).select(['ids', 'lines']).where('resource', '=', resource.name).where('lowest', '<=', id).where('highest', '>=', id).compile(),
      );
      for (const batch of batches) {
        const batchIds = JSON.parse(String(batch.ids)) as number[];
        const at = batchIds.indexOf(id);
        if (at >= 0) lines.set(id, (JSON.parse(String(batch.lines)) as number[])[at] ?? 0);
      }
    }
    return lines;
  }

  /** The import's rows of `resource` whose `field` holds a value that is no id of `target`. */
  async dangling(resource: ResourceModel, field: FieldModel, target: ResourceModel): Promise<ReferringRow[]> {
    const rows = await this.#tx.all(
      this.#builder
        .selectFrom(`${resource.name} as r`)
        .leftJoin(`${target.name} as t`, 't.id', `r.${field.name}`)
        .select(['r.id as id', `r.${field.name} as value`])
        .where(`r.${field.name}`, 'is not', null)
        .where('t.id', 'is', null)
        .compile(),
    );
    return this.#ofImport(resource, rows);
  }

  /** The import's rows of `resource` whose `field` holds one of `values`. */
  async referring(resource: ResourceModel, field: FieldModel, values: readonly number[]): Promise<ReferringRow[]> {
    const found: ReferringRow[] = [];
    for (let start = 0; start < values.length; start += 500) {
      const rows = await this.#tx.all(
        this.#builder.selectFrom(resource.name).select(['id', `${field.name} as value`]).where(field.name, 'in', values.slice(start, start + 500)).compile(),
      );
      found.push(...(await this.#ofImport(resource, rows)));
    }
    return found;
  }

  /** Those of `rows` (id, value) the import wrote, with their lines (a table's rows from before have none). */
  async #ofImport(resource: ResourceModel, rows: readonly Record<string, unknown>[]): Promise<ReferringRow[]> {
    if (rows.length === 0) return [];
    const lines = await this.linesOf(resource, rows.map((row) => Number(row.id)));
    const found: ReferringRow[] = [];
    for (const row of rows) {
      const line = lines.get(Number(row.id));
      if (line !== undefined) found.push({ id: Number(row.id), line, value: Number(row.value) });
    }
    return found;
  }

  /** The import's rows of `resource` still in its table, decoded, a page at a time. */
  async *importedRows(resource: ResourceModel): AsyncGenerator<StoredRecord[]> {
    if (!this.#hadRows.has(resource.name)) {
      // Every row of the table is the import's.
      const page: StoredRecord[] = [];
      for await (const record of this.#rows.rows(resource, 1000, this.#tx)) {
        page.push(record);
        if (page.length === 1000) yield page.splice(0);
      }
      if (page.length > 0) yield page;
      return;
    }
    const rules = this.#db.rules;
    const fields = canonicalFields(resource);
    let after = 0;
    for (;;) {
      const batch = await this.#tx.one(
        this.#builder.selectFrom(LEDGER).select(['batch', 'ids']).where('resource', '=', resource.name).where('kind', '=', 'written').where('batch', '>', after).orderBy('batch').limit(1).compile(),
      );
      if (batch === undefined) return;
      after = Number(batch.batch);
      const ids = JSON.parse(String(batch.ids)) as number[];
      const rows = await this.#tx.all(this.#builder.selectFrom(resource.name).select(columnNames(resource)).where('id', 'in', ids).orderBy('id').compile());
      yield rows.map((row) => {
        const record: StoredRecord = {};
        for (const field of fields) record[field.name] = rules.decode(field, row[field.name]);
        return record;
      });
    }
  }

  /** Drops the ledger (before the transaction commits). */
  async drop(): Promise<void> {
    await this.#tx.run(this.#db.builder.schema.dropTable(LEDGER).compile());
  }
}
