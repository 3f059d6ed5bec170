import { COMMON_HEADERS } from './common-components.js';
import { ref, type HeaderObject, type OperationObject, type ReferenceObject, type ResponseObject } from './openapi-types.js';

/** The media type of every error response (RFC 9457). */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** What can go wrong in one operation: each status with the problem codes it may carry (docs/errors.md). */
export type Failures = Partial<Record<number, readonly string[]>>;

const SUMMARIES: Record<number, string> = {
  400: 'The request is malformed',
  401: 'No valid credential: none was sent where one is needed, or the one sent is not valid',
  403: 'The token may not do this: it has none of the scopes the access rule names, or the owner rule forbids it',
  404: 'Nothing is there (or the owner rule hides it)',
  406: 'The Accept header rules out the media type this path answers with',
  409: 'Conflict with the current state',
  412: 'If-Match does not match the current ETag (the current one is in ETag)',
  413: 'The body is larger than the server accepts',
  414: 'The URL is over the limit (RESTGRAPH_MAX_URL_LENGTH), or a path segment (the id) is too long',
  415: 'Unsupported or missing Content-Type, or a file whose content its field does not accept',
  416: 'The Range starts past the end of the file (Content-Range gives its size)',
  422: 'The body is well-formed JSON but breaks the rules',
  429: 'Too many requests in the current window; retry after Retry-After seconds',
  502: 'The sign-in provider could not be reached or did not answer as it should',
  500: 'An unexpected failure; the body says nothing about internals (quote requestId)',
  503: 'The database is out of reach for a moment (or the server is not ready); retry after Retry-After seconds',
};

/** Response headers each error status carries: the header component, and whether it is always there. */
const HEADERS: Record<number, [string, boolean][]> = {
  401: [['WWW-Authenticate', true]],
  403: [['WWW-Authenticate', false]],
  409: [['Retry-After', false]],
  412: [['ETag', true]],
  429: [['Retry-After', true]],
  503: [['Retry-After', true]],
};

/** Every failure of `lists`, codes of the same status merged. */
export function mergeFailures(...lists: Failures[]): Failures {
  const merged: Record<number, string[]> = {};
  for (const list of lists) {
    for (const [status, codes] of Object.entries(list)) {
      const into = (merged[Number(status)] ??= []);
      for (const code of codes ?? []) if (!into.includes(code)) into.push(code);
    }
  }
  return merged;
}

/**
 * The problem+json responses of one operation. Each pins `status` and the codes that status may
 * carry, so a response with an undocumented code does not conform.
 */
export function problemResponses(failures: Failures): Record<string, ResponseObject> {
  const responses: Record<string, ResponseObject> = {};
  const statuses = Object.keys(failures).map(Number).sort((a, b) => a - b);
  for (const status of statuses) {
    const codes = failures[status] ?? [];
    const codeList = codes.map((c) => `\`${c}\``).join(', ');
    const headers = headerRefs(HEADERS[status] ?? []);
    responses[String(status)] = {
      description: `${SUMMARIES[status] ?? 'Error'}.${codes.length > 0 ? ` Codes: ${codeList}.` : ''}`,
      ...(headers === undefined ? {} : { headers }),
      content: {
        [PROBLEM_MEDIA_TYPE]: {
          schema: {
            type: 'object',
            allOf: [ref('schemas', 'restgraph.Problem')],
            properties: { status: { const: status }, ...(codes.length > 0 ? { code: { enum: [...codes] } } : {}) },
          },
        },
      },
    };
  }
  return responses;
}

/** `$ref`s to header components, or the component inline where this response differs on `required`. */
export function headerRefs(headers: readonly [string, boolean][]): Record<string, HeaderObject | ReferenceObject> | undefined {
  if (headers.length === 0) return undefined;
  const out: Record<string, HeaderObject | ReferenceObject> = {};
  for (const [name, required] of headers) {
    const component = COMMON_HEADERS[name];
    if (component === undefined) throw new Error(`no header component ${name}`);
    // A Reference Object cannot change `required`: where it differs, the component goes inline.
    out[name] = (component.required ?? false) === required ? ref('headers', name) : { ...component, required };
  }
  return out;
}

/**
 * Moves the problem responses of `operations` into shared components (most operations share most
 * of them), replacing each by a `$ref`. Returns the components, named by status and codes.
 */
export function hoistProblemResponses(operations: readonly OperationObject[]): Record<string, ResponseObject> {
  const components: Record<string, ResponseObject> = {};
  const names = new Map<string, string>();
  for (const op of operations) {
    for (const [status, response] of Object.entries(op.responses)) {
      if ('$ref' in response || response.content?.[PROBLEM_MEDIA_TYPE] === undefined) continue;
      const key = JSON.stringify(response);
      let name = names.get(key);
      if (name === undefined) {
        const codes = (response.content[PROBLEM_MEDIA_TYPE].schema?.properties as { code?: { enum?: string[] } } | undefined)?.code?.enum ?? [];
        name = [`Problem${status}`, ...codes].join('.');
        for (let n = 2; Object.hasOwn(components, name); n++) name = `${[`Problem${status}`, ...codes].join('.')}.${n}`;
        names.set(key, name);
        components[name] = response;
      }
      op.responses[status] = { $ref: `#/components/responses/${name}` };
    }
  }
  return components;
}
