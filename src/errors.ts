/**
 * Every error restgraph can show a client or an operator: one class per kind, each with a stable
 * code, an HTTP status and a title. The code appears in problem+json (`type`, `code`) and in
 * GraphQL `extensions.code`. docs/errors.md documents every code (a test keeps them in sync).
 *
 * What clients see is separate from what is logged: only {@link InternalError} is ever built for a
 * failure we did not foresee, and it says nothing about internals.
 */

import { RestgraphError, type ErrorDetail } from './restgraph-error.js';

export * from './restgraph-error.js';
export * from './start-up-errors.js';

// ---- 4xx: the request is at fault ----------------------------------------------------------

export class MalformedJsonError extends RestgraphError {
  readonly code = 'malformed-json';
  readonly status = 400;
  readonly title = 'Malformed JSON';
}

export class InvalidQueryError extends RestgraphError {
  readonly code = 'invalid-query';
  readonly status = 400;
  readonly title = 'Invalid query parameters';
}

/**
 * json-server's `GET /db` (`--compat json-server`) of a data set it does not answer whole: a
 * collection holds more rows than the largest page.
 */
export class DataSetTooLargeError extends RestgraphError {
  readonly code = 'data-set-too-large';
  readonly status = 400;
  readonly title = 'Data set too large';
}

export class BadRequestError extends RestgraphError {
  readonly code = 'bad-request';
  readonly status = 400;
  readonly title = 'Bad request';
}

/** No credential where one is needed (RFC 6750, section 3). */
export class AuthenticationRequiredError extends RestgraphError {
  readonly code = 'authentication-required';
  readonly status = 401;
  readonly title = 'Authentication required';
  constructor(detail: string) {
    super(detail, { headers: { 'www-authenticate': 'Bearer realm="restgraph"' } });
  }
}

/** A credential was sent but is not valid: unknown, revoked, expired, malformed or badly signed. */
export class InvalidTokenError extends RestgraphError {
  readonly code = 'invalid-token';
  readonly status = 401;
  readonly title = 'Invalid token';
  constructor(detail: string) {
    super(detail, { headers: { 'www-authenticate': `Bearer realm="restgraph", error="invalid_token", error_description="${detail.replace(/["\\]/g, '')}"` } });
  }
}

/**
 * A sign-in, refresh or password check failed: the same answer whatever was wrong (unknown
 * identifier, wrong password, used or revoked refresh token), so it tells nothing about accounts.
 */
export class InvalidCredentialsError extends RestgraphError {
  readonly code = 'invalid-credentials';
  readonly status = 401;
  readonly title = 'Invalid credentials';
  /** A 401 names its scheme (RFC 9110, section 15.5.2). */
  constructor(detail: string) {
    super(detail, { headers: { 'www-authenticate': 'Bearer realm="restgraph"' } });
  }
}

/** The credential is valid but lacks a scope the operation needs. */
export class ForbiddenError extends RestgraphError {
  readonly code = 'forbidden';
  readonly status = 403;
  readonly title = 'Forbidden';
  /** With `requiredScopes`, says which would do (RFC 6750 insufficient_scope); without, no scope would. */
  constructor(detail: string, requiredScopes: readonly string[] = [], errors?: ErrorDetail[]) {
    super(detail, {
      ...(requiredScopes.length > 0 ? { headers: { 'www-authenticate': `Bearer realm="restgraph", error="insufficient_scope", scope="${requiredScopes.join(' ')}"` } } : {}),
      ...(errors === undefined ? {} : { errors }),
    });
  }
}

export class NotFoundError extends RestgraphError {
  readonly code = 'not-found';
  readonly status = 404;
  readonly title = 'Not found';
}

export class MethodNotAllowedError extends RestgraphError {
  readonly code = 'method-not-allowed';
  readonly status = 405;
  readonly title = 'Method not allowed';
}

export class NotAcceptableError extends RestgraphError {
  readonly code = 'not-acceptable';
  readonly status = 406;
  readonly title = 'Not acceptable';
}

