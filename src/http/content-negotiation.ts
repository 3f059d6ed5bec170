import type { FastifyInstance, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import secureJson from 'secure-json-parse';
import { FORBIDDEN_MEMBER_DETAIL, MAX_JSON_DEPTH } from '../core/json-input-rules.js';
import { MalformedJsonError, NotAcceptableError, UnsupportedMediaTypeError } from '../errors.js';

/** The media type of every JSON body restgraph sends. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

const PRODUCED = ['application/json', 'application/problem+json'];

/**
 * Reads JSON bodies as `application/json` and `application/merge-patch+json` (RFC 7396) with
 * secure-json-parse (Fastify's own parser): `__proto__` and `constructor.prototype` members are
 * refused (400), so no body can reach an object's prototype. Any other media type is a 415.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

/** Parses a request body, turning every failure into a 400 that says what is wrong. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new MalformedJsonError('The body is empty but Content-Type says JSON.');
  if (nestingDepth(text) > MAX_JSON_DEPTH) {
    throw new MalformedJsonError(`The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }) as unknown;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/prototype/i.test(message)) {
      throw new MalformedJsonError(`The body contains ${FORBIDDEN_MEMBER_DETAIL}.`);
    }
    throw new MalformedJsonError(`The body is not valid JSON: ${message}.`);
  }
}

/** Deepest bracket nesting outside strings, found in one pass without parsing. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** Refuses a merge-patch body where only a whole representation makes sense (POST, PUT). */
export function assertPlainJsonBody(request: FastifyRequest): void {
  const type = request.headers['content-type'];
  if (type === undefined) {
    throw new UnsupportedMediaTypeError('The request has no Content-Type; send the body as application/json.');
  }
  if (/^application\/merge-patch\+json\b/i.test(type)) {
    throw new UnsupportedMediaTypeError(`${request.method} takes a whole representation as application/json; merge patches go with PATCH.`);
  }
}

/** Refuses a request with no body where one is required. */
export function assertHasBody(request: FastifyRequest): void {
  if (request.headers['content-type'] === undefined) {
    throw new UnsupportedMediaTypeError('The request has no Content-Type; send the body as application/json.');
  }
}

/** 406 when the Accept header rules out JSON, or the one media type given (RFC 9110, section 12.5.1). */
export function assertAcceptable(request: FastifyRequest, mediaType?: string): void {
  const accept = request.headers.accept;
  // An empty Accept is read like an absent one: the client states no preference.
  if (accept === undefined || accept === '*/*' || accept === (mediaType ?? 'application/json') || accept.trim() === '') return;
  const chosen = new Negotiator({ headers: { accept } }).mediaType(mediaType === undefined ? PRODUCED : [mediaType]);
  if (chosen === undefined) {
    throw new NotAcceptableError(`This resource is available as ${mediaType ?? 'application/json'} only; the Accept header (${accept.slice(0, 100)}) rules it out.`);
  }
}
