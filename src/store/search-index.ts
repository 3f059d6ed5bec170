import { createHash } from 'node:crypto';

/**
 * The name of a resource's full-text index (SQLite: its FTS5 table; PostgreSQL: its GIN index),
 * `rg_fts_<table>`, within PostgreSQL's 63-byte identifiers.
 */
export function searchIndexName(table: string): string {
  const name = `rg_fts_${table}`;
  return name.length <= 63 ? name : `rg_fts_${createHash('sha256').update(table).digest('hex').slice(0, 32)}`;
}

/** The column that holds a row's search document where the index is a column (PostgreSQL's tsvector). */
export const SEARCH_COLUMN = '_rg_search';