export class UniqueConflictError extends RestgraphError {
  readonly code = 'unique-conflict';
  readonly status = 409;
  readonly title = 'Unique constraint violated';
}

/** A database exclusion constraint (PostgreSQL's EXCLUDE) refused the row: it conflicts with another. */
export class ExclusionConflictError extends RestgraphError {
  readonly code = 'exclusion-conflict';
  readonly status = 409;
  readonly title = 'Exclusion constraint violated';
}

export class ReferenceConflictError extends RestgraphError {
  readonly code = 'reference-conflict';
  readonly status = 409;
  readonly title = 'Still referenced';
}

export class IdempotencyKeyInUseError extends RestgraphError {
  readonly code = 'idempotency-key-in-use';
  readonly status = 409;
  readonly title = 'Idempotency key in use';
}

export class PreconditionFailedError extends RestgraphError {
  readonly code = 'precondition-failed';
  readonly status = 412;
  readonly title = 'Precondition failed';
}

export class PayloadTooLargeError extends RestgraphError {
  readonly code = 'payload-too-large';
  readonly status = 413;
  readonly title = 'Payload too large';
}

export class UriTooLongError extends RestgraphError {
  readonly code = 'uri-too-long';
  readonly status = 414;
  readonly title = 'URI too long';
}

export class UnsupportedMediaTypeError extends RestgraphError {
  readonly code = 'unsupported-media-type';
  readonly status = 415;
  readonly title = 'Unsupported media type';
}

export class RangeNotSatisfiableError extends RestgraphError {
  readonly code = 'range-not-satisfiable';
  readonly status = 416;
  readonly title = 'Range not satisfiable';
}

export class ValidationError extends RestgraphError {
  readonly code = 'validation-failed';
  readonly status = 422;
  readonly title = 'Validation failed';
}

export class IdempotencyKeyReusedError extends RestgraphError {
  readonly code = 'idempotency-key-reused';
  readonly status = 422;
  readonly title = 'Idempotency key reused with another request';
}

/** A quota is used up (RateLimit-Policy names it); Retry-After says when the window resets. */
export class RateLimitedError extends RestgraphError {
  readonly code = 'rate-limited';
  readonly status = 429;
  readonly title = 'Too many requests';
}

export class HeaderFieldsTooLargeError extends RestgraphError {
  readonly code = 'header-fields-too-large';
  readonly status = 431;
  readonly title = 'Request header fields too large';
}

/**
 * An OpenID Connect (or GitHub OAuth) sign-in could not be completed: no sign-in in progress (the
 * state cookie is missing, expired or altered), a state that does not match, an error the provider
 * answered, a code or ID token the provider's checks refuse. Start again at `/start`.
 */
export class OidcSignInFailedError extends RestgraphError {
  readonly code = 'oidc-sign-in-failed';
  readonly status = 400;
  readonly title = 'Sign-in failed';
}

/** The provider vouches for no email address, or for one it has not verified: it cannot be linked to an account. */
export class OidcEmailNotVerifiedError extends RestgraphError {
  readonly code = 'oidc-email-not-verified';
  readonly status = 403;
  readonly title = 'Email not verified';
}

// ---- GraphQL requests: refused before execution (HTTP 400 with application/graphql-response+json) ----

/** The query text is not a GraphQL document. */
export class GraphqlSyntaxError extends RestgraphError {
  readonly code = 'graphql-syntax';
  readonly status = 400;
  readonly title = 'GraphQL syntax error';
}

/** The document does not fit the schema (unknown field, wrong argument type, bad variables …). */
export class GraphqlValidationError extends RestgraphError {
  readonly code = 'graphql-validation';
  readonly status = 400;
  readonly title = 'GraphQL validation failed';
}

/** The query is over one of the protection limits (depth, cost, aliases, directives, tokens). */
export class QueryTooComplexError extends RestgraphError {
  readonly code = 'query-too-complex';
  readonly status = 400;
  readonly title = 'Query too complex';
}

