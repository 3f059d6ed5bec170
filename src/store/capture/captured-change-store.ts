import type { SqlDatabase, SqlExecutor, SqlRow } from '../sql-database.js';
import { CAPTURE_CHANNEL, CAPTURED_CHANGES_TABLE, literal, quoted, type CaptureOperation } from './capture-names.js';

/** A mapped table whose captured rows are read: its name and its fields' columns (the rows come back keyed by field). */
export interface CapturedTable {
  table: string;
  /** [field, column] of each field, in the resource's order. */
  columns: readonly (readonly [string, string])[];
}

/** One row another program changed, its images as a SELECT of the table returns them, keyed by field name. */
export interface CapturedChange {
  seq: number;
  table: string;
  operation: CaptureOperation;
  /** When the trigger recorded it (ISO 8601). */
  capturedAt: string;
  /** The row before (updates and deletes); undefined for a table this store was not told of. */
  before?: SqlRow;
  /** The row after (inserts and updates); undefined for a table this store was not told of. */
  after?: SqlRow;
}

export interface CapturedChangeStoreOptions {
  /** PostgreSQL: the schema of the mapped tables. @default 'public' */
  databaseSchema?: string;
  /** PostgreSQL: the schema of restgraph's own objects, where the captured-changes table is. */
  systemSchema: string;
  tables: readonly CapturedTable[];
}

const OPERATIONS: Readonly<Record<string, CaptureOperation>> = { I: 'insert', U: 'update', D: 'delete' };
/** Column names of the image reads that no field can have (fields do not start with _rg_). */
const SEQ = '_rg_seq';
const IMAGE = '_rg_image';

/**
 * restgraph's table of captured changes, as the relay reads and consumes it: the oldest changes
 * first, each row image typed as the table's own columns (PostgreSQL: `jsonb_populate_record` over
 * the table's row type; SQLite: its JSON functions), then deleted in the transaction that appends
 * their events.
 */
export class CapturedChangeStore {
  readonly #db: SqlDatabase;
  readonly #postgres: boolean;
  readonly #changes: string;
  readonly #schema: string;
  readonly #imageSql = new Map<string, string>();
  readonly #lockKey: string;
  /** The captured-changes table was there once (capture was enabled): it is read without asking the catalog. */
  #tableSeen = false;

  constructor(db: SqlDatabase, options: CapturedChangeStoreOptions) {
    this.#db = db;
    this.#postgres = db.rules.product === 'PostgreSQL';
    this.#changes = this.#postgres ? `${quoted(options.systemSchema)}.${quoted(CAPTURED_CHANGES_TABLE)}` : quoted(CAPTURED_CHANGES_TABLE);
    this.#schema = options.databaseSchema ?? 'public';
    // One relay at a time per system schema: two would append one change's events out of order.
    this.#lockKey = literal(`restgraph capture relay ${options.systemSchema}`);
    for (const table of options.tables) this.#imageSql.set(table.table, this.#imagesStatement(table));
  }

