/**
 * A result that is there at once or comes later. Work that SQLite answers synchronously returns its
 * value directly, so the hot read path runs without a promise or a microtask per layer; PostgreSQL's
 * answers are promises. Callers that only `await` need not care which they got (graphql-js's
 * `PromiseOrValue`, for the same reason).
 */
export type PromiseOrValue<T> = T | Promise<T>;

/** Whether a result comes later. */
export function isPromise<T>(value: PromiseOrValue<T>): value is Promise<T> {
  return value instanceof Promise;
}
