import type { AccessRule } from '../schema/schema-model.js';
import { accessFailures, operationAccess } from './operation-security.js';
import type { OperationObject, ParameterObject, ResponseObject, SchemaObject } from './openapi-types.js';
import { headerRefs, mergeFailures, problemResponses, type Failures } from './problem-responses.js';

export const JSON_MEDIA_TYPE = 'application/json';
export const MERGE_PATCH_MEDIA_TYPE = 'application/merge-patch+json';

/** What every operation may answer, whatever it does. */
export const ALWAYS: Failures = { 400: ['bad-request'], 406: ['not-acceptable'], 414: ['uri-too-long'], 500: ['internal'], 503: ['service-unavailable', 'database-unavailable', 'server-timeout'] };

/** Body-parsing failures: Fastify parses a body sent with any method but GET and HEAD, even where none is read. */
export const BODY_FAILURES: Failures = { 400: ['malformed-json'], 413: ['payload-too-large'], 415: ['unsupported-media-type'] };

/** The `{id}` of an item path. */
export function idParameter(name = 'id', what = 'object'): ParameterObject {
  return { name, in: 'path', required: true, description: `The ${what}'s id. Anything but a positive integer names nothing (404).`, schema: { type: 'integer', minimum: 1 } };
}

/** A response with its headers (`[name, true]`: always there) and, given a schema, a body of `mediaType`. */
export function success(description: string, schema?: SchemaObject, headers: [string, boolean][] = [], mediaType = JSON_MEDIA_TYPE): ResponseObject {
  const refs = headerRefs(headers);
  return {
    description,
    ...(refs === undefined ? {} : { headers: refs }),
    ...(schema === undefined ? {} : { content: { [mediaType]: { schema } } }),
  };
}

export interface OperationExtras {
  /** Further rules the operation may check (`include` reads the embedded resources): their 401 and 403. */
  rules?: readonly AccessRule[];
  /** The resource's owner rule or access rules (row rules, presets, field access) may refuse the request with 403. */
  ownerRule?: boolean;
  deprecated?: boolean;
  /** Credentials are ignored (health probes): no security, never a 401. */
  anonymous?: boolean;
}

/**
 * An operation: its security from its access rules (all must pass), its success responses, and the
 * problem responses of everything that can fail, those every operation shares included.
 */
export function operation(
  base: Omit<OperationObject, 'responses' | 'security'>,
  rules: readonly AccessRule[],
  successes: Record<string, ResponseObject>,
  failures: Failures,
  extra: OperationExtras = {},
): OperationObject {
  const access = operationAccess(rules);
  const sentence = extra.anonymous === true ? 'Access: anyone; credentials are ignored.' : access.sentence;
  const description = [base.description, sentence].filter((d) => d !== undefined && d !== '').join('\n\n');
  const denied = extra.anonymous === true ? {} : accessFailures([...rules, ...(extra.rules ?? [])], extra.ownerRule);
  return {
    ...base,
    description,
    ...(extra.deprecated === true ? { deprecated: true } : {}),
    security: extra.anonymous === true ? [{}] : access.security,
    responses: { ...successes, ...problemResponses(mergeFailures(ALWAYS, denied, failures)) },
  };
}
