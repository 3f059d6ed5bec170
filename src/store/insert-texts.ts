import type { Kysely } from 'kysely';
import type { DynamicTables } from './sql-database.js';

/**
 * The texts of multi-row INSERT statements, made once per table, column list and row count (full
 * batches repeat one text, so the database keeps it prepared).
 */
export class InsertTexts {
  readonly #builder: Kysely<DynamicTables>;
  readonly #texts = new Map<string, string>();

  constructor(builder: Kysely<DynamicTables>) {
    this.#builder = builder;
  }

  /** `insert into <table> (<columns>) values (…), …`: `rowCount` rows of parameters, in column order. */
  text(table: string, columns: readonly string[], rowCount: number): string {
    const key = `${table}|${columns.join(',')}|${rowCount}`;
    let text = this.#texts.get(key);
    if (text === undefined) {
      const row: Record<string, unknown> = Object.fromEntries(columns.map((name) => [name, null]));
      text = this.#builder
        .insertInto(table)
        .values(Array.from({ length: rowCount }, () => row))
        .compile().sql;
      this.#texts.set(key, text);
    }
    return text;
  }
}
