import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { EMAIL_REQUEST_ACCEPTED, SIGN_UP_ACCEPTED, type AccountEmails } from '../core/accounts/account-emails.js';
import type { AccountOperations } from '../core/accounts/account-operations.js';
import type { SigningKeys } from '../core/accounts/signing-keys.js';
import { assertPlainJsonBody, JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { registerPath } from '../http/path-routes.js';

/** Where account routes live. */
export const ACCOUNT_ROUTES_BASE = '/v1/auth';

/**
 * `/v1/auth/sign-up`, `sign-in`, `refresh`, `sign-out`, `sign-out-everywhere`, `change-password`
 * (docs/accounts.md), the email flows `verify-email/request`, `verify-email`, `forgot-password`,
 * `reset-password` (over {@link AccountEmails}), and `/.well-known/jwks.json`: thin adapters over
 * {@link AccountOperations}.
 * Answers holding tokens are never cached (`Cache-Control: no-store`, RFC 6749 section 5.1).
 */
export function registerAccountRoutes(app: FastifyInstance, accounts: AccountOperations, keys: SigningKeys, emails?: AccountEmails): void {
  const base = ACCOUNT_ROUTES_BASE;
  const body = (request: FastifyRequest): unknown => {
    assertPlainJsonBody(request);
    return request.body;
  };
  const tokens = (reply: FastifyReply, status: number, value: unknown) =>
    reply.code(status).header('cache-control', 'no-store').type(JSON_CONTENT_TYPE).send(JSON.stringify(value));
  // The origin is the links' base only when no public URL is set (docs/accounts.md).
  const ctx = (request: FastifyRequest) => ({ principal: request.principal, requestId: request.id, clientAddress: request.ip, origin: `${request.protocol}://${request.host}` });
  registerPath(app, `${base}/sign-up`, {
    POST: async (request, reply) => {
      const user = await accounts.signUp(ctx(request), body(request));
      // emailVerification: required: one answer for a new and a taken identifier (docs/accounts.md#sign-up-without-enumeration).
      return accounts.hidesSignUpOutcome(request.principal) ? tokens(reply, 202, SIGN_UP_ACCEPTED) : tokens(reply, 201, { user });
    },
  });
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
  if (emails !== undefined) registerEmailRoutes(app, emails, body, ctx);
  registerPath(app, '/.well-known/jwks.json', {
    // Public keys only; cached briefly, so a rotation reaches clients within minutes.
    GET: async (_request, reply) => reply.header('cache-control', 'public, max-age=300').type(JSON_CONTENT_TYPE).send(JSON.stringify(await keys.jwks())),
  });
}

function registerEmailRoutes(app: FastifyInstance, emails: AccountEmails, body: (request: FastifyRequest) => unknown, ctx: (request: FastifyRequest) => Parameters<AccountEmails['requestVerification']>[0]): void {
  const base = ACCOUNT_ROUTES_BASE;
  // One body for every request, whether or not an account has the address.
  const accepted = (reply: FastifyReply) => reply.code(202).header('cache-control', 'no-store').type(JSON_CONTENT_TYPE).send(JSON.stringify(EMAIL_REQUEST_ACCEPTED));
  registerPath(app, `${base}/verify-email/request`, {
    POST: async (request, reply) => {
      await emails.requestVerification(ctx(request), body(request));
      return accepted(reply);
    },
  });
  registerPath(app, `${base}/verify-email`, {
    POST: async (request, reply) => {
      await emails.verifyEmail(ctx(request), body(request));
      return reply.code(204).send();
    },
  });
  registerPath(app, `${base}/forgot-password`, {
    POST: async (request, reply) => {
      await emails.forgotPassword(ctx(request), body(request));
      return accepted(reply);
    },
  });
  registerPath(app, `${base}/reset-password`, {
    POST: async (request, reply) => {
      await emails.resetPassword(ctx(request), body(request));
      return reply.code(204).send();
    },
  });
}
