/** What a violated constraint is: how the client sees it depends on it (409 or 422). */
export type ConstraintKind = 'unique' | 'exclusion' | 'foreignKey' | 'notNull' | 'check' | 'trigger';

/**
 * One constraint as the database's catalog describes it: schema, never data. `table` is the table
 * it belongs to (a foreign key's: the referencing table), `columns` its columns there.
 */
export interface ConstraintDescription {
  /** Its name (a unique index's name for a unique index); absent where the database keeps none (SQLite's foreign keys, unnamed CHECKs). */
  name?: string;
  table?: string;
  columns: readonly string[];
  /** A CHECK's expression, as the schema has it. */
  expression?: string;
  /** A foreign key's referenced table. */
  referencedTable?: string;
}

/** What the database said about a violation, beyond its kind and columns (see {@link ConstraintViolation}). */
export interface ViolationFacts {
  /** The constraint's name (PostgreSQL; SQLite: a named CHECK's name). */
  constraint?: string;
  /** The table of the statement's row (a foreign key refused on a delete: the referencing table). */
  table?: string;
  /** The PostgreSQL schema of `table`. */
  schema?: string;
  /** A CHECK SQLite names by its expression (an unnamed one). */
  expression?: string;
  /** A foreign key: `referenced` when rows elsewhere still refer to the row a delete or update would take away; `referencing` when the row written refers to no row. Absent: the database does not say (SQLite). */
  side?: 'referenced' | 'referencing';
  /** The message a trigger raised. */
  message?: string;
  /** The constraints involved, once looked up in the catalog (see SqlDatabase.describeViolation); several when the database does not say which failed. */
  described?: readonly ConstraintDescription[];
}

/**
 * Constraint violations as the store reports them, whatever the dialect. The core turns them
 * into client errors (409, 422); drivers' own error types never leave the store. Only schema is
 * kept (names, columns, expressions), never the values of a row: the database's own message may
 * hold the failing row, or another row's values (PostgreSQL's DETAIL).
 */
export class ConstraintViolation extends Error {
  readonly facts: ViolationFacts;

  constructor(
    readonly kind: ConstraintKind,
    /** Columns involved, when the driver says. */
    readonly columns: readonly string[],
    options?: { cause?: unknown; facts?: ViolationFacts },
  ) {
    super(`${kind} constraint violated${columns.length > 0 ? ` on ${columns.join(', ')}` : ''}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ConstraintViolation';
    this.facts = options?.facts ?? {};
  }

  /** The same violation, with more facts (the catalog's). */
  with(facts: ViolationFacts, columns = this.columns): ConstraintViolation {
    return new ConstraintViolation(this.kind, columns, { cause: this.cause, facts: { ...this.facts, ...facts } });
  }
}

/**
 * Why the database could not do something now:
 * - `retry`: a conflict with a concurrent transaction it asks to retry (serialization failure,
 *   deadlock, a row lock not granted in time): the same request may well succeed at once;
 * - `unavailable`: the database is out of reach (connections refused or cut, too many clients,
 *   shutting down), or cannot write (SQLite: another process holding the write lock for too long,
 *   the file read-only, the disk full or failing);
 * - `timeout`: it did not answer within the time allowed (statement or query timeout).
 */
export type TransientReason = 'retry' | 'unavailable' | 'timeout';

/**
 * The database could not do this now, but may in a moment (see {@link TransientReason}). Adapters
 * answer 503 with Retry-After: `service-unavailable` for a conflict, `database-unavailable` otherwise.
 */
export class TransientStoreError extends Error {
  readonly reason: TransientReason;

  constructor(message: string, options: { cause?: unknown; reason?: TransientReason } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TransientStoreError';
    this.reason = options.reason ?? 'retry';
  }
}