  /**
   * The oldest `limit` captured changes, read inside `tx` (the transaction that will consume them),
   * or undefined when another process is relaying just now (PostgreSQL).
   */
  async take(tx: SqlExecutor, limit: number): Promise<CapturedChange[] | undefined> {
    if (this.#postgres) {
      const lock = await tx.one({ sql: `select pg_try_advisory_xact_lock(hashtextextended(${this.#lockKey}, 0)) as locked`, parameters: [] });
      if (lock?.locked !== true) return undefined;
    }
    const where = this.#postgres ? 'where table_schema = $1 order by seq limit $2' : 'ORDER BY seq LIMIT ?';
    // The instant as the outbox's occurredAt holds it (ISO 8601 in UTC, milliseconds): webhooks compare it with their creation.
    const capturedAt = this.#postgres ? `to_char(captured_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as captured_at` : 'captured_at';
    const rows = await tx.all({
      sql: `select seq, table_name, op, ${capturedAt} from ${this.#changes} ${where}`,
      parameters: this.#postgres ? [this.#schema, limit] : [limit],
      reuse: true,
    });
    const changes: CapturedChange[] = rows.map((row) => ({
      seq: Number(row.seq),
      table: String(row.table_name),
      operation: OPERATIONS[String(row.op).trim()] ?? 'update',
      capturedAt: row.captured_at instanceof Date ? row.captured_at.toISOString() : String(row.captured_at),
    }));
    const first = changes[0]?.seq;
    const last = changes.at(-1)?.seq;
    if (first === undefined || last === undefined) return changes;
    const bySeq = new Map(changes.map((c) => [c.seq, c]));
    for (const table of new Set(changes.map((c) => c.table))) {
      const sql = this.#imageSql.get(table);
      if (sql === undefined) continue;
      const images = await tx.all({ sql, parameters: this.#postgres ? [first, last, this.#schema, table] : [first, last, table, first, last, table], reuse: true });
      for (const image of images) {
        const { [SEQ]: seq, [IMAGE]: which, ...row } = image;
        const change = bySeq.get(Number(seq));
        if (change === undefined) continue;
        if (which === 'o') change.before = row;
        else change.after = row;
      }
    }
    return changes;
  }

  /** Deletes the captured changes up to `seq` (those just relayed), in the transaction that appended their events. */
  async consume(tx: SqlExecutor, throughSeq: number): Promise<void> {
    await tx.run({
      sql: this.#postgres ? `delete from ${this.#changes} where table_schema = $1 and seq <= $2` : `DELETE FROM ${this.#changes} WHERE seq <= ?`,
      parameters: this.#postgres ? [this.#schema, throughSeq] : [throughSeq],
      reuse: true,
    });
  }

  /** Whether a captured change waits (false while the table is not there: capture never enabled). */
  async waiting(): Promise<boolean> {
    // Until the table is there, the catalog is asked: a query of a missing table would put an error in the database's log at every poll.
    if (!this.#tableSeen) {
      const present = await this.#db.one(
        this.#postgres
          ? { sql: 'select to_regclass($1) is not null as present', parameters: [this.#changes] }
          : { sql: "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = ?", parameters: [CAPTURED_CHANGES_TABLE] },
      );
      if (present === undefined || (this.#postgres && present.present !== true)) return false;
      this.#tableSeen = true;
    }
    const row = await this.#db.one({ sql: `select 1 as one from ${this.#changes} limit 1`, parameters: [], reuse: true });
    return row !== undefined;
  }

  /** Calls `onChange` when a trigger of another process's transaction notified (PostgreSQL; SQLite polls). */
  async watch(onChange: () => void): Promise<void> {
    await this.#db.signals?.listen(CAPTURE_CHANNEL, onChange);
  }

  /** The read of one table's row images between two seqs: before ('o') and after ('n') images, keyed by field. */
  #imagesStatement(table: CapturedTable): string {
    if (this.#postgres) {
      const rowType = `${quoted(this.#schema)}.${quoted(table.table)}`;
      const select = (image: 'o' | 'n', column: 'old_row' | 'new_row'): string =>
        `select c.seq as ${quoted(SEQ)}, '${image}' as ${quoted(IMAGE)}${table.columns.map(([field, col]) => `, r.${quoted(col)} as ${quoted(field)}`).join('')}
from ${this.#changes} c cross join lateral jsonb_populate_record(null::${rowType}, c.${column}) r
where c.seq between $1 and $2 and c.table_schema = $3 and c.table_name = $4 and c.${column} is not null`;
      return `${select('o', 'old_row')}\nunion all\n${select('n', 'new_row')}`;
    }
    const select = (image: 'o' | 'n', column: 'old_row' | 'new_row'): string => {
      const value = (col: string): string => {
        const at = `${column} -> ${literal(col)}`;
        return `CASE json_type(${at}) WHEN 'object' THEN unhex(${at} ->> 'blob') ELSE ${column} ->> ${literal(col)} END`;
      };
      return `SELECT seq AS ${quoted(SEQ)}, '${image}' AS ${quoted(IMAGE)}${table.columns.map(([field, col]) => `, ${value(col)} AS ${quoted(field)}`).join('')}
FROM ${this.#changes} WHERE seq BETWEEN ? AND ? AND table_name = ? AND ${column} IS NOT NULL`;
    };
    return `${select('o', 'old_row')}\nUNION ALL\n${select('n', 'new_row')}`;
  }
}

/**
 * Makes the writes of this process's connections go unrecorded by the capture triggers (their
 * events are written with them). PostgreSQL: every write transaction sets
 * `restgraph.capture_skip` (PostgresDatabase.transaction), nothing to do here. SQLite: a TEMP
 * trigger on the writer connection, which other programs' connections do not have (see
 * SKIP_OWN_CAPTURES_SCRIPT). Call once, when the process opens a mapped SQLite database.
 */
export async function leaveOwnWritesUncaptured(db: SqlDatabase): Promise<void> {
  if (db.rules.product !== 'SQLite') return;
  const { SKIP_OWN_CAPTURES_SCRIPT } = await import('../sqlite/sqlite-capture-triggers.js');
  await db.exec(SKIP_OWN_CAPTURES_SCRIPT);
}
