import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { BadRequestError, PayloadTooLargeError, RestgraphError, UnsupportedMediaTypeError } from '../errors.js';

/**
 * What REST's multipart writes and GraphQL's multipart requests share: the parser, registered once
 * on the app, the route option that lets a route read multipart bodies, and @fastify/multipart's
 * errors as restgraph's.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads multipart/form-data bodies itself (resource writes with file fields, GraphQL uploads); others answer them 415. */
    multipart?: boolean;
  }
}

/** Route config that lets a route read multipart bodies (others answer them 415). */
export const MULTIPART_ROUTE = { multipart: true } as const;

/**
 * Registers @fastify/multipart on the app (its parser leaves the body unread, for the route to
 * stream: REST's writes of resources with file fields, GraphQL's multipart requests) and keeps
 * every other write route refusing multipart bodies with a 415.
 */
export async function registerMultipart(app: FastifyInstance): Promise<void> {
  await app.register(multipart, { throwFileSizeLimit: true });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.config?.multipart === true || !methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH')) return;
    const refuse = (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void): void => {
      done(request.isMultipart() ? new UnsupportedMediaTypeError('This route takes application/json, not multipart/form-data.') : undefined);
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? refuse : [...(Array.isArray(existing) ? existing : [existing]), refuse];
  });
}

/** @fastify/multipart's errors (limits, malformed bodies) as restgraph's problems; `tooManyParts` says what the bound is. */
export function multipartError(error: unknown, tooManyParts: string): unknown {
  if (error instanceof RestgraphError || !(error instanceof Error)) return error;
  const code = 'code' in error ? String(error.code) : '';
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') return new PayloadTooLargeError(tooManyParts);
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new PayloadTooLargeError('A file is larger than its field\'s maxSize.');
  return new BadRequestError(`The multipart body cannot be read: ${error.message}`);
}
