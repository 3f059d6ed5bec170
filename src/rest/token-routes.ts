import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TokenOperations } from '../core/token-operations.js';
import { assertPlainJsonBody, JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { parseId, registerPath } from '../http/path-routes.js';

type IdParams = { id: string };

/**
 * `/v1/tokens`: API key management for admins. The key itself appears once, in the 201 answer
 * to its creation; lists and reads show only its prefix.
 */
export function registerTokenRoutes(app: FastifyInstance, tokens: TokenOperations, onRevoked: (id: number) => void): void {
  const base = '/v1/tokens';
  const principal = (request: FastifyRequest) => request.principal;
  registerPath(app, base, {
    GET: async (request, reply) => reply.type(JSON_CONTENT_TYPE).send(JSON.stringify(await tokens.list(principal(request)))),
    POST: async (request, reply) => {
      assertPlainJsonBody(request);
      const { key, token } = await tokens.create(principal(request), request.body);
      return reply
        .code(201)
        .header('location', `${base}/${token.id}`)
        .header('cache-control', 'no-store')
        .type(JSON_CONTENT_TYPE)
        .send(JSON.stringify({ ...token, key }));
    },
  });
  registerPath(app, `${base}/:id`, {
    GET: async (request, reply) => {
      const id = parseTokenId((request.params as IdParams).id);
      return reply.type(JSON_CONTENT_TYPE).send(JSON.stringify(await tokens.get(principal(request), id)));
    },
    DELETE: async (request, reply) => {
      const id = parseTokenId((request.params as IdParams).id);
      await tokens.revoke(principal(request), String(id));
      onRevoked(id);
      return reply.code(204).send();
    },
  });
}

function parseTokenId(text: string): number {
  return parseId('token', text);
}
