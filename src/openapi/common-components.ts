import type { ListLimits } from '../core/list-query.js';
import { PROBLEM_TYPE_PREFIX } from '../errors.js';
import type { HeaderObject, ParameterObject, SchemaObject } from './openapi-types.js';

/** The name of the bearer security scheme in every document. */
export const BEARER = 'bearer';

/** The problem document of RFC 9457, as restgraph writes it (src/http/problem-details.ts). */
export const PROBLEM_SCHEMAS: Record<string, SchemaObject> = {
  'restgraph.Problem': {
    type: 'object',
    description: 'An error (RFC 9457). Branch on `code`; docs/errors.md describes every code.',
    properties: {
      type: { type: 'string', format: 'uri', description: `\`${PROBLEM_TYPE_PREFIX}<code>\``, examples: [`${PROBLEM_TYPE_PREFIX}not-found`] },
      title: { type: 'string', description: 'A short summary of the kind of problem.' },
      status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status.' },
      detail: { type: 'string', description: 'What went wrong with this request, for people.' },
      instance: { type: 'string', description: 'The path of the request.' },
      code: { type: 'string', description: 'A stable code to branch on.' },
      requestId: { type: 'string', description: 'The X-Request-Id of the response; quote it when reporting a problem.' },
      errors: { type: 'array', items: { $ref: '#/components/schemas/restgraph.ProblemError' }, description: 'Each problem with its location: the first 100.' },
      errorsOmitted: { type: 'integer', minimum: 1, description: 'How many more problems were found than `errors` lists (present only then).' },
    },
    required: ['type', 'title', 'status', 'detail', 'code'],
    additionalProperties: false,
  },
  'restgraph.ProblemError': {
    type: 'object',
    description: 'One problem, located by a JSON Pointer into the body (RFC 6901), a query parameter or a header.',
    properties: {
      pointer: { type: 'string', description: 'JSON Pointer into the request body, e.g. `/email`.' },
      parameter: { type: 'string', description: 'The query parameter at fault, e.g. `sort`.' },
      header: { type: 'string', description: 'The header at fault, e.g. `If-Match`.' },
      offset: { type: 'integer', minimum: 0, description: 'Character offset of the problem in the parameter\'s value (a `filter` expression).' },
      constraint: { type: 'string', description: 'The name of the database constraint that refused the write (a constraint or unique index of the database itself).' },
      detail: { type: 'string' },
    },
    required: ['detail'],
    additionalProperties: false,
  },
};

/** Response headers the operations share; `required` where every response that names them has them. */
export const COMMON_HEADERS: Readonly<Record<string, HeaderObject>> = {
  ETag: { description: 'A strong entity tag of this representation (RFC 9110, 8.8.3): send it in If-None-Match or If-Match.', required: true, schema: { type: 'string', pattern: '^"[^"]*"$' } },
  Location: { description: 'The path of the created object.', required: true, schema: { type: 'string' } },
  Link: { description: 'The next page (RFC 8288, `rel="next"`); absent on the last page. Follow it rather than building cursors.', schema: { type: 'string' } },
  'X-Total-Count': { description: 'With `count=true`: how many rows match the filters.', schema: { type: 'integer', minimum: 0 } },
  'Idempotent-Replayed': { description: 'This is the stored response of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
  'Retry-After': { description: 'Seconds to wait before retrying (RFC 9110, 10.2.3).', schema: { type: 'integer', minimum: 0 } },
  'WWW-Authenticate': { description: 'The Bearer challenge (RFC 6750, section 3): `error="invalid_token"`, or `error="insufficient_scope"` with the scopes that would do.', schema: { type: 'string' } },
  'Cache-Control': { description: '`no-store`: the body holds a secret shown only this once.', required: true, schema: { type: 'string', enum: ['no-store'] } },
  RateLimit: { description: 'Quota left in the current window (IETF draft-ietf-httpapi-ratelimit-headers), when rate limits apply.', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'The quota policy that applies (IETF draft-ietf-httpapi-ratelimit-headers), when rate limits apply.', schema: { type: 'string' } },
};

/** Request parameters the operations share. */
export function commonParameters(limits: ListLimits): Record<string, ParameterObject> {
  return {
    limit: {
      name: 'limit',
      in: 'query',
      description: `Page size (default ${limits.defaultLimit}).`,
      schema: { type: 'integer', minimum: 1, maximum: limits.maxLimit, default: limits.defaultLimit },
    },
    offset: { name: 'offset', in: 'query', description: 'Rows to skip (not together with `after`).', schema: { type: 'integer', minimum: 0 } },
    after: {
      name: 'after',
      in: 'query',
      description: 'Keyset cursor of the next page: take it from the `Link` header of the previous page (docs/cursors.md); never build it.',
      schema: { type: 'string', maxLength: 4096, pattern: '^[A-Za-z0-9_-]+$' },
    },
    count: { name: 'count', in: 'query', description: 'Add `X-Total-Count`: the number of rows matching the filters.', schema: { type: 'boolean', default: false } },
    IfNoneMatch: {
      name: 'If-None-Match',
      in: 'header',
      description: 'ETags you hold (RFC 9110, 13.1.2): while one still matches, the answer is 304 Not Modified, without a body.',
      schema: { type: 'string' },
    },
    IfMatch: {
      name: 'If-Match',
      in: 'header',
      description: 'The ETag you read (RFC 9110, 13.1.1), or `*`: the write applies only if the object is still that one, else 412 precondition-failed.',
      schema: { type: 'string' },
    },
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      description:
        'Makes a retry safe: a retry with the same key and request gets the first response again (with `Idempotent-Replayed: true`); ' +
        'the same key with another request is a 422, and one still running a 409. Keys belong to the credential and expire after 24 h.',
      schema: { type: 'string', minLength: 1, maxLength: 257, pattern: '^"?[\\x21-\\x7e]{1,255}"?$' },
    },
  };
}
