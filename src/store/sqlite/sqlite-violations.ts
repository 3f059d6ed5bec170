import type BetterSqlite3 from 'better-sqlite3';
import type { ConstraintDescription, ConstraintViolation } from '../store-errors.js';

/**
 * What SQLite's catalog says of a constraint violation its message leaves vague (see
 * sqlite-connection.ts): the unique index of a set of columns, a CHECK's expression and columns,
 * the foreign keys that may have failed (SQLite says none). Schema only: no row is read.
 */

/** How much of a table's SQL is searched for a CHECK: a schema's text, not data. */
const MAX_TABLE_SQL = 1_000_000;

/**
 * `violation` with `facts.described`. `table`: the table the statement wrote, or deleted from
 * (`deleting`), as the caller knows it (SQLite's foreign key message names none).
 */
export function describeSqliteViolation(db: BetterSqlite3.Database, violation: ConstraintViolation, table: string, deleting: boolean): ConstraintViolation {
  const own = violation.facts.table ?? table;
  switch (violation.kind) {
    case 'unique':
      return violation.with({ described: [uniqueIndex(db, own, violation.columns, violation.facts.constraint)] });
    case 'check': {
      const check = checkOf(db, own, violation.facts.constraint, violation.facts.expression);
      return violation.with({ described: [check] }, check.columns);
    }
    case 'foreignKey':
      return deleting
        ? violation.with({ side: 'referenced', described: referencesTo(db, own) })
        : violation.with({ side: 'referencing', described: referencesFrom(db, own) });
    case 'notNull':
      return violation.with({ described: [{ table: own, columns: violation.columns }] });
    default:
      return violation;
  }
}

/** The unique index over exactly `columns` (or the one named), with its columns; unnamed for a primary key. */
function uniqueIndex(db: BetterSqlite3.Database, table: string, columns: readonly string[], named: string | undefined): ConstraintDescription {
  if (named !== undefined) return { name: named, table, columns: indexColumns(db, named) };
  const indexes = db.prepare("select name, origin from pragma_index_list(?) where \"unique\" = 1").all(table) as { name: string; origin: string }[];
  for (const index of indexes) {
    const names = indexColumns(db, index.name);
    if (names.length === columns.length && names.every((n) => columns.includes(n))) {
      // SQLite names the index of a UNIQUE clause itself (sqlite_autoindex_…): not a name anyone wrote.
      return index.origin === 'c' ? { name: index.name, table, columns } : { table, columns };
    }
  }
  return { table, columns };
}

function indexColumns(db: BetterSqlite3.Database, index: string): string[] {
  return (db.prepare('select name from pragma_index_info(?) order by seqno').all(index) as { name: string | null }[]).flatMap((r) => (r.name === null ? [] : [r.name]));
}

/**
 * A CHECK by its name, or by the words SQLite gives for an unnamed one (its expression, cut short
 * at times: `check ("price" < 10)` is said `price`), as the table's SQL has it; its columns are the
 * table's columns it names.
 */
function checkOf(db: BetterSqlite3.Database, table: string, name: string | undefined, said: string | undefined): ConstraintDescription {
  const sql = ((db.prepare("select sql from sqlite_master where type = 'table' and name = ?").get(table) as { sql: string | null } | undefined)?.sql ?? '').slice(0, MAX_TABLE_SQL);
  const checks = checksIn(sql);
  const words = said ?? name ?? '';
  const named = checks.find((c) => c.name !== undefined && name !== undefined && c.name.toLowerCase() === name.toLowerCase());
  const unnamed = checks.filter((c) => c.name === undefined && (c.expression === words || c.expression.replace(/["`[\]]/g, '').includes(words)));
  const found = named ?? (unnamed.length === 1 ? unnamed[0] : undefined);
  const expression = found?.expression ?? words;
  const columns = tableColumns(db, table).filter((column) => mentions(expression, column));
  return { ...(found?.name === undefined ? {} : { name: found.name }), table, columns, ...(expression === '' ? {} : { expression }) };
}

/** The CHECK clauses of a table's SQL: each expression (parentheses balanced), with its name when it has one. */
function checksIn(sql: string): { name?: string; expression: string }[] {
  const found: { name?: string; expression: string }[] = [];
  const start = /(?:constraint\s+("(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]|'[^']*'|[\w$]+)\s+)?check\s*\(/gi;
  for (let match = start.exec(sql); match !== null; match = start.exec(sql)) {
    const end = closing(sql, match.index + match[0].length);
    if (end === undefined) break;
    const quoted = match[1];
    const expression = sql.slice(match.index + match[0].length, end).trim();
    found.push(quoted === undefined ? { expression } : { name: /^["`[']/.test(quoted) ? quoted.slice(1, -1) : quoted, expression });
    start.lastIndex = end;
  }
  return found;
}

/** The index of the parenthesis that closes the one opened just before `from` (quoted text skipped). */
function closing(sql: string, from: number): number | undefined {
  let depth = 1;
  for (let i = from; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      if (end < 0) return undefined;
      i = end;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return undefined;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function tableColumns(db: BetterSqlite3.Database, table: string): string[] {
  return (db.prepare('select name from pragma_table_info(?) order by cid').all(table) as { name: string }[]).map((r) => r.name);
}

/** Whether an SQL expression names a column (as a word, or quoted), case-insensitively as SQLite does. */
function mentions(expression: string, column: string): boolean {
  const name = escape(column);
  return new RegExp(`"${name}"|\`${name}\`|\\[${name}\\]|(?<![\\w$"'])${name}(?![\\w$"'])`, 'i').test(expression);
}

interface ForeignKeyRow {
  id: number;
  table: string;
  from: string;
  on_delete: string;
}

/** The foreign keys of `table` (each may be the one that failed: SQLite does not say). */
function referencesFrom(db: BetterSqlite3.Database, table: string): ConstraintDescription[] {
  return foreignKeys(db, table).map((keys) => ({ table, columns: keys.map((k) => k.from), referencedTable: keys[0]?.table ?? '' }));
}

/** The foreign keys of any table that refer to `table` and refuse its rows' deletion (NO ACTION, RESTRICT). */
function referencesTo(db: BetterSqlite3.Database, table: string): ConstraintDescription[] {
  const tables = (db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((r) => r.name);
  const found: ConstraintDescription[] = [];
  for (const child of tables) {
    for (const keys of foreignKeys(db, child)) {
      const first = keys[0];
      if (first === undefined || first.table.toLowerCase() !== table.toLowerCase()) continue;
      if (first.on_delete === 'NO ACTION' || first.on_delete === 'RESTRICT') found.push({ table: child, columns: keys.map((k) => k.from), referencedTable: table });
    }
  }
  return found;
}

/** A table's foreign keys, each as its rows (one per column). */
function foreignKeys(db: BetterSqlite3.Database, table: string): ForeignKeyRow[][] {
  const rows = db.prepare('select id, "table", "from", on_delete from pragma_foreign_key_list(?) order by id, seq').all(table) as ForeignKeyRow[];
  const byId = new Map<number, ForeignKeyRow[]>();
  for (const row of rows) byId.set(row.id, [...(byId.get(row.id) ?? []), row]);
  return [...byId.values()];
}
