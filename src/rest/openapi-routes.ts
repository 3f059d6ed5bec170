import type { FastifyInstance } from 'fastify';
import type { ListLimits } from '../core/list-query.js';
import { buildOpenApiDocument, openApiDocumentUrls } from '../openapi/openapi-document.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { registerApiReferenceRoutes } from './api-reference-page.js';
import { entityTag, noneMatch } from '../http/conditional-requests.js';
import { JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { registerPath } from '../http/path-routes.js';

/**
 * Whether the documents describe rate limiting (429, RateLimit and RateLimit-Policy headers).
 * Rate limits are being added in the same release; the documents say "when rate limits apply".
 */
export const DOCUMENT_RATE_LIMITS = true;

/**
 * `GET /openapi.json` (the latest version, unversioned paths), `GET /<version>/openapi.json` for
 * each version, and the interactive reference at `/docs`. Each document is generated once, here at
 * start-up, and served as the same string with a strong ETag.
 */
export function registerOpenApiRoutes(
  app: FastifyInstance,
  schema: SchemaModel,
  options: { listLimits: ListLimits; maxEmbedded: number; metrics: { enabled: boolean; public: boolean }; compat: 'json-server' | undefined; oidc: { providers: Readonly<Record<string, unknown>> } },
): void {
  const metrics = options.metrics.enabled ? { public: options.metrics.public } : undefined;
  for (const { url, version, prefix } of openApiDocumentUrls(schema)) {
    const body = JSON.stringify(buildOpenApiDocument(schema, version, { prefix, listLimits: options.listLimits, maxEmbedded: options.maxEmbedded, rateLimits: DOCUMENT_RATE_LIMITS, metrics, compat: options.compat, oidcProviders: Object.keys(options.oidc.providers) }));
    const tag = entityTag(body);
    registerPath(app, url, {
      GET: async (request, reply) => {
        reply.header('etag', tag).header('cache-control', 'no-cache');
        if (!noneMatch(request.headers['if-none-match'], tag)) return reply.code(304).send();
        return reply.type(JSON_CONTENT_TYPE).send(body);
      },
    });
  }
  registerApiReferenceRoutes(app, '/openapi.json');
}
