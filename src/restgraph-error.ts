/**
 * The base of every error restgraph shows a client or an operator (the kinds are in errors.ts and
 * start-up-errors.ts): a stable code, an HTTP status, a title, and per-location problems.
 */

/** One problem with one input location: a JSON Pointer (RFC 6901) into the body, or a query parameter. */
export interface ErrorDetail {
  /** JSON Pointer into the request body, e.g. `/email`. */
  pointer?: string;
  /** Name of the query parameter at fault, e.g. `sort`. */
  parameter?: string;
  /** Name of the header at fault, e.g. `If-Match`. */
  header?: string;
  /** Character offset of the problem in the parameter's value (filter expressions). */
  offset?: number;
  /** The database constraint that refused the write (its name), when it is one the database names. */
  constraint?: string;
  detail: string;
}

/** Prefix of every problem `type` URI; the code follows. */
export const PROBLEM_TYPE_PREFIX = 'urn:restgraph:problem:';

/**
 * Most per-location problems one error lists; the others are counted in `errorsOmitted`, so that
 * a request with thousands of problems (50,000 unknown fields in a 639 KB body) gets a small answer.
 */
export const MAX_LISTED_ERRORS = 100;

export abstract class RestgraphError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  abstract readonly title: string;
  /** Per-location problems (validation, query parsing): the first {@link MAX_LISTED_ERRORS}. */
  readonly errors: ErrorDetail[] | undefined;
  /** How many problems were found beyond those in `errors` (0 when all are listed). */
  readonly errorsOmitted: number;
  /** Response headers that belong to this error, e.g. `Allow` on a 405. */
  readonly headers: Record<string, string> | undefined;

  /** `errorsOmitted`: problems known to exist beyond `errors`, not in it (counted without being described). */
  constructor(detail: string, options: { errors?: ErrorDetail[]; errorsOmitted?: number; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.errors = options.errors === undefined || options.errors.length <= MAX_LISTED_ERRORS ? options.errors : options.errors.slice(0, MAX_LISTED_ERRORS);
    this.errorsOmitted = Math.max(0, (options.errors?.length ?? 0) - MAX_LISTED_ERRORS) + (options.errorsOmitted ?? 0);
    this.headers = options.headers;
  }
}
