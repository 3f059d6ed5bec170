import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { NotFoundError } from '../errors.js';
import { entityTag, noneMatch } from './conditional-requests.js';
import { registerPath } from './path-routes.js';

/**
 * `GET /docs`: Swagger UI (swagger-ui-dist) over the latest OpenAPI document, with every asset
 * served by restgraph from the installed package (nothing from a CDN, so it works offline), under
 * the same Content-Security-Policy as GraphiQL.
 */
export function registerApiReferenceRoutes(app: FastifyInstance, documentUrl: string): void {
  const start = toAsset(Buffer.from(startScript(documentUrl)), JS);
  registerPath(app, '/docs', { GET: async (_request, reply) => sendPage(reply) }, { produces: 'text/html' });
  // Assets are answered whatever Accept says (browsers ask for styles as text/css), as GraphiQL's are.
  app.get('/docs/assets/:file', async (request, reply) => {
    const file = (request.params as { file: string }).file;
    const asset = file === 'start.js' ? start : packageAsset(file);
    if (asset === undefined) throw new NotFoundError('No such asset of the API reference.');
    reply.header('etag', asset.etag).header('cache-control', 'public, max-age=86400');
    if (!noneMatch(request.headers['if-none-match'], asset.etag)) return reply.code(304).send();
    return reply.type(asset.type).send(asset.body);
  });
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>restgraph · API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<style>body { margin: 0; }</style>
</head>
<body>
<div id="swagger-ui">Loading the API reference…</div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/start.js"></script>
</body>
</html>
`;

/**
 * Starts Swagger UI on the document. No validator badge (it would call validator.swagger.io);
 * "Authorize" takes a bearer token, kept in the page only.
 */
function startScript(documentUrl: string): string {
  return `'use strict';
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(documentUrl)},
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  filter: true,
  displayRequestDuration: true,
  persistAuthorization: false,
  validatorUrl: null
});
`;
}

// The API reference loads scripts and styles from this server only and talks to this server only.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'";

function sendPage(reply: FastifyReply): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-cache')
    .send(PAGE);
}

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const require = createRequire(import.meta.url);
const SWAGGER_UI = dirname(require.resolve('swagger-ui-dist/package.json'));
const JS = 'text/javascript; charset=utf-8';
const JSON_MAP = 'application/json; charset=utf-8';
const ASSET_TYPES: Record<string, string> = {
  'swagger-ui-bundle.js': JS,
  'swagger-ui-bundle.js.map': JSON_MAP,
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui.css.map': JSON_MAP,
  'favicon-32x32.png': 'image/png',
};
const assets = new Map<string, Asset>();

/** A file of swagger-ui-dist by name, read once, on first use. */
function packageAsset(file: string): Asset | undefined {
  let asset = assets.get(file);
  if (asset !== undefined) return asset;
  const type = Object.hasOwn(ASSET_TYPES, file) ? ASSET_TYPES[file] : undefined;
  if (type === undefined) return undefined;
  asset = toAsset(readFileSync(join(SWAGGER_UI, file)), type);
  assets.set(file, asset);
  return asset;
}

function toAsset(body: Buffer, type: string): Asset {
  return { body, type, etag: entityTag(body.toString('latin1')) };
}
