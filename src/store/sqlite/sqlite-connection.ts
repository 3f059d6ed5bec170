import BetterSqlite3 from 'better-sqlite3';
import type { SqlRow } from '../sql-database.js';
import { ConstraintViolation, TransientStoreError } from '../store-errors.js';
import { FOLD_CASE_FUNCTION, foldCase } from '../fold-case.js';

/** A prepared statement of ours: rows as the driver returns them. */
export type Statement = BetterSqlite3.Statement<unknown[], SqlRow>;

/**
 * When SQLite waits for the disk at a commit (its `synchronous` pragma, in WAL mode):
 * - `FULL`: at every commit; a commit acknowledged is on disk, and survives a power loss or an
 *   operating system crash;
 * - `NORMAL`: only at checkpoints; a commit survives the process crashing, but the last ones may
 *   roll back if the machine loses power or the OS crashes.
 */
export type SqliteSynchronous = 'FULL' | 'NORMAL';

/**
 * Opens a connection. Setting it up may wait for another process's lock (the switch to WAL):
 * nothing is served yet. Then the busy handler is turned off: see {@link SqliteDatabase}.
 */
export function openConnection(filename: string, lockTimeoutMs: number, synchronous: SqliteSynchronous): BetterSqlite3.Database {
  const db = new BetterSqlite3(filename, { timeout: lockTimeoutMs });
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 0');
  // Filters' `~` folds case for all of Unicode; SQLite's lower() folds A–Z only.
  db.function(FOLD_CASE_FUNCTION, { deterministic: true }, (text: unknown) => (typeof text === 'string' ? foldCase(text) : text));
  return db;
}

/** Resolves after `ms`, on a timer. */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** SQLITE_BUSY and its extended codes: a lock another connection holds. */
export function isBusy(error: unknown): boolean {
  return error instanceof BetterSqlite3.SqliteError && (error.code === 'SQLITE_BUSY' || error.code.startsWith('SQLITE_BUSY_'));
}

/**
 * Result codes (and their extended forms) of a database that cannot write or read its file just
 * now: read-only (a read-only mount, an immutable file), the disk full, an I/O error, the file
 * unopenable, no permission, a lock protocol failure.
 */
const CANNOT_WRITE = /^SQLITE_(READONLY|FULL|IOERR|CANTOPEN|PERM|PROTOCOL)(_|$)/;

export function prepare(db: BetterSqlite3.Database, cache: Map<string, Statement>, sql: string): Statement {
  let statement = cache.get(sql);
  if (statement === undefined) {
    statement = db.prepare<unknown[], SqlRow>(sql);
    if (cache.size > 500) cache.clear();
    cache.set(sql, statement);
  }
  return statement;
}

export function runAll(statement: Statement, parameters: readonly unknown[]): SqlRow[] {
  try {
    return statement.reader ? statement.all(...parameters) : (statement.run(...parameters), []);
  } catch (error) {
    throw translateSqliteError(error);
  }
}

export function runOne(statement: Statement, parameters: readonly unknown[]): SqlRow | undefined {
  try {
    // One parameter (a get by id) is passed as it is: spreading an array costs more than the call.
    return parameters.length === 1 ? statement.get(parameters[0]) : statement.get(...parameters);
  } catch (error) {
    throw translateSqliteError(error);
  }
}

export function runRun(statement: Statement, parameters: readonly unknown[]): number {
  try {
    if (statement.reader) return statement.all(...parameters).length;
    return statement.run(...parameters).changes;
  } catch (error) {
    throw translateSqliteError(error);
  }
}

/**
 * Turns SQLite's constraint errors into {@link ConstraintViolation}, and a lock held elsewhere or
 * a file that cannot be written into {@link TransientStoreError} (`unavailable`); anything else
 * passes through.
 */
export function translateSqliteError(error: unknown): unknown {
  if (!(error instanceof BetterSqlite3.SqliteError)) return error;
  // A read that met another process's exclusive lock (its recovery of the WAL), or a write that did.
  if (isBusy(error)) return new TransientStoreError('another process holds a lock on the database', { cause: error, reason: 'unavailable' });
  if (CANNOT_WRITE.test(error.code)) return new TransientStoreError(`the database file cannot be written or read just now (${error.code})`, { cause: error, reason: 'unavailable' });
  const columns = (/constraint failed: (.*)$/.exec(error.message)?.[1] ?? '')
    .split(',')
    .map((c) => c.trim().split('.').pop() ?? '')
    .filter((c) => c !== '');
  switch (error.code) {
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
      return new ConstraintViolation('unique', columns, { cause: error });
    case 'SQLITE_CONSTRAINT_FOREIGNKEY':
      return new ConstraintViolation('foreignKey', columns, { cause: error });
    case 'SQLITE_CONSTRAINT_NOTNULL':
      return new ConstraintViolation('notNull', columns, { cause: error });
    case 'SQLITE_CONSTRAINT_CHECK':
      return new ConstraintViolation('check', columns, { cause: error });
    // ON DELETE RESTRICT (the user's foreign keys, on a mapped database) fails as a trigger.
    case 'SQLITE_CONSTRAINT_TRIGGER':
      return error.message === 'FOREIGN KEY constraint failed' ? new ConstraintViolation('foreignKey', columns, { cause: error }) : error;
    default:
      return error;
  }
}

/** Longest pause between two tries of a lock held by another process. */
const LOCK_POLL_MAX_MS = 50;

/** What an attempt of {@link retryWhileLocked} returns while another process holds the lock. */
export const LOCKED = Symbol('locked');

/**
 * Calls `attempt` again on timers (after 1 ms, doubling to every 50 ms) while it answers LOCKED:
 * resolves to its first other answer; past `deadline` (Date.now() time), rejects with a
 * TransientStoreError (`unavailable`) saying that another process held `lock`. Errors of
 * `attempt` reject as they are.
 */
export async function retryWhileLocked<T>(attempt: () => T | typeof LOCKED, deadline: number, lock: string): Promise<T> {
  const started = Date.now();
  for (let pause = 1; ; pause = Math.min(pause * 2, LOCK_POLL_MAX_MS)) {
    const left = deadline - Date.now();
    if (left <= 0) throw new TransientStoreError(`waited ${Date.now() - started} ms for ${lock}, which another process holds`, { reason: 'unavailable' });
    await sleep(Math.min(pause, left));
    const outcome = attempt();
    if (outcome !== LOCKED) return outcome;
  }
}
