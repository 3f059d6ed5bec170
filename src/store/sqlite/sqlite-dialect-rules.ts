import { sql, type Expression } from 'kysely';
import type { FieldModel, ResourceModel } from '../../schema/schema-model.js';
import { decodeSqlite, encodeSqlite, sqliteNeedsDecode } from './sqlite-values.js';
import type { SqlDialectRules } from '../sql-dialect-rules.js';
import { FOLD_CASE_FUNCTION } from '../fold-case.js';
import type { TextSearch } from '../list-spec.js';
import { searchIndexName } from '../search-index.js';

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** SQLite storage: booleans as 0/1, datetimes as ISO-8601 UTC text (sorts correctly), JSON as text. */
export const sqliteDialectRules: SqlDialectRules = {
  product: 'SQLite',
  // One writer at a time holds the whole file: rows need no locks, and no claim is passed over.
  int32Integers: false,
  uncorrelatedRelationTests: true,
  rowLocks: false,
  skipLocked: false,

  tableExists(table: string) {
    return { sql: "select count(*) as \"found\" from sqlite_master where type = 'table' and name = ?", parameters: [table] };
  },

  // SQLite already sorts nulls first ascending and last descending.
  explicitNullsOrder: false,

  columnType(field: FieldModel): string {
    switch (field.type) {
      case 'integer':
      case 'boolean':
        return 'integer';
      case 'number':
        return 'real';
      default:
        return 'text';
    }
  },

  changeColumnType(): string[] {
    // A SQLite column keeps any value (its declared type is only an affinity): nothing to do.
    return [];
  },

  indexKey(column: string): string {
    // SQLite's indexes already put nulls first ascending.
    return column;
  },

  idColumnDefinition(): string {
    // AUTOINCREMENT: ids of deleted rows never come back, so a URL never names two objects.
    return '"id" integer primary key autoincrement';
  },

  lockForImport(): undefined {
    // The import's transaction holds SQLite's one write lock (BEGIN IMMEDIATE) already.
    return undefined;
  },

  reserveIds(table: string, floor: number) {
    // One writer at a time, and an insert with an id above sqlite_sequence's raises it: the next
    // id is past the largest of the table's ids, its sequence (ids of deleted rows) and `floor`.
    return {
      sql: `select max(coalesce((select max("id") from "${table.replace(/"/g, '""')}"), 0), coalesce((select "seq" from sqlite_sequence where "name" = ?), 0), ?) + 1 as "first"`,
      parameters: [table, floor],
    };
  },

  idGeneratorPosition(table: string) {
    // AUTOINCREMENT keeps the largest id handed out in sqlite_sequence (no row: none yet).
    return {
      sql: `select max(coalesce((select max("id") from ${quote(table)}), 0), coalesce((select "seq" from sqlite_sequence where "name" = ?), 0)) as "position"`,
      parameters: [table],
    };
  },

  moveIdGeneratorPast(table: string, position: number) {
    // sqlite_sequence is an ordinary table (without a unique name): raise its row, or add one.
    return [
      // (Its column has no type: a number bound as it comes would be kept as a real.)
      { sql: 'update sqlite_sequence set "seq" = cast(? as integer) where "name" = ? and "seq" < ?', parameters: [position, table, position] },
      {
        sql: 'insert into sqlite_sequence ("name", "seq") select ?, cast(? as integer) where ? > 0 and not exists (select 1 from sqlite_sequence where "name" = ?)',
        parameters: [table, position, position, table],
      },
    ];
  },

  databaseIdentity() {
    return { sql: `select 'sqlite:' || "file" as "identity" from pragma_database_list where "name" = 'main'`, parameters: [] };
  },

  encode(field: FieldModel, value: unknown): unknown {
    return value === null || value === undefined ? null : encodeSqlite(field, value);
  },

  needsDecode(field: FieldModel, resource?: ResourceModel): boolean {
    return sqliteNeedsDecode(field, resource);
  },

  decode(field: FieldModel, raw: unknown): unknown {
    return decodeSqlite(field, raw);
  },

  contains(column: Expression<unknown>, value: string) {
    return sql<boolean>`instr(${column}, ${value}) > 0`;
  },

  startsWith(column: Expression<unknown>, value: string) {
    return sql<boolean>`substr(${column}, 1, ${Array.from(value).length}) = ${value}`;
  },

  // SQLite's own lower() and LIKE fold A–Z only: the function registered on each connection folds all of Unicode.
  containsFolded(column: Expression<unknown>, folded: string) {
    return sql<boolean>`instr(${sql.raw(FOLD_CASE_FUNCTION)}(${column}), ${folded}) > 0`;
  },

  // SQLite's LIKE folds the case of ASCII letters only (no ICU): É and é stay different.
  likeIgnoringCase(column: Expression<unknown>, pattern: string) {
    return sql<boolean>`${column} like ${pattern} escape '\\'`;
  },

  // A contentless FTS5 table (rg_fts_<table>, its rowid the row's id) with columns c0, c1, … (no
  // clash with FTS5's own names such as rank), kept by triggers: every write path, imports and
  // copies included, updates it in the write's transaction. The unicode61 tokenizer folds case and
  // removes diacritics, as the words of a search are split (list-query.ts).
  createSearchIndex(table: string, columns: readonly string[]) {
    const fts = quote(searchIndexName(table));
    const t = quote(table);
    const slots = columns.map((_, i) => `c${i}`).join(', ');
    const of = (row: 'new' | 'old'): string => columns.map((c) => `${row}.${quote(c)}`).join(', ');
    const trigger = (suffix: string): string => quote(`${searchIndexName(table)}_${suffix}`);
    const insertNew = `insert into ${fts} (rowid, ${slots}) values (new."id", ${of('new')});`;
    const deleteOld = `insert into ${fts} (${fts}, rowid, ${slots}) values ('delete', old."id", ${of('old')});`;
    return [
      `create virtual table ${fts} using fts5(${slots}, content='', tokenize='unicode61 remove_diacritics 2')`,
      `insert into ${fts} (rowid, ${slots}) select "id", ${columns.map(quote).join(', ')} from ${t}`,
      `create trigger ${trigger('ai')} after insert on ${t} begin ${insertNew} end`,
      `create trigger ${trigger('ad')} after delete on ${t} begin ${deleteOld} end`,
      `create trigger ${trigger('au')} after update of ${columns.map(quote).join(', ')} on ${t} begin ${deleteOld} ${insertNew} end`,
    ];
  },

  dropSearchIndex(table: string) {
    const name = searchIndexName(table);
    return [...['ai', 'ad', 'au'].map((suffix) => `drop trigger if exists ${quote(`${name}_${suffix}`)}`), `drop table if exists ${quote(name)}`];
  },

  searchMatches(table: string, search: TextSearch) {
    const fts = sql.table(searchIndexName(table));
    return sql<boolean>`"id" in (select rowid from ${fts} where ${fts} match ${ftsQuery(search)})`;
  },

  searchRanked(table: string, search: TextSearch, restricted: boolean) {
    const fts = sql.table(searchIndexName(table));
    // rank is bm25(): smaller is more relevant. BM25 weighs each word by how many rows of the
    // whole index hold it, hidden rows too: under a rule that hides rows, every match ranks the same
    // (the list's order, by id, decides).
    const rank = restricted ? sql`0` : sql`rank`;
    return sql`(select rowid as "_rg_id", ${rank} as "_rg_rank" from ${fts} where ${fts} match ${ftsQuery(search)})`;
  },
};

/**
 * The FTS5 query of a search: each term a quoted string (a phrase when it has several words),
 * `*` after the last for a prefix, all of them required. Words are letters and digits only, and
 * quoted besides: nothing a client typed is FTS5 syntax.
 */
function ftsQuery(search: TextSearch): string {
  return search.terms.map((term) => `"${term.words.join(' ').replace(/"/g, '""')}"${term.prefix ? ' *' : ''}`).join(' AND ');
}
