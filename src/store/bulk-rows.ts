import { canonicalFields, fieldNamed, type FieldModel, type ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from './list-spec.js';
import { columnNames } from './record-store.js';
import { InsertTexts } from './insert-texts.js';
import type { SqlDatabase, SqlExecutor } from './sql-database.js';

/**
 * Rows in bulk, for export and import: whole tables read in keyset pages by id (bounded memory
 * whatever the table's size), and rows written many to a statement with the ids they bring.
 */

/** Most bound parameters one INSERT takes (SQLite's limit is 32,766, PostgreSQL's 65,535). */
const MAX_PARAMETERS = 30_000;
/** Most rows one INSERT takes: past a few hundred, longer statements gain nothing. */
const MAX_ROWS_PER_INSERT = 200;

export class BulkRows {
  readonly #db: SqlDatabase;
  readonly #insertTexts: InsertTexts;

  constructor(db: SqlDatabase) {
    this.#db = db;
    this.#insertTexts = new InsertTexts(db.builder);
  }

  /** Every row of `resource` (with an id above `after`), by id ascending, `pageSize` rows a read (decoded, in canonical key order). */
  async *rows(resource: ResourceModel, pageSize = 1000, executor: SqlExecutor = this.#db, after = 0): AsyncGenerator<StoredRecord> {
    const columns = columnNames(resource);
    const fields = canonicalFields(resource);
    const rules = this.#db.rules;
    const statement = this.#db.builder.selectFrom(resource.name).select(columns).where('id', '>', 0).orderBy('id').limit(pageSize).compile();
    for (;;) {
      const page = await executor.all({ sql: statement.sql, parameters: [after, pageSize], reuse: true });
      for (const row of page) {
        const record: StoredRecord = {};
        for (const field of fields) record[field.name] = rules.decode(field, row[field.name]);
        yield record;
      }
      if (page.length < pageSize) return;
      after = Number(page[page.length - 1]?.id);
    }
  }

  /** Whether `resource`'s table holds any row. */
  async hasRows(resource: ResourceModel, executor: SqlExecutor = this.#db): Promise<boolean> {
    const rows = await executor.all(this.#db.builder.selectFrom(resource.name).select('id').limit(1).compile());
    return rows.length > 0;
  }

  /** Which of `ids` are ids of `resource`'s rows. */
  async existingIds(tx: SqlExecutor, resource: ResourceModel, ids: readonly number[]): Promise<Set<number>> {
    return new Set([...(await this.existingValues(tx, resource, 'id', ids))].map(Number));
  }

  /** Which of `values` (as stored) the column `column` of `resource`'s rows holds. */
  async existingValues(tx: SqlExecutor, resource: ResourceModel, column: string, values: readonly unknown[]): Promise<Set<unknown>> {
    const found = new Set<unknown>();
    const unique = [...new Set(values)];
    for (let start = 0; start < unique.length; start += 500) {
      const rows = await tx.all(this.#db.builder.selectFrom(resource.name).select(column).where(column, 'in', unique.slice(start, start + 500)).compile());
      for (const row of rows) found.add(row[column]);
    }
    return found;
  }

  /** A value as the database stores it (for comparing with what {@link existingValues} returns). */
  encode(field: FieldModel, value: unknown): unknown {
    return this.#db.rules.encode(field, value);
  }

  /** How many rows one {@link insert} statement takes for `resource`. */
  rowsPerStatement(resource: ResourceModel): number {
    return Math.max(1, Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / columnNames(resource).length)));
  }

  /**
   * Inserts validated rows as they are: every column of the resource (`id` included when
   * `withIds`), values decoded as clients see them (encoded here; datetimes already in their
   * stored form). Several statements when there are more rows than {@link rowsPerStatement}.
   */
  async insert(tx: SqlExecutor, resource: ResourceModel, rows: readonly StoredRecord[], withIds: boolean): Promise<void> {
    const columns = withIds ? columnNames(resource) : columnNames(resource).filter((name) => name !== 'id');
    const fields = columns.map((name) => fieldNamed(resource, name));
    const rules = this.#db.rules;
    const per = this.rowsPerStatement(resource);
    for (let start = 0; start < rows.length; start += per) {
      const chunk = rows.slice(start, start + per);
      const parameters: unknown[] = [];
      for (const row of chunk) {
        for (const field of fields) {
          const value = row[field.name];
          // Datetimes come normalised (ISO 8601 UTC, as every dialect stores them): parsing each
          // again took a tenth of an import.
          parameters.push(field.type === 'datetime' && typeof value === 'string' ? value : rules.encode(field, value));
        }
      }
      await tx.run({ sql: this.#insertTexts.text(resource.name, columns, chunk.length), parameters, reuse: chunk.length === per });
    }
  }

  /** Deletes rows by id (rows an import let in before it learnt they were invalid). */
  async deleteIds(tx: SqlExecutor, resource: ResourceModel, ids: readonly number[]): Promise<void> {
    for (let start = 0; start < ids.length; start += 500) {
      await tx.run(this.#db.builder.deleteFrom(resource.name).where('id', 'in', ids.slice(start, start + 500)).compile());
    }
  }

  /**
   * Reserves ids of `resource` for rows about to be inserted (see {@link SqlDialectRules.reserveIds}):
   * past the largest id in use and `floor`, then `count` more; returns the first of those `count`.
   */
  async reserveIds(tx: SqlExecutor, resource: ResourceModel, floor: number, count = 0): Promise<number> {
    const rows = await tx.all(this.#db.rules.reserveIds(resource.name, floor, count));
    return Number(rows[0]?.first);
  }
}
