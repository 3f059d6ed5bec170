import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { assertHasBody, assertPlainJsonBody, JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { parseId, registerPath } from '../http/path-routes.js';

type Params = { id: string; deliveryId?: string };

/**
 * `/v1/webhooks`: webhook endpoints for admins. The secret appears in the answers to create and
 * rotate-secret only (with `Cache-Control: no-store`); reads never show it.
 */
export function registerWebhookRoutes(app: FastifyInstance, webhooks: WebhookService): void {
  const base = '/v1/webhooks';
  const id = (request: FastifyRequest): number => parseId('webhook', (request.params as Params).id);
  const json = (status: number, value: unknown): { status: number; body: string } => ({ status, body: JSON.stringify(value) });
  const send = (reply: FastifyReply, r: { status: number; body: string }, secret = false): FastifyReply => {
    if (secret) reply.header('cache-control', 'no-store');
    return reply.code(r.status).type(JSON_CONTENT_TYPE).send(r.body);
  };
  registerPath(app, base, {
    GET: async (request, reply) => send(reply, json(200, await webhooks.list(request.principal))),
    POST: async (request, reply) => {
      assertPlainJsonBody(request);
      const created = await webhooks.create(request.principal, request.body);
      reply.header('location', `${base}/${created.id}`);
      return send(reply, json(201, created), true);
    },
  });
  registerPath(app, `${base}/:id`, {
    GET: async (request, reply) => send(reply, json(200, await webhooks.get(request.principal, id(request)))),
    PATCH: async (request, reply) => {
      // application/json or application/merge-patch+json: the members given change.
      assertHasBody(request);
      return send(reply, json(200, await webhooks.update(request.principal, id(request), request.body)));
    },
    DELETE: async (request, reply) => {
      await webhooks.delete(request.principal, id(request));
      return reply.code(204).send();
    },
  });
  registerPath(app, `${base}/:id/pause`, {
    POST: async (request, reply) => send(reply, json(200, await webhooks.setPaused(request.principal, id(request), true))),
  });
  registerPath(app, `${base}/:id/resume`, {
    POST: async (request, reply) => send(reply, json(200, await webhooks.setPaused(request.principal, id(request), false))),
  });
  registerPath(app, `${base}/:id/rotate-secret`, {
    POST: async (request, reply) => send(reply, json(200, await webhooks.rotateSecret(request.principal, id(request))), true),
  });
  registerPath(app, `${base}/:id/deliveries`, {
    GET: async (request, reply) => send(reply, json(200, await webhooks.deliveries(request.principal, id(request)))),
  });
  registerPath(app, `${base}/:id/deliveries/:deliveryId/retry`, {
    POST: async (request, reply) => {
      const deliveryId = parseId('delivery', (request.params as Params).deliveryId ?? '');
      await webhooks.retry(request.principal, id(request), deliveryId);
      return reply.code(202).send();
    },
  });
}
