import { createHash } from 'node:crypto';

/** The names and shapes the capture triggers and the relay share (see capture-triggers.ts). */

export type CaptureOperation = 'insert' | 'update' | 'delete';

export const CAPTURE_OPERATIONS: readonly CaptureOperation[] = Object.freeze(['insert', 'update', 'delete']);

/** restgraph's table of captured changes (PostgreSQL: in the system schema). */
export const CAPTURED_CHANGES_TABLE = '_restgraph_captured_changes';

/** The signal channel the PostgreSQL trigger function notifies (scoped as PostgresSignals scopes its channels). */
export const CAPTURE_CHANNEL = 'restgraph_capture';

/** Every trigger of restgraph capture begins so. */
export const CAPTURE_TRIGGER_PREFIX = 'restgraph_capture_';

/** A mapped table to capture. */
export interface CaptureTable {
  table: string;
}

/** Where capture is installed, as `capture status` shows it. */
export interface CaptureTableState {
  table: string;
  /** The operations whose trigger is there. */
  installed: CaptureOperation[];
  /** Every trigger is there and is the one `enable` would install (false when the table's columns changed since, on SQLite). */
  current: boolean;
  /** Whether the schema maps the table (false: a trigger left on a table the schema no longer maps). */
  mapped: boolean;
}

/** The capture triggers of one database, on a connection of their own. */
export interface CaptureTriggers {
  /** The database, without credentials. */
  readonly description: string;
  /** Where restgraph's own objects go: `restgraph._restgraph_captured_changes` (PostgreSQL) or `_restgraph_captured_changes`. */
  readonly changesTable: string;
  /** Those of `tables` that are not tables of the database (missing, or views). */
  missing(tables: readonly CaptureTable[]): Promise<string[]>;
  /** What the mapped tables and any table holding a capture trigger have installed. */
  status(tables: readonly CaptureTable[]): Promise<CaptureTableState[]>;
  /** The statements {@link enable} would run, for people to read. */
  enableStatements(tables: readonly CaptureTable[]): Promise<string[]>;
  /** Installs (or replaces) the triggers of `tables`, and what they write to, in one transaction. */
  enable(tables: readonly CaptureTable[]): Promise<void>;
  /** Removes every capture trigger (PostgreSQL: and the function when no trigger uses it any more), in one transaction; resolves to the triggers removed. */
  disable(): Promise<string[]>;
  close(): Promise<void>;
}

export interface CaptureTriggerOptions {
  /** PostgreSQL: the schema of the mapped tables. @default 'public' */
  databaseSchema?: string;
  /** PostgreSQL: the schema of restgraph's own objects (see systemSchemaName). */
  systemSchema: string;
}

/** A capture trigger's name: `restgraph_capture_<table>_<operation>`, within PostgreSQL's 63 bytes (a long table name is cut, and a digest of it added). */
export function captureTriggerName(table: string, operation: CaptureOperation): string {
  const name = `${CAPTURE_TRIGGER_PREFIX}${table}_${operation}`;
  if (Buffer.byteLength(name) <= 63) return name;
  const digest = createHash('sha256').update(table).digest('hex').slice(0, 8);
  let cut = table;
  while (Buffer.byteLength(`${CAPTURE_TRIGGER_PREFIX}${cut}_${digest}_${operation}`) > 63) cut = cut.slice(0, -1);
  return `${CAPTURE_TRIGGER_PREFIX}${cut}_${digest}_${operation}`;
}

/** The operation of a capture trigger's name. */
export function operationOfTrigger(name: string): CaptureOperation | undefined {
  return CAPTURE_OPERATIONS.find((operation) => name.endsWith(`_${operation}`));
}

/** Double-quotes an identifier. */
export function quoted(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A SQL string literal. */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
