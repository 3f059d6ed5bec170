import pg from 'pg';
import { ValidationError } from '../../errors.js';
import { ConstraintViolation, TransientStoreError, type ConstraintKind } from '../store-errors.js';

/** PostgreSQL's errors as the store reports them (store-errors.ts): constraint violations, passing troubles. */

/** SQLSTATEs of a conflict with a concurrent transaction: serialization failure, deadlock, lock not available. */
const CONFLICTS = new Set(['40001', '40P01', '55P03']);
/**
 * SQLSTATEs and socket errors of a database out of reach: too many connections, the server
 * shutting down or starting, a session ended by the server (terminated, idle in a transaction too
 * long), connections refused or cut.
 */
const UNAVAILABLE = new Set([
  '53300', '57P01', '57P02', '57P03', '25P03', '08000', '08001', '08003', '08004', '08006',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
]);
/** SQLSTATE of a statement cancelled: by statement_timeout (or by an operator). */
const CANCELLED = '57014';
/** SQLSTATE of a value past the database's limits (program_limit_exceeded: an index row too large). */
const PROGRAM_LIMIT_EXCEEDED = '54000';
/** node-postgres's refusal to answer a server's request for a SCRAM password when it has none. */
const NO_PASSWORD = /client password must be a (non-empty )?string/;

/** A failure to connect, in words an operator can act on where node-postgres's are obscure. */
export function explained(error: unknown): unknown {
  if (!(error instanceof Error) || !NO_PASSWORD.test(error.message)) return error;
  return new Error('the server asks for a password, and the URL gives none (postgres://user:password@host:port/database)', { cause: error });
}

/** node-postgres's own errors for a connection that is gone, or an answer that did not come in time (query_timeout). */
const CONNECTION_LOST = /^(Connection terminated|Client has encountered a connection error|Client was closed|Query read timeout)/;

/** Turns PostgreSQL's constraint errors into {@link ConstraintViolation} and passing troubles into {@link TransientStoreError}; anything else passes through. */
export function translatePostgresError(error: unknown): unknown {
  if (error instanceof TransientStoreError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONFLICTS.has(code)) {
    return new TransientStoreError(`the database asks to retry the transaction (${code})`, { cause: error, reason: 'retry' });
  }
  if (typeof code === 'string' && UNAVAILABLE.has(code)) {
    return new TransientStoreError(`the database is out of reach (${code})`, { cause: error, reason: 'unavailable' });
  }
  if (code === CANCELLED) return new TransientStoreError('a statement ran past the statement timeout', { cause: error, reason: 'timeout' });
  if (error instanceof Error && !(error instanceof pg.DatabaseError) && CONNECTION_LOST.test(error.message)) {
    return new TransientStoreError(`the connection to the database failed: ${error.message}`, { cause: error, reason: error.message.startsWith('Query read timeout') ? 'timeout' : 'unavailable' });
  }
  if (!(error instanceof pg.DatabaseError)) return error;
  // Class 22, data exceptions: a value the column's type does not take (a filter's text on a
  // uuid column of a mapped database, an element of an array column, a date out of range).
  // Values are checked before they get here; this says what slipped through, as the client's error.
  if (error.code?.startsWith('22') === true) {
    return new ValidationError(`The database refused a value: ${error.message}.`, { errors: [{ pointer: '', detail: error.message }], cause: error });
  }
  // A value past what the database can hold in a row or an index (an index row of at most 8191 bytes, a key of 400 KB).
  if (error.code === PROGRAM_LIMIT_EXCEEDED) {
    return new ValidationError(`A value is too large for the database: ${error.message}.`, { errors: [{ pointer: '', detail: `is too large for the database (${error.message})` }], cause: error });
  }
  const kind = KINDS[error.code ?? ''];
  if (kind === undefined) return error;
  const facts = {
    ...(error.constraint === undefined ? {} : { constraint: error.constraint }),
    ...(error.table === undefined ? {} : { table: error.table }),
    ...(error.schema === undefined ? {} : { schema: error.schema }),
  };
  switch (kind) {
    case 'notNull':
      return new ConstraintViolation(kind, error.column === undefined ? [] : [error.column], { cause: error, facts });
    case 'trigger':
      // RAISE EXCEPTION 'message' of a trigger (or a function it calls): the schema's own words to the writer.
      return new ConstraintViolation(kind, [], { cause: error, facts: { ...facts, message: error.message } });
    case 'foreignKey': {
      // "update or delete on table "a" violates foreign key constraint "f" on table "b"": rows of b refer to the row.
      const side = error.message.startsWith('update or delete on table') ? 'referenced' : 'referencing';
      return new ConstraintViolation(kind, side === 'referencing' ? keyColumns(error.detail) : [], { cause: error, facts: { ...facts, side } });
    }
    case 'unique':
      return new ConstraintViolation(kind, keyColumns(error.detail), { cause: error, facts });
    default:
      // CHECK: its columns are in the catalog. Exclusion: the DETAIL holds the other row's values too; columns from the catalog.
      return new ConstraintViolation(kind, [], { cause: error, facts });
  }
}

const KINDS: Readonly<Record<string, ConstraintKind>> = {
  '23505': 'unique',
  '23503': 'foreignKey',
  '23502': 'notNull',
  '23514': 'check',
  '23P01': 'exclusion',
  P0001: 'trigger',
};

/**
 * The column names of a DETAIL "Key (email)=(a@example.com) already exists." / "Key (a, "b C")=(…)
 * is not present …" (never its values); none when a key part is an expression (lower(email)): the
 * catalog says then.
 */
function keyColumns(detail: string | undefined): string[] {
  const list = /^Key \(((?:"(?:[^"]|"")*"|[^()"])*)\)=/.exec(detail ?? '')?.[1];
  if (list === undefined) return [];
  const names = list.match(/"(?:[^"]|"")*"|[^,\s]+/g) ?? [];
  return names.map((n) => (n.startsWith('"') ? n.slice(1, -1).replace(/""/g, '"') : n));
}
