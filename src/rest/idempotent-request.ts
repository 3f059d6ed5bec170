import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestError, IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '../errors.js';
import type { IdempotencyStore, StoredResponse } from '../store/idempotency-store.js';
import type { SqlExecutor } from '../store/sql-database.js';

/** A response ready to send, and to store under an idempotency key. */
export type PreparedResponse = StoredResponse;

/** Runs a write; given `commit`, it must call it inside its transaction with the response it will send. */
export type IdempotentWork = (commit: ((tx: SqlExecutor, response: PreparedResponse) => Promise<void>) | undefined) => Promise<PreparedResponse>;

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * Whose keys a request's key is among: its credential's, or without one its client address's (so
 * one anonymous client never gets another's response by sending the same key).
 */
function idempotencyScope(request: FastifyRequest): string {
  const { principal } = request;
  return principal.kind === 'anonymous' ? `anonymous:${request.ip}` : principal.credentialId;
}

/**
 * Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): the first request with a key runs
 * and its response is stored in the same transaction as its change; a retry with the same key and
 * request gets that response again (`Idempotent-Replayed: true`); the same key with another request
 * is a 422; a retry while the first is still running is a 409. A first request that outlives its
 * claim (taken over by a retry after the claim timeout) commits nothing and is a 409 too. Without
 * the header, `work` just runs.
 */
export async function runIdempotent(
  request: FastifyRequest,
  reply: FastifyReply,
  store: IdempotencyStore,
  work: IdempotentWork,
): Promise<FastifyReply> {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return send(reply, await work(undefined));
  const key = parseKey(header);
  const scope = idempotencyScope(request);
  const fingerprint = hash('sha256', `${request.method} ${request.url.split('?')[0] ?? ''}\n${JSON.stringify(request.body ?? null)}`, 'base64url');
  const claim = await store.claim(scope, key, fingerprint);
  switch (claim.outcome) {
    case 'completed':
      return send(reply.header('idempotent-replayed', 'true'), claim.response);
    case 'in-flight':
      throw new IdempotencyKeyInUseError('A request with this Idempotency-Key is still being processed; retry after it finishes.', RETRY_SOON);
    case 'mismatch':
      throw new IdempotencyKeyReusedError('This Idempotency-Key was already used for a different request (method, path or body). Use a new key for a new request.', {
        errors: [{ header: 'Idempotency-Key', detail: 'belongs to another request' }],
      });
    case 'claimed':
      break;
  }
  const { claim: held } = claim;
  let response: PreparedResponse;
  try {
    response = await work(async (tx, prepared) => {
      // Throwing here rolls back the change this transaction made.
      if (!(await store.complete(tx, held, prepared))) throw claimTakenOver();
    });
  } catch (error) {
    await store.release(held);
    throw error;
  }
  return send(reply, response);
}

const RETRY_SOON = { headers: { 'retry-after': '1' } };

/**
 * This request ran past the claim timeout and a retry with its key has taken the key over: that
 * retry's outcome is the key's, and a retry of this one will replay it.
 */
function claimTakenOver(): IdempotencyKeyInUseError {
  return new IdempotencyKeyInUseError(
    'This request took longer than the Idempotency-Key claim lasts, and a retry with the same key took the key over: this request changed nothing. Retry to get the response of the request that holds the key.',
    RETRY_SOON,
  );
}

function parseKey(header: string | string[]): string {
  const raw = Array.isArray(header) ? header.join(',') : header;
  // The draft makes the key a Structured Field string ("…"); bare tokens are accepted too.
  const key = raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? raw.slice(1, -1) : raw;
  if (!KEY_PATTERN.test(key)) {
    throw new BadRequestError('Idempotency-Key must be 1 to 255 visible ASCII characters, e.g. a UUID.', {
      errors: [{ header: 'Idempotency-Key', detail: 'must be 1 to 255 visible ASCII characters' }],
    });
  }
  return key;
}

function send(reply: FastifyReply, response: PreparedResponse): FastifyReply {
  return reply.code(response.status).headers(response.headers).send(response.body);
}
