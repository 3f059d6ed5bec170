import type { FastifyInstance, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { NotAcceptableError, UnsupportedMediaTypeError } from '../errors.js';

const PRODUCED = ['application/json', 'application/problem+json'];

/**
 * Reads JSON bodies as `application/json` and `application/merge-patch+json` (RFC 7396) with
 * Fastify's secure parser: `__proto__` and `constructor.prototype` members are refused (400).
 * Any other media type is a 415.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parse = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, parse);
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

/** 406 when the Accept header rules out JSON (RFC 9110, section 12.5.1). */
export function assertAcceptable(request: FastifyRequest): void {
  const accept = request.headers.accept;
  if (accept === undefined || accept === '*/*' || accept === 'application/json') return;
  const chosen = new Negotiator({ headers: { accept } }).mediaType(PRODUCED);
  if (chosen === undefined) {
    throw new NotAcceptableError(`This resource is available as application/json only; the Accept header (${accept.slice(0, 100)}) rules it out.`);
  }
}
