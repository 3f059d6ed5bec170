import type { Kysely } from 'kysely';
import type { PromiseOrValue } from '../promise-or-value.js';
import type { CommitOrderGuard } from './commit-order-guard.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';
import type { ConstraintViolation } from './store-errors.js';

/**
 * The narrow interface the rest of restgraph needs from a SQL database. Each dialect folder
 * (sqlite/, postgres/) implements it over its driver; nothing above the store layer sees a
 * driver type.
 */

/** A statement compiled by Kysely (or written by hand): SQL text with bound parameters. */
export interface SqlStatement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  /**
   * The text is one of a small fixed set (per schema: get by id, create, the outbox insert), so the
   * database may keep it prepared for the next time. Never set for texts that vary with the request.
   */
  readonly reuse?: boolean;
}

/** A database row as the driver returns it: raw, not yet decoded into field values. */
export type SqlRow = Record<string, unknown>;

export interface SqlExecutor {
  /** Runs a statement that returns rows (SELECT, or a write with RETURNING). */
  all(statement: SqlStatement): Promise<SqlRow[]>;
  /**
   * Runs a statement that returns at most one row: it, or undefined. A synchronous driver (SQLite)
   * answers at once, and its errors are thrown, not rejected: await it, or take the value as it is.
   */
  one(statement: SqlStatement): PromiseOrValue<SqlRow | undefined>;
  /** Runs a statement for its effect; resolves to the number of rows it changed. */
  run(statement: SqlStatement): Promise<number>;
}

/**
 * The statements of work that runs without waiting inside a transaction
 * ({@link SqlDatabase.transactionShared}): results at once, errors thrown.
 */
export interface ImmediateExecutor {
  /** Runs a statement that returns at most one row: it, or undefined. */
  one(statement: SqlStatement): SqlRow | undefined;
}

/** Tables are addressed by name at run time, so the query builder is typed loosely on purpose. */
export type DynamicTables = Record<string, Record<string, unknown>>;

/**
 * Wake-ups between processes sharing the database (PostgreSQL's LISTEN/NOTIFY). A signal carries
 * no data, only "look again"; it may be lost, so readers poll as well.
 */
export interface ChangeSignals {
  /** After a commit: tells the other processes to look at `channel` again (coalesced, may be lost). */
  signal(channel: string): void;
  /** Calls `onSignal` when another process signals `channel`. */
  listen(channel: string, onSignal: () => void): Promise<void>;
}

/** What a database's connections are doing at one moment (for metrics). */
export interface ConnectionStats {
  /** Connections open now (PostgreSQL: the pool's, idle or in use; SQLite: the writer and the reader). */
  open: number;
  /** Of those, the ones doing nothing. */
  idle: number;
  /** Queries waiting for a connection (PostgreSQL), or transactions waiting for the write lock (SQLite). */
  waiting: number;
  /** Most connections there may be. */
  max: number;
}

export interface SqlDatabase extends SqlExecutor {
  /** What SQL and storage look like on this database. */
  readonly rules: SqlDialectRules;
  /**
   * A database server the instances reach over the network (PostgreSQL): several instances may
   * share it, so state they must all see (rate-limit counters) is kept in it by default. False for
   * a file of this machine (SQLite).
   */
  readonly networked: boolean;
  /** A guard for readers of the outbox, where commits may come out of id order (see CommitOrderGuard); absent where they cannot. */
  commitOrderGuard?(): CommitOrderGuard;
  /** Builds and compiles queries only; execution goes through {@link SqlExecutor}. */
  readonly builder: Kysely<DynamicTables>;
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws.
   * Writes are serialised; reads outside the transaction never see its uncommitted rows.
   */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * Runs `work`, which must not wait, at the end of this event-loop turn, in one transaction with
   * the other work handed in during the turn (group commit: one commit, one write of the pages they
   * share, for all of them). Each work is atomic on its own (a savepoint): one that throws is undone
   * and rejects with its error, the others commit. Resolves once the transaction has committed.
   * Only where statements answer at once (SQLite); elsewhere the method is absent.
   */
  transactionShared?<T>(work: (tx: ImmediateExecutor) => T): Promise<T>;
  /**
   * A constraint violation a write met, with what the catalog says of its constraints
   * (`facts.described`: names, columns, CHECK expressions; schema, never rows). `table`: the table
   * the write's statement was on, `deleting` when it deleted (SQLite's foreign key errors say
   * neither). Run after the write's transaction has ended; resolves to the violation as it was
   * when the catalog cannot say.
   */
  describeViolation(violation: ConstraintViolation, table: string, deleting: boolean): Promise<ConstraintViolation>;
  /**
   * Runs `work` with reads that all see one committed state of the database, however long it
   * takes, while other connections go on writing: a read-only transaction (PostgreSQL: REPEATABLE
   * READ READ ONLY; SQLite: a read transaction on a connection of its own). For tools that read a
   * whole database (`restgraph copy`, `export data`); writes through `reader` fail. Not cut short
   * by statement timeouts.
   */
  snapshot<T>(work: (reader: SqlExecutor) => Promise<T>): Promise<T>;
  /** Runs a script of DDL statements outside any transaction (migrations manage their own). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `work` while no other process using this database runs its own exclusive work (schema
   * migrations at start-up: instances starting together must not create the same tables twice).
   * Nested calls (from inside `work`) run at once.
   */
  exclusively<T>(work: () => Promise<T>): Promise<T>;
  /** Signals between processes, where the database has them (undefined: poll only). */
  readonly signals: ChangeSignals | undefined;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Its connections now; costs no query. */
  connectionStats(): ConnectionStats;
  close(): Promise<void>;
}

/** Double-quotes an identifier that has already been checked against the schema. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
