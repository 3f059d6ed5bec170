import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountAdministration, AccountListQuery } from '../core/accounts/account-administration.js';
import { JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { registerPath } from '../http/path-routes.js';
import { ACCOUNT_ROUTES_BASE } from './account-routes.js';

/**
 * `/v1/auth/accounts` and `/v1/auth/accounts/{id}/disable`, `enable`, `sign-out`,
 * `resend-verification` (docs/accounts.md#account-administration): thin adapters over
 * {@link AccountAdministration}, which checks that the caller is an admin.
 */
export function registerAccountAdminRoutes(app: FastifyInstance, administration: AccountAdministration): void {
  const base = `${ACCOUNT_ROUTES_BASE}/accounts`;
  const id = (request: FastifyRequest): string => (request.params as { id: string }).id;
  const send = (reply: FastifyReply, status: number, value: unknown) => reply.code(status).header('cache-control', 'no-store').type(JSON_CONTENT_TYPE).send(JSON.stringify(value));
  registerPath(app, base, {
    GET: async (request, reply) => {
      const { q, limit, after } = request.query as Record<string, unknown>;
      const query: AccountListQuery = { q, limit, after };
      return send(reply, 200, await administration.list(request.principal, query));
    },
  });
  registerPath(app, `${base}/:id/disable`, { POST: async (request, reply) => send(reply, 200, await administration.disable(request.principal, id(request))) });
  registerPath(app, `${base}/:id/enable`, { POST: async (request, reply) => send(reply, 200, await administration.enable(request.principal, id(request))) });
  registerPath(app, `${base}/:id/sign-out`, { POST: async (request, reply) => send(reply, 200, await administration.signOut(request.principal, id(request))) });
  registerPath(app, `${base}/:id/resend-verification`, {
    POST: async (request, reply) => {
      const ctx = { principal: request.principal, requestId: request.id, clientAddress: request.ip, origin: `${request.protocol}://${request.host}` };
      const result = await administration.resendVerification(ctx, id(request));
      return send(reply, result.status === 'sent' ? 202 : 200, result);
    },
  });
}
