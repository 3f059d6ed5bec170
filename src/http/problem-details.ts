import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  BadRequestError,
  DatabaseUnavailableError,
  HeaderFieldsTooLargeError,
  InternalError,
  MalformedJsonError,
  NotFoundError,
  PayloadTooLargeError,
  PROBLEM_TYPE_PREFIX,
  RequestTimeoutError,
  RestgraphError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
  UriTooLongError,
} from '../errors.js';
import { TransientStoreError } from '../store/store-errors.js';
import { closeLingering, type LingerLimits } from './lingering-close.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/**
 * The RFC 9457 body of an error, with our `code` and the request id as extension members, and
 * `errorsOmitted` when `errors` lists only the first problems.
 */
export function problemBody(error: RestgraphError, request: FastifyRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: `${PROBLEM_TYPE_PREFIX}${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.message,
    instance: request.url.split('?')[0],
    code: error.code,
    requestId: request.id,
  };
  if (error.errors !== undefined) body.errors = error.errors;
  if (error.errorsOmitted > 0) body.errorsOmitted = error.errorsOmitted;
  return body;
}

export function sendProblem(reply: FastifyReply, request: FastifyRequest, error: RestgraphError): FastifyReply {
  if (error.headers !== undefined) reply.headers(error.headers);
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problemBody(error, request)));
}

/**
 * Maps anything thrown while handling a request to a client-facing error. Our own errors pass
 * through; Fastify's request errors become their documented kinds; anything else is a 500 that
 * says nothing about internals (the log gets the whole error).
 */
export function toRestgraphError(error: unknown): RestgraphError {
  if (error instanceof RestgraphError) return error;
  if (error instanceof TransientStoreError) return databaseTrouble(error);
  const { code, statusCode, message } = (error ?? {}) as { code?: string; statusCode?: number; message?: string };
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError('The request body is larger than the limit this server accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaTypeError('Send the body as application/json (PATCH also takes application/merge-patch+json).');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new MalformedJsonError('The body is empty but Content-Type says JSON.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new MalformedJsonError('The body is not valid JSON.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new UriTooLongError('A path segment of the URL is too long.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new BadRequestError('Content-Length does not match the body.');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new BadRequestError('The URL is malformed.');
    default:
      break;
  }
  if (statusCode === 414) return new UriTooLongError('The URL is too long.');
  if (statusCode === 431) return new HeaderFieldsTooLargeError('The request headers are too large.');
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return new BadRequestError(typeof message === 'string' ? message : 'The request is invalid.');
  }
  return new InternalError({ cause: error });
}

/** Seconds a client should wait before retrying when the database is out of reach (as /readyz says). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * A passing trouble of the database as clients see it: a conflict with a concurrent transaction
 * is worth retrying at once (`service-unavailable`, Retry-After: 1); an unreachable, unwritable or
 * too slow database is `database-unavailable`, Retry-After: 5. Neither says more about the cause
 * (the log does).
 */
export function databaseTrouble(error: TransientStoreError): RestgraphError {
  if (error.reason === 'retry') {
    return new ServiceUnavailableError('The database could not complete the request just now; retry it.', { cause: error, headers: { 'retry-after': '1' } });
  }
  const what = error.reason === 'timeout' ? 'The database did not answer in time' : 'The database is out of reach or cannot write just now';
  return new DatabaseUnavailableError(`${what}; retry after Retry-After seconds (a write with an Idempotency-Key can be retried as is).`, {
    cause: error,
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
  });
}

/**
 * Answers errors Node's HTTP parser raises before Fastify sees a request (headers too large, a
 * client too slow to send its request, malformed HTTP) with problem+json on the raw socket.
 * Returns the status sent, or undefined when the socket could take no answer.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): number | undefined {
  if (!socket.writable) {
    socket.destroy();
    return undefined;
  }
  const [status, problem] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, new HeaderFieldsTooLargeError('The request headers (or its URL) are larger than this server accepts.')]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, new RequestTimeoutError('The client took too long to send its request.')]
        : [400, new BadRequestError('The request is not valid HTTP.')];
  const body = JSON.stringify({
    type: `${PROBLEM_TYPE_PREFIX}${problem.code}`,
    title: problem.title,
    status,
    detail: problem.message,
    code: problem.code,
  });
  const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  // A HEAD request gets the head alone (RFC 9110, section 9.3.2): Node's parser keeps the bytes it
  // could not parse, and they tell the method.
  const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
  );
  return status;
}

/**
 * Answers a 500 on Node's response directly, past Fastify, when Node refused to write the response
 * Fastify made (say a header it would not take); the socket is closed when part of it has gone out.
 */
export function answerUnsendable(reply: FastifyReply): void {
  const response = reply.raw;
  if (response.headersSent || response.writableEnded) {
    response.destroy();
    return;
  }
  const body = JSON.stringify(problemBody(new InternalError(), reply.request));
  response.writeHead(500, { 'content-type': PROBLEM_CONTENT_TYPE, 'content-length': String(Buffer.byteLength(body)), 'x-request-id': reply.request.id });
  response.end(body);
}

/**
 * An error that came after the reply's response was made (and is held to the end of the turn,
 * see app/response-batches.ts) leaves that response as it is, as when Fastify has sent it
 * already: it is logged, and true is returned. Error handlers ask this first.
 */
export function loggedAfterResponse(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, error: unknown): boolean {
  if (!reply.sendHeld) return false;
  app.log.error({ requestId: request.id, err: error }, 'request failed after its response was made');
  return true;
}

/**
 * A request the database could not serve: one short line (no stack: during an outage every
 * request meets the same trouble, which the background workers' lines describe once).
 */
export function logDatabaseTrouble(app: FastifyInstance, request: FastifyRequest, error: TransientStoreError): void {
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  app.log.warn({ requestId: request.id, reason: error.reason, trouble: `${error.message}${cause}` }, 'request failed: the database could not serve it just now');
}

/** Logs what a request's failure says about the server: database trouble in one line, any other 5xx with its stack, nothing for a 4xx. */
export function logFailedRequest(app: FastifyInstance, request: FastifyRequest, error: unknown, problem: RestgraphError): void {
  if (error instanceof TransientStoreError) logDatabaseTrouble(app, request, error);
  // (/readyz's database-unavailable is no failure of the request: the background workers log the outage.)
  else if (problem.status >= 500 && !(problem instanceof DatabaseUnavailableError)) app.log.error({ requestId: request.id, err: error }, 'request failed');
}

/**
 * Installs the error and not-found handlers: every error a client sees is problem+json. A request
 * refused before its body was read (too large, say) has its connection closed lingering, within
 * `linger`, whichever scope's error handler answers it (GraphQL's too).
 */
export function registerProblemHandlers(app: FastifyInstance, linger: LingerLimits): void {
  app.addHook('onError', (request, reply, _error, done) => {
    closeLingering(request, reply, linger);
    done();
  });
  app.setErrorHandler((error, request, reply) => {
    if (loggedAfterResponse(app, request, reply, error)) return;
    const problem = toRestgraphError(error);
    logFailedRequest(app, request, error, problem);
    return sendProblem(reply, request, problem);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    return sendProblem(reply, request, new NotFoundError(`Nothing is served at ${request.method} ${path}.`));
  });
}
