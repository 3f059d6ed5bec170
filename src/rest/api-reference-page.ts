import type { FastifyInstance } from 'fastify';
import { BrowserAssets, packageFile, sendBrowserPage } from '../http/browser-assets.js';
import { FAVICON_LINK } from '../http/favicon.js';
import { registerPath } from '../http/path-routes.js';
/**
 * `GET /docs`: Swagger UI (swagger-ui-dist) over the latest OpenAPI document, with every asset
 * served by restgraph from the installed package (nothing from a CDN, so it works offline), under
 * the same Content-Security-Policy as GraphiQL.
 */
export function registerApiReferenceRoutes(app: FastifyInstance, documentUrl: string): void {
  const JS = 'text/javascript; charset=utf-8';
  const JSON_MAP = 'application/json; charset=utf-8';
  const swaggerUi = (file: string, type: string) => ({ path: packageFile('swagger-ui-dist', file), type });
  const assets = new BrowserAssets(
    {
      'start.js': { text: startScript(documentUrl), type: JS },
      'swagger-ui-bundle.js': swaggerUi('swagger-ui-bundle.js', JS),
      'swagger-ui-bundle.js.map': swaggerUi('swagger-ui-bundle.js.map', JSON_MAP),
      'swagger-ui.css': swaggerUi('swagger-ui.css', 'text/css; charset=utf-8'),
      'swagger-ui.css.map': swaggerUi('swagger-ui.css.map', JSON_MAP),
    },
    'No such asset of the API reference.',
  );
  registerPath(app, '/docs', { GET: async (_request, reply) => sendBrowserPage(reply, PAGE) }, { produces: 'text/html' });
  app.get('/docs/assets/:file', async (request, reply) => assets.send(request, reply, (request.params as { file: string }).file));
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>restgraph · API reference</title>
${FAVICON_LINK}
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
