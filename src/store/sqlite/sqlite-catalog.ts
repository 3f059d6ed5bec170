import BetterSqlite3 from 'better-sqlite3';
import { existsSync } from 'node:fs';
import type { CatalogSelection, ColumnCatalog, DatabaseCatalog, ForeignKeyAction, TableCatalog } from '../../schema/database-catalog.js';
import { ConfigError } from '../../errors.js';

/**
 * Reads a SQLite file's tables and views (sqlite_master and the table pragmas), opened read-only:
 * the file is not written, nor its journal mode changed. restgraph's own `_restgraph_*` tables and
 * SQLite's `sqlite_*` ones are left out.
 *
 * @throws ConfigError naming the file when it does not exist or is not a SQLite database.
 */
export function readSqliteCatalog(file: string, selection: CatalogSelection): DatabaseCatalog {
  if (file === ':memory:' || !existsSync(file)) throw new ConfigError('--from', `there is no SQLite database at ${file}`);
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new ConfigError('--from', `cannot open SQLite database ${file}: ${(error as Error).message}`);
  }
  try {
    const tables = readTables(db);
    if (selection.tables === undefined) return { dialect: 'sqlite', tables, warnings: [] };
    const missing = selection.tables.filter((name) => !tables.some((t) => t.name === name));
    if (missing.length > 0) throw new ConfigError('--tables', `no table or view ${missing.map((m) => `"${m}"`).join(', ')} in ${file}`);
    return { dialect: 'sqlite', tables: tables.filter((t) => selection.tables?.includes(t.name) === true), warnings: [] };
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError('--from', `cannot read the tables of ${file}: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}

const ON_DELETE: Readonly<Record<string, ForeignKeyAction>> = {
  'NO ACTION': 'noAction',
  RESTRICT: 'restrict',
  CASCADE: 'cascade',
  'SET NULL': 'setNull',
  'SET DEFAULT': 'setDefault',
};

interface ColumnRow {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
  /** 0 a column, 1 hidden (virtual tables), 2 and 3 generated. */
  hidden: number;
}

function readTables(db: BetterSqlite3.Database): TableCatalog[] {
  const masters = db
    .prepare(`select name, type, sql from sqlite_master where type in ('table', 'view') and name not like 'sqlite\\_%' escape '\\' and name not like '\\_restgraph\\_%' escape '\\' order by name`)
    .all() as { name: string; type: string; sql: string | null }[];
  return masters.map(({ name, type, sql }) => {
    const rows = db.prepare('select * from pragma_table_xinfo(?)').all(name) as ColumnRow[];
    const primaryKey = rows.filter((r) => r.pk > 0).sort((a, b) => a.pk - b.pk).map((r) => r.name);
    const checks = inListChecks(sql ?? '');
    const columns = rows.map((row): ColumnCatalog => {
      const column: ColumnCatalog = { name: row.name, dataType: row.type, notNull: row.notnull === 1 || row.pk > 0 };
      if (row.dflt_value !== null) column.default = row.dflt_value;
      if (row.hidden === 2 || row.hidden === 3) column.computed = true;
      // The one INTEGER PRIMARY KEY column is the rowid: SQLite fills it when left out.
      if (type === 'table' && primaryKey.length === 1 && primaryKey[0] === row.name && row.type.toUpperCase() === 'INTEGER') column.identity = 'byDefault';
      const values = checks.get(row.name.toLowerCase());
      if (values !== undefined) column.enumValues = values;
      return column;
    });
    const table: TableCatalog = { name, kind: type === 'view' ? 'view' : 'table', columns, primaryKey, uniques: [], indexes: [], foreignKeys: [] };
    if (type === 'view') return table;
    readKeys(db, table);
    return table;
  });
}

function readKeys(db: BetterSqlite3.Database, table: TableCatalog): void {
  const foreign = db.prepare('select * from pragma_foreign_key_list(?) order by id, seq').all(table.name) as { id: number; table: string; from: string; to: string | null; on_delete: string }[];
  const byId = new Map<number, TableCatalog['foreignKeys'][number]>();
  for (const row of foreign) {
    let key = byId.get(row.id);
    if (key === undefined) {
      key = { columns: [], table: row.table, referencedColumns: [], onDelete: ON_DELETE[row.on_delete.toUpperCase()] ?? 'noAction' };
      byId.set(row.id, key);
    }
    key.columns.push(row.from);
    if (row.to !== null) key.referencedColumns.push(row.to);
  }
  // SQLite numbers a table's foreign keys from the last declared: declaration order is the reverse.
  table.foreignKeys.push(...[...byId.entries()].sort(([a], [b]) => b - a).map(([, key]) => key));
  const indexes = db.prepare('select * from pragma_index_list(?) order by seq desc').all(table.name) as { name: string; unique: number; origin: string; partial: number }[];
  for (const index of indexes) {
    if (index.origin === 'pk' || index.partial === 1) continue;
    const columns = (db.prepare('select name from pragma_index_info(?) order by seqno').all(index.name) as { name: string | null }[]).map((r) => r.name);
    if (columns.some((c) => c === null)) continue; // an expression index
    (index.unique === 1 ? table.uniques : table.indexes).push(columns as string[]);
  }
}

/**
 * `CHECK (<column> IN ('a', 'b'))` of a CREATE TABLE's text, by lowercased column name: an enum's
 * values, as SQLite spells an enum.
 */
export function inListChecks(sql: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const pattern = /\bcheck\s*\(\s*["`[]?(\w+)["`\]]?\s+in\s*\(((?:\s*'(?:[^']|'')*'\s*,?)+)\)\s*\)/gi;
  for (const match of sql.matchAll(pattern)) {
    const [, column = '', list = ''] = match;
    const values = [...list.matchAll(/'((?:[^']|'')*)'/g)].map((m) => (m[1] ?? '').replace(/''/g, "'"));
    if (values.length > 0) out.set(column.toLowerCase(), values);
  }
  return out;
}
