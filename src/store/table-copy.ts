import { sql, type Expression } from 'kysely';
import type { FieldModel } from '../schema/schema-model.js';
import { InsertTexts } from './insert-texts.js';
import type { SqlDatabase, SqlExecutor, SqlRow } from './sql-database.js';

/**
 * One table read from one database and written to another, page by page: the rows of a page are
 * read by key (keyset paging: every page costs the same however far into the table), converted
 * where the two databases store a type differently, and written many to a statement.
 */

/** A column of a copied table. */
export interface CopiedColumn {
  readonly name: string;
  /**
   * The field whose values it holds (records' columns): its values are converted from the
   * source's way of storing the type to the target's. Absent for restgraph's own tables, whose
   * text and integer columns are stored alike everywhere.
   */
  readonly field?: FieldModel;
}

export interface CopiedTable {
  readonly name: string;
  readonly columns: readonly CopiedColumn[];
  /** The columns that tell the rows apart (the primary key): the pages follow them. */
  readonly key: readonly string[];
  /** Its `id` comes from the database's generator, which the copy moves past the copied ids. */
  readonly generatedId: boolean;
}

/** Most bound parameters one INSERT takes (SQLite's limit is 32,766, PostgreSQL's 65,535). */
const MAX_PARAMETERS = 30_000;
/** Most rows one INSERT takes: past a few hundred, longer statements gain nothing. */
const MAX_ROWS_PER_INSERT = 200;
/** Most rows one page reads, and the first page's size (before the rows' sizes are known). */
const MAX_PAGE_ROWS = 1000;
const FIRST_PAGE_ROWS = 100;
/** About how many bytes of values a page holds: pages of big rows (response bodies, large JSON) get fewer rows. */
const PAGE_BYTES = 8 * 1024 * 1024;

/** How a column's stored value on the source becomes the target's (undefined: as it is). */
type Conversion = ((raw: unknown) => unknown) | undefined;

export class TableCopy {
  readonly #source: SqlDatabase;
  readonly #target: SqlDatabase;
  readonly #insertTexts: InsertTexts;

  constructor(source: SqlDatabase, target: SqlDatabase) {
    this.#source = source;
    this.#target = target;
    this.#insertTexts = new InsertTexts(target.builder);
  }

  /**
   * Copies every row of `table` read through `from` (a snapshot of the source) into the same
   * table through `to` (the target's transaction), in key order; resolves to the number of rows.
   * Memory holds one page (at most 1,000 rows, fewer when they are big). `onPage` is told the
   * rows copied so far after each page but the last.
   */
  async copy(table: CopiedTable, from: SqlExecutor, to: SqlExecutor, onPage?: (copied: number) => void): Promise<number> {
    const conversions = table.columns.map((column) => this.#conversionOf(column));
    const perInsert = Math.max(1, Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / table.columns.length)));
    let after: unknown[] | undefined;
    let pageRows = FIRST_PAGE_ROWS;
    let copied = 0;
    for (;;) {
      const page = await from.all(this.#pageStatement(table, after, pageRows));
      let bytes = 0;
      const values: unknown[][] = page.map((row) =>
        table.columns.map((column, i) => {
          const raw = row[column.name];
          bytes += typeof raw === 'string' ? raw.length : 8;
          const convert = conversions[i];
          return convert === undefined ? raw : convert(raw);
        }),
      );
      for (let start = 0; start < values.length; start += perInsert) {
        const chunk = values.slice(start, start + perInsert);
        await to.run({ sql: this.#insertTexts.text(table.name, table.columns.map((column) => column.name), chunk.length), parameters: chunk.flat(), reuse: chunk.length === perInsert });
      }
      copied += page.length;
      if (page.length < pageRows) return copied;
      onPage?.(copied);
      const last = page[page.length - 1] as SqlRow;
      after = table.key.map((name) => last[name]);
      pageRows = Math.max(1, Math.min(MAX_PAGE_ROWS, Math.floor(PAGE_BYTES / Math.max(1, bytes / page.length))));
    }
  }

  /** The page of `rows` rows after the key `after` (the first page without it). */
  #pageStatement(table: CopiedTable, after: unknown[] | undefined, rows: number): { sql: string; parameters: readonly unknown[] } {
    const columns = table.columns.map((column) =>
      // JSON as its text, exactly as stored: a value parsed and serialised again could come out
      // otherwise (members named by integers move first, large numbers round).
      column.field?.type === 'json' || column.field?.type === 'file' ? sql<string>`cast(${sql.ref(column.name)} as text)`.as(column.name) : sql.ref(column.name).as(column.name),
    );
    let query = this.#source.builder.selectFrom(table.name).select(columns);
    if (after !== undefined) {
      const keys: Expression<unknown>[] = table.key.map((name) => sql.ref(name));
      query = query.where(sql<boolean>`(${sql.join(keys)}) > (${sql.join(after)})`);
    }
    for (const name of table.key) query = query.orderBy(sql.ref(name));
    return query.limit(rows).compile();
  }

  #conversionOf(column: CopiedColumn): Conversion {
    const field = column.field;
    // JSON is copied as text (see #pageStatement); datetimes are ISO 8601 UTC text on every database.
    if (field === undefined || field.type === 'json' || field.type === 'file' || field.type === 'datetime') return undefined;
    const from = this.#source.rules;
    const to = this.#target.rules;
    const decodes = from.needsDecode(field);
    return (raw) => to.encode(field, decodes ? from.decode(field, raw) : raw);
  }
}
