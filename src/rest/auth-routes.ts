import type { FastifyInstance } from 'fastify';
import { accessSummary } from '../core/access-policy.js';
import type { AccountOperations } from '../core/accounts/account-operations.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { registerPath } from '../http/path-routes.js';

/**
 * `GET /v1/auth/me`: what the request's own credential is and what the schema's rules let it do,
 * so a client (the admin console) offers only actions that will pass. Without a token it
 * describes an anonymous caller; a token that is not valid gets a 401 like anywhere else. With
 * an account's access token, `account` is the account's record as its user may see it, and
 * `emailVerified` whether its email was confirmed.
 */
export function registerAuthRoutes(app: FastifyInstance, schema: SchemaModel, accounts?: AccountOperations): void {
  registerPath(app, '/v1/auth/me', {
    GET: async (request, reply) => {
      const summary = accessSummary(request.principal, schema);
      const principal = request.principal;
      const answer =
        accounts === undefined || principal.account !== true
          ? summary
          : { ...summary, account: await accounts.me(principal), emailVerified: await accounts.isEmailVerified(Number(principal.subject)) };
      return reply.type(JSON_CONTENT_TYPE).header('cache-control', 'no-store').send(JSON.stringify(answer));
    },
  });
}
