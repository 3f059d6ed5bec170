import type { AccessRule } from '../schema/schema-model.js';
import { ADMIN_ONLY } from './operation-security.js';
import { ref, type OperationObject, type PathItemObject, type ResponseObject } from './openapi-types.js';
import { mergeFailures, type Failures } from './problem-responses.js';
import { BODY_FAILURES as BODY, idParameter, JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE, operation, success } from './operation-builder.js';

const PUBLIC: AccessRule = { kind: 'public' };
const BY_ID: Failures = { 404: ['not-found'], 414: ['uri-too-long'] };

function jsonBody(schema: string, patch = false): OperationObject['requestBody'] {
  const media = { schema: ref('schemas', schema) };
  return { required: true, content: patch ? { [MERGE_PATCH_MEDIA_TYPE]: media, [JSON_MEDIA_TYPE]: media } : { [JSON_MEDIA_TYPE]: media } };
}

/** `/v1/tokens`: API keys, for admins (src/rest/token-routes.ts). */
export function tokenPaths(): Record<string, PathItemObject> {
  const tags = ['tokens'];
  const admin = [ADMIN_ONLY];
  const token = ref('schemas', 'restgraph.Token');
  return {
    '/v1/tokens': {
      get: operation({ operationId: 'listTokens', summary: 'List API keys', description: 'Every key, newest first, revoked ones included; never the keys.', tags }, admin, { 200: success('The keys.', { type: 'array', items: token }) }, {}),
      post: operation(
        { operationId: 'createToken', summary: 'Create an API key', description: 'The answer holds the key itself, shown only this once: store it now. `claims` (optional) are values access rules read as `@auth.claims.<name>`, as they read a JWT\'s claims.', tags, requestBody: jsonBody('restgraph.TokenCreate') },
        admin,
        { 201: success('The new key, with `key`.', ref('schemas', 'restgraph.TokenWithKey'), [['Location', true], ['Cache-Control', true]]) },
        mergeFailures(BODY, { 422: ['validation-failed'] }),
      ),
    },
    '/v1/tokens/{id}': {
      parameters: [idParameter('id', 'token')],
      get: operation({ operationId: 'getToken', summary: 'Get an API key', tags }, admin, { 200: success('The key, without the key itself.', token) }, BY_ID),
      delete: operation(
        { operationId: 'revokeToken', summary: 'Revoke an API key', description: 'Takes effect at once on this instance, within the key cache time (10 s by default) on others. Revoking again is a 204 too.', tags },
        admin,
        { 204: success('Revoked.') },
        mergeFailures(BODY, BY_ID),
      ),
    },
  };
}

/** `/v1/auth/me`: the caller's own credential and what it may do (src/rest/auth-routes.ts). */
export function authPaths(): Record<string, PathItemObject> {
  return {
    '/v1/auth/me': {
      get: operation(
        {
          operationId: 'getOwnAccess',
          summary: 'What this credential is and may do',
          description:
            "The credential's kind, subject, scopes and claims, and per resource which operations the schema's access rules let it attempt (the owner rule still limits which rows); " +
            'where the schema has row rules, per operation whether the credential may act on every row, on none, or on the rows the rule admits (with the rule\'s text), and per restricted field whether it may read and write it. Without a token: an anonymous caller.',
          tags: ['auth'],
        },
        [PUBLIC],
        { 200: success('The credential and its access.', ref('schemas', 'restgraph.AccessSummary'), [['Cache-Control', true]]) },
        {},
      ),
    },
  };
}

