import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountOperations } from '../core/accounts/account-operations.js';
import type { SigningKeys } from '../core/accounts/signing-keys.js';
import { assertPlainJsonBody, JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { registerPath } from '../http/path-routes.js';

/** Where account routes live. */
export const ACCOUNT_ROUTES_BASE = '/v1/auth';

/**
 * `/v1/auth/sign-up`, `sign-in`, `refresh`, `sign-out`, `sign-out-everywhere`, `change-password`
 * (docs/accounts.md) and `/.well-known/jwks.json`: thin adapters over {@link AccountOperations}.
 * Answers holding tokens are never cached (`Cache-Control: no-store`, RFC 6749 section 5.1).
 */
export function registerAccountRoutes(app: FastifyInstance, accounts: AccountOperations, keys: SigningKeys): void {
  const base = ACCOUNT_ROUTES_BASE;
  const body = (request: FastifyRequest): unknown => {
    assertPlainJsonBody(request);
    return request.body;
  };
  const tokens = (reply: FastifyReply, status: number, value: unknown) =>
    reply.code(status).header('cache-control', 'no-store').type(JSON_CONTENT_TYPE).send(JSON.stringify(value));
  const ctx = (request: FastifyRequest) => ({ principal: request.principal, requestId: request.id, clientAddress: request.ip });
  registerPath(app, `${base}/sign-up`, { POST: async (request, reply) => tokens(reply, 201, { user: await accounts.signUp(ctx(request), body(request)) }) });
  registerPath(app, `${base}/sign-in`, { POST: async (request, reply) => tokens(reply, 200, await accounts.signIn(ctx(request), body(request))) });
  registerPath(app, `${base}/refresh`, { POST: async (request, reply) => tokens(reply, 200, await accounts.refresh(ctx(request), body(request))) });
  registerPath(app, `${base}/sign-out`, {
    POST: async (request, reply) => {
      await accounts.signOut(body(request));
      return reply.code(204).send();
    },
  });
  registerPath(app, `${base}/sign-out-everywhere`, {
    POST: async (request, reply) => {
      await accounts.signOutEverywhere(request.principal);
      return reply.code(204).send();
    },
  });
  registerPath(app, `${base}/change-password`, {
    POST: async (request, reply) => {
      await accounts.changePassword(request.principal, body(request));
      return reply.code(204).send();
    },
  });
  registerPath(app, '/.well-known/jwks.json', {
    // Public keys only; cached briefly, so a rotation reaches clients within minutes.
    GET: async (_request, reply) => reply.header('cache-control', 'public, max-age=300').type(JSON_CONTENT_TYPE).send(JSON.stringify(await keys.jwks())),
  });
}