/** An automatic persisted query named by a hash the server does not know (yet): send the query with it. */
export class PersistedQueryNotFoundError extends RestgraphError {
  readonly code = 'persisted-query-not-found';
  readonly status = 400;
  readonly title = 'Persisted query not found';
  constructor() {
    // Apollo clients recognise exactly this message, and then send the query with its hash.
    super('PersistedQueryNotFound');
  }
}

// ---- 5xx: we are at fault, or not ready ------------------------------------------------------

export class InternalError extends RestgraphError {
  readonly code = 'internal';
  readonly status = 500;
  readonly title = 'Internal server error';
  constructor(options: { cause?: unknown } = {}) {
    super('An unexpected error occurred. It has been logged; quote the request id when reporting it.', options);
  }
}

/** A subscriber (GraphQL subscription, event stream) fell too far behind and was disconnected. */
export class SlowConsumerError extends RestgraphError {
  readonly code = 'slow-consumer';
  readonly status = 503;
  readonly title = 'Consumer too slow';
}

export class ServiceUnavailableError extends RestgraphError {
  readonly code = 'service-unavailable';
  readonly status = 503;
  readonly title = 'Service unavailable';
}

/**
 * The database is out of reach or cannot write just now (connections refused or cut, a statement
 * or connection timed out, SQLite's file locked by another process, read-only or full). Nothing
 * was changed, unless the detail says otherwise; retry after `Retry-After` seconds.
 */
export class DatabaseUnavailableError extends RestgraphError {
  readonly code = 'database-unavailable';
  readonly status = 503;
  readonly title = 'Database unavailable';
}

/**
 * The server did not finish answering a request within its time bound (`handlerTimeoutMs`). The
 * work may still complete after this answer: retry writes with the same Idempotency-Key.
 */
export class ServerTimeoutError extends RestgraphError {
  readonly code = 'server-timeout';
  readonly status = 503;
  readonly title = 'Server timeout';
}

/**
 * An account endpoint would send an email (verification, password reset), but this server has no
 * SMTP server configured (`RESTGRAPH_SMTP_URL`) and runs in production, where the links are not
 * written to the log. Nothing was sent or changed.
 */
export class EmailNotConfiguredError extends RestgraphError {
  readonly code = 'email-not-configured';
  readonly status = 503;
  readonly title = 'Email not configured';
  constructor(detail = 'This server cannot send email: RESTGRAPH_SMTP_URL is not set.') {
    // Like every 503, a Retry-After: an hour, as it takes an operator to change it.
    super(detail, { headers: { 'retry-after': '3600' } });
  }
}

/**
 * The token of an email link (email verification, password reset) is not valid: unknown, expired,
 * already used, or made for the other purpose. One answer for all of them.
 */
export class InvalidLinkTokenError extends RestgraphError {
  readonly code = 'invalid-link-token';
  readonly status = 400;
  readonly title = 'Invalid link token';
}

/**
 * A password sign-in was right, but the account's email is not verified and the schema requires
 * it (`accounts.emailVerification: required`). Said only after the right password, so it tells
 * nothing to someone without it.
 */
export class EmailNotVerifiedError extends RestgraphError {
  readonly code = 'email-not-verified';
  readonly status = 403;
  readonly title = 'Email not verified';
}

/** The SMTP server did not take a message (refused, unreachable, timed out); the log has its answer. */
export class EmailUnavailableError extends RestgraphError {
  readonly code = 'email-unavailable';
  readonly status = 503;
  readonly title = 'Email unavailable';
}

/** A client took longer than the request timeout to send its request. */
export class RequestTimeoutError extends RestgraphError {
  readonly code = 'request-timeout';
  readonly status = 408;
  readonly title = 'Request timeout';
}

/** The sign-in provider could not be reached, or answered something that is not OAuth (discovery, token or user endpoints). */
export class OidcProviderUnavailableError extends RestgraphError {
  readonly code = 'oidc-provider-unavailable';
  readonly status = 502;
  readonly title = 'Sign-in provider unavailable';
}
