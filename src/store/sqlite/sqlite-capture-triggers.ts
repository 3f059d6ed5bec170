import BetterSqlite3 from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { ConfigError } from '../../errors.js';
import {
  CAPTURE_OPERATIONS,
  CAPTURE_TRIGGER_PREFIX,
  CAPTURED_CHANGES_TABLE,
  captureTriggerName,
  literal,
  operationOfTrigger,
  quoted,
  type CaptureOperation,
  type CaptureTable,
  type CaptureTableState,
  type CaptureTriggers,
} from '../capture/capture-names.js';

/**
 * The captured-changes table of a SQLite file. Row images are JSON objects of the columns as
 * stored: SQLite's JSON keeps integers exact (int64) and reals round-trip; a BLOB, which JSON
 * cannot hold, is written as {"blob": "<hex>"}. The relay reads values back with SQLite's own JSON
 * functions (never through JavaScript numbers).
 */
export const CAPTURED_CHANGES_STATEMENT = `CREATE TABLE IF NOT EXISTS ${quoted(CAPTURED_CHANGES_TABLE)} (
  seq INTEGER PRIMARY KEY,
  table_name TEXT NOT NULL,
  op TEXT NOT NULL,
  old_row TEXT,
  new_row TEXT,
  captured_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
)`;

/**
 * Makes restgraph's own writes on this connection go unrecorded: a TEMP trigger, which only this
 * connection has, drops each captured row before it is written (restgraph's changes already have
 * their events). Other programs' connections never see it. Creates the captured-changes table
 * first (the TEMP trigger needs it), so that `capture enable` may come later.
 */
export const SKIP_OWN_CAPTURES_SCRIPT = `${CAPTURED_CHANGES_STATEMENT};
CREATE TEMP TRIGGER IF NOT EXISTS "restgraph_capture_skip_own" BEFORE INSERT ON main.${quoted(CAPTURED_CHANGES_TABLE)} BEGIN SELECT RAISE(IGNORE); END`;

/** json_object takes at most 127 arguments (SQLITE_MAX_FUNCTION_ARG's default): columns go in groups. */
const COLUMNS_PER_CALL = 50;

/** A JSON object of a row image (`NEW` or `OLD`) with every column, a BLOB as {"blob": hex}. */
function rowJson(image: 'NEW' | 'OLD', columns: readonly string[]): string {
  const value = (column: string): string => {
    const ref = `${image}.${quoted(column)}`;
    return `CASE WHEN typeof(${ref}) = 'blob' THEN json_object('blob', hex(${ref})) ELSE ${ref} END`;
  };
  let json = '';
  for (let i = 0; i < columns.length || i === 0; i += COLUMNS_PER_CALL) {
    const group = columns.slice(i, i + COLUMNS_PER_CALL);
    if (i === 0) json = `json_object(${group.map((c) => `${literal(c)}, ${value(c)}`).join(', ')})`;
    // json_set keeps a null (json_patch would remove the key).
    else json = `json_set(${json}, ${group.map((c) => `${literal(`$."${c.replace(/"/g, '\\"')}"`)}, ${value(c)}`).join(', ')})`;
  }
  return json;
}

/** The CREATE TRIGGER of one table and operation (as sqlite_master keeps it: compared by `status`). */
export function sqliteTriggerStatement(table: CaptureTable & { columns: readonly string[] }, operation: CaptureOperation): string {
  const name = quoted(captureTriggerName(table.table, operation));
  const into = `INSERT INTO ${quoted(CAPTURED_CHANGES_TABLE)} (table_name, op, old_row, new_row)`;
  const tableName = literal(table.table);
  const body =
    operation === 'insert'
      ? `${into} VALUES (${tableName}, 'I', NULL, ${rowJson('NEW', table.columns)});`
      : operation === 'delete'
        ? `${into} VALUES (${tableName}, 'D', ${rowJson('OLD', table.columns)}, NULL);`
        : // An update that changes nothing is not recorded.
          `${into} SELECT ${tableName}, 'U', o, n FROM (SELECT ${rowJson('OLD', table.columns)} AS o, ${rowJson('NEW', table.columns)} AS n) WHERE o IS NOT n;`;
  return `CREATE TRIGGER ${name} AFTER ${operation.toUpperCase()} ON ${quoted(table.table)} BEGIN ${body} END`;
}

