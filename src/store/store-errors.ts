/**
 * Constraint violations as the store reports them, whatever the dialect. The core turns them
 * into client errors (409, 422); drivers' own error types never leave the store.
 */
export class ConstraintViolation extends Error {
  constructor(
    readonly kind: 'unique' | 'foreignKey' | 'notNull' | 'check',
    /** Columns involved, when the driver says. */
    readonly columns: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(`${kind} constraint violated${columns.length > 0 ? ` on ${columns.join(', ')}` : ''}`, options);
    this.name = 'ConstraintViolation';
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