/** `/v1/webhooks`: webhook endpoints and their deliveries, for admins (src/rest/webhook-routes.ts). */
export function webhookPaths(): Record<string, PathItemObject> {
  const tags = ['webhooks'];
  const admin = [ADMIN_ONLY];
  const webhook = ref('schemas', 'restgraph.Webhook');
  const byId = { parameters: [idParameter('id', 'webhook')] };
  const action = (operationId: string, summary: string, description: string, body: ResponseObject): PathItemObject => ({
    ...byId,
    post: operation({ operationId, summary, description, tags }, admin, { 200: body }, mergeFailures(BODY, BY_ID)),
  });
  return {
    '/v1/webhooks': {
      get: operation({ operationId: 'listWebhooks', summary: 'List webhook endpoints', tags }, admin, { 200: success('The endpoints, without secrets.', { type: 'array', items: webhook }) }, {}),
      post: operation(
        { operationId: 'createWebhook', summary: 'Register a webhook endpoint', description: 'The answer holds the signing secret (`whsec_…`), shown only here and on rotate-secret.', tags, requestBody: jsonBody('restgraph.WebhookCreate') },
        admin,
        { 201: success('The endpoint, with its secret.', ref('schemas', 'restgraph.WebhookWithSecret'), [['Location', true], ['Cache-Control', true]]) },
        mergeFailures(BODY, { 422: ['validation-failed'] }),
      ),
    },
    '/v1/webhooks/{id}': {
      ...byId,
      get: operation({ operationId: 'getWebhook', summary: 'Get a webhook endpoint', tags }, admin, { 200: success('The endpoint, without its secret.', webhook) }, BY_ID),
      patch: operation(
        { operationId: 'updateWebhook', summary: 'Change a webhook endpoint', description: 'Only the members sent change (a merge patch).', tags, requestBody: jsonBody('restgraph.WebhookPatch', true) },
        admin,
        { 200: success('The endpoint.', webhook) },
        mergeFailures(BODY, BY_ID, { 422: ['validation-failed'] }),
      ),
      delete: operation({ operationId: 'deleteWebhook', summary: 'Delete a webhook endpoint', description: 'Its deliveries go with it.', tags }, admin, { 204: success('Deleted.') }, mergeFailures(BODY, BY_ID)),
    },
    '/v1/webhooks/{id}/pause': action('pauseWebhook', 'Pause a webhook endpoint', 'Deliveries queue up until it is resumed.', success('The endpoint.', webhook)),
    '/v1/webhooks/{id}/resume': action('resumeWebhook', 'Resume a webhook endpoint', 'Starts delivering again, also after it was disabled.', success('The endpoint.', webhook)),
    '/v1/webhooks/{id}/rotate-secret': action(
      'rotateWebhookSecret',
      "Rotate a webhook endpoint's secret",
      'The old secret stops signing at once.',
      success('The endpoint, with its new secret.', ref('schemas', 'restgraph.WebhookWithSecret'), [['Cache-Control', true]]),
    ),
    '/v1/webhooks/{id}/deliveries': {
      ...byId,
      get: operation(
        { operationId: 'listWebhookDeliveries', summary: "List a webhook endpoint's deliveries", description: 'The latest 100, newest first, each with every attempt.', tags },
        admin,
        { 200: success('The deliveries.', { type: 'array', items: ref('schemas', 'restgraph.WebhookDelivery') }) },
        BY_ID,
      ),
    },
    '/v1/webhooks/{id}/deliveries/{deliveryId}/retry': {
      parameters: [idParameter('id', 'webhook'), idParameter('deliveryId', 'delivery')],
      post: operation({ operationId: 'retryWebhookDelivery', summary: 'Deliver again now', tags }, admin, { 202: success('Queued for delivery now.') }, mergeFailures(BODY, BY_ID)),
    },
  };
}

/** `GET /v1/events`: the Server-Sent Events stream (src/rest/event-stream-routes.ts, docs/events.md). */
export function eventPaths(types: readonly string[], readRules: readonly AccessRule[]): Record<string, PathItemObject> {
  return {
    '/v1/events': {
      get: operation(
        {
          operationId: 'streamEvents',
          summary: 'Stream events (Server-Sent Events)',
          description:
            'Every committed change the token may read, as `text/event-stream`: `id:` is the event id, `event:` its type, `data:` ' +
            '`{"id","type","timestamp","data":{"object","previous"?}}`. A `: heartbeat` comment keeps the connection open. Reconnect with ' +
            '`Last-Event-ID` to get what was missed. Asking for types of a resource the token may not read is a 401 or 403.',
          tags: ['events'],
          parameters: [
            { name: 'types', in: 'query', description: 'Only these event types.', style: 'form', explode: false, schema: { type: 'array', items: { type: 'string', enum: [...types] }, minItems: 1 } },
            {
              name: 'filter',
              in: 'query',
              description:
                "Only events whose object matches this filter expression (the grammar of lists' `filter`, without relation paths; needs `types`, and may name only fields of every type's resource). A bad expression is a 400.",
              schema: { type: 'string' },
            },
            { name: 'lastEventId', in: 'query', description: 'Resume after this event id (for clients that cannot send Last-Event-ID).', schema: { type: 'string', pattern: '^\\d{1,15}$' } },
            { name: 'Last-Event-ID', in: 'header', description: 'Resume after this event id (EventSource sends it when it reconnects).', schema: { type: 'string', pattern: '^\\d{1,15}$' } },
          ],
        },
        [PUBLIC],
        { 200: success('The stream; it never ends by itself.', { type: 'string' }, [], 'text/event-stream') },
        { 400: ['invalid-query'] },
        { rules: readRules },
      ),
    },
  };
}