export function openSqliteCaptureTriggers(file: string, description: string): CaptureTriggers {
  if (file === '' || file === ':memory:' || !existsSync(file)) throw new ConfigError('DATABASE_URL', `there is no SQLite database at ${file}`);
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(file, { fileMustExist: true, timeout: 5000 });
  } catch (error) {
    throw new ConfigError('DATABASE_URL', `cannot open SQLite database ${file}: ${(error as Error).message}`);
  }
  const triggers = (): { table: string; name: string; sql: string }[] =>
    db
      .prepare<[number, string], { table: string; name: string; sql: string }>("SELECT tbl_name AS \"table\", name, sql FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, ?) = ? ORDER BY tbl_name, name")
      .all(CAPTURE_TRIGGER_PREFIX.length, CAPTURE_TRIGGER_PREFIX);
  // The triggers list the table's columns as they are now (generated ones too; not a virtual table's hidden ones).
  const withColumns = (table: CaptureTable): CaptureTable & { columns: string[] } => ({
    table: table.table,
    columns: db.prepare<[string], { name: string }>('SELECT name FROM pragma_table_xinfo(?) WHERE hidden <> 1 ORDER BY cid').all(table.table).map((c) => c.name),
  });
  const enableStatements = (tables: readonly CaptureTable[]): string[] => {
    const statements = [CAPTURED_CHANGES_STATEMENT];
    for (const table of tables.map(withColumns)) {
      for (const operation of CAPTURE_OPERATIONS) {
        statements.push(`DROP TRIGGER IF EXISTS ${quoted(captureTriggerName(table.table, operation))}`, sqliteTriggerStatement(table, operation));
      }
    }
    return statements;
  };
  const inTransaction = <T>(work: () => T): T => {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
  };
  return {
    description,
    changesTable: CAPTURED_CHANGES_TABLE,
    status(tables) {
      const present = triggers();
      const named = new Set(tables.map((t) => t.table));
      const states: CaptureTableState[] = [];
      for (const table of tables.map(withColumns)) {
        const installed = CAPTURE_OPERATIONS.filter((operation) => present.some((t) => t.name === captureTriggerName(table.table, operation)));
        const current = CAPTURE_OPERATIONS.every((operation) => present.some((t) => t.name === captureTriggerName(table.table, operation) && t.sql === sqliteTriggerStatement(table, operation)));
        states.push({ table: table.table, installed, current, mapped: true });
      }
      for (const table of new Set(present.map((t) => t.table).filter((t) => !named.has(t)))) {
        const installed = CAPTURE_OPERATIONS.filter((operation) => present.some((t) => t.table === table && operationOfTrigger(t.name) === operation));
        states.push({ table, installed, current: false, mapped: false });
      }
      return Promise.resolve(states);
    },
    missing(tables) {
      const isTable = db.prepare<[string], { one: number }>("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ?");
      return Promise.resolve(tables.map((t) => t.table).filter((t) => isTable.get(t) === undefined));
    },
    enableStatements: (tables) => Promise.resolve(enableStatements(tables)),
    enable(tables) {
      inTransaction(() => {
        for (const statement of enableStatements(tables)) db.exec(statement);
      });
      return Promise.resolve();
    },
    disable() {
      return Promise.resolve(
        inTransaction(() =>
          triggers()
            .filter((t) => operationOfTrigger(t.name) !== undefined)
            .map((t) => {
              db.exec(`DROP TRIGGER ${quoted(t.name)}`);
              return `${t.table}: ${t.name}`;
            }),
        ),
      );
    },
    close() {
      db.close();
      return Promise.resolve();
    },
  };
}
