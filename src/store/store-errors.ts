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
 * The database could not do this now, but may in a moment: a conflict with a concurrent
 * transaction it asks to retry (serialization failure, deadlock), a lock not granted in time, or
 * the database out of reach. Adapters answer 503 with Retry-After.
 */
export class TransientStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransientStoreError';
  }
}