/**
 * `/`, `/healthz`, `/readyz` (src/rest/system-routes.ts), the OpenAPI documents and `/docs`
 * (src/rest/openapi-routes.ts), and the admin console `/admin` (src/rest/admin-console-routes.ts).
 */
export function systemPaths(documentUrls: readonly { url: string; version: string }[], metrics?: { public: boolean }): Record<string, PathItemObject> {
  const tags = ['service'];
  const status = (value: string): Record<string, unknown> => ({ type: 'object', properties: { status: { const: value } }, required: ['status'], additionalProperties: false });
  const probe = { anonymous: true };
  const paths: Record<string, PathItemObject> = {
    '/': { get: operation({ operationId: 'getServiceIndex', summary: 'What this server serves', tags }, [PUBLIC], { 200: success('Versions and resources.', ref('schemas', 'restgraph.ServiceIndex')) }, {}) },
    '/healthz': { get: operation({ operationId: 'getHealth', summary: 'Liveness: the process runs', tags }, [PUBLIC], { 200: success('Alive.', status('ok')) }, {}, probe) },
    '/readyz': {
      get: operation({ operationId: 'getReadiness', summary: 'Readiness: the database answers', description: '503 while the database does not answer, or while shutting down.', tags }, [PUBLIC], { 200: success('Ready.', status('ready')) }, {}, probe),
    },
    '/docs': {
      get: operation({ operationId: 'getApiReference', summary: 'This reference, in the browser', tags }, [PUBLIC], { 200: success('An HTML page (Swagger UI, served by this server).', { type: 'string' }, [], 'text/html') }, {}),
    },
    '/admin': {
      get: operation(
        { operationId: 'getAdminConsole', summary: 'The admin console, in the browser', description: 'A single-page app over this public API: it signs in with a token, kept in the browser tab only (docs/admin-console.md).', tags },
        [PUBLIC],
        { 200: success('An HTML page (the console, built by `npm run build`, served by this server).', { type: 'string' }, [], 'text/html') },
        { 503: ['service-unavailable'] },
      ),
    },
  };
  if (metrics !== undefined) {
    // src/rest/metrics-routes.ts: a token with metrics:read (or admin), unless served publicly.
    const rule: AccessRule = metrics.public ? PUBLIC : { kind: 'scopes', anyOf: ['metrics:read'] };
    paths['/metrics'] = {
      get: operation(
        { operationId: 'getMetrics', summary: 'Prometheus metrics of this instance', description: 'The Prometheus text format (version 0.0.4): requests by route, database connections, outbox lag, webhooks, open streams, the Node.js process.', tags },
        [rule],
        { 200: success('Metrics in the Prometheus text format.', { type: 'string' }, [], 'text/plain') },
        {},
      ),
    };
  }
  for (const { url, version } of documentUrls) {
    paths[url] = {
      get: operation(
        { operationId: url === '/openapi.json' ? 'getOpenApiDocument' : `getOpenApiDocument${version.toUpperCase()}`, summary: `The OpenAPI 3.1 document of ${url === '/openapi.json' ? 'the latest version (unversioned paths)' : version}`, tags, parameters: [ref('parameters', 'IfNoneMatch')] },
        [PUBLIC],
        {
          200: success('An OpenAPI 3.1 document.', { type: 'object' }, [['ETag', true]]),
          304: success('Not modified: If-None-Match names the current ETag. No body.', undefined, [['ETag', true]]),
        },
        {},
      ),
    };
  }
  return paths;
}
