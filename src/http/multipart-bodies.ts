import { BadRequestError, PayloadTooLargeError, RestgraphError } from '../errors.js';

/**
 * What REST's multipart writes and GraphQL's multipart requests share: the route option that lets
 * a route read multipart bodies, and @fastify/multipart's errors as restgraph's.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads multipart/form-data bodies itself (resource writes with file fields, GraphQL uploads); others answer them 415. */
    multipart?: boolean;
  }
}

/** @fastify/multipart's errors (limits, malformed bodies) as restgraph's problems; `tooManyParts` says what the bound is. */
export function multipartError(error: unknown, tooManyParts: string): unknown {
  if (error instanceof RestgraphError || !(error instanceof Error)) return error;
  const code = 'code' in error ? String(error.code) : '';
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') return new PayloadTooLargeError(tooManyParts);
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new PayloadTooLargeError('A file is larger than its field\'s maxSize.');
  return new BadRequestError(`The multipart body cannot be read: ${error.message}`);
}
