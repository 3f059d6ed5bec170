import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ServiceUnavailableError } from '../errors.js';
import { BrowserAssets, sendBrowserPage, STRICT_CSP, type AssetSource } from '../http/browser-assets.js';
import { registerPath } from '../http/path-routes.js';

/**
 * Where `npm run build` puts the console (vite, console/vite.config.ts): the same place relative
 * to this file whether it runs from src/rest (tests) or dist/rest (the built server).
 */
export const ADMIN_CONSOLE_BUILD = new URL('../../dist/console/', import.meta.url);

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/**
 * `GET /admin`: the admin console (console/, docs/admin-console.md), a single page over the public
 * API, under a Content-Security-Policy stricter than the other pages' (no inline styles).
 * `GET /admin/assets/:file` serves the files the build made, as listed once here at start-up: only
 * those names exist, so no path from a request reaches the file system. Without a build, `/admin`
 * answers a 503 that says how to make one. Plain routes: nothing is added to other requests.
 */
export function registerAdminConsoleRoutes(app: FastifyInstance, build: URL = ADMIN_CONSOLE_BUILD): void {
  const index = new URL('index.html', build);
  const html = existsSync(index) ? readFileSync(index, 'utf8') : undefined;
  const assetsDir = new URL('assets/', build);
  const sources: Record<string, AssetSource> = {};
  if (html !== undefined && existsSync(assetsDir)) {
    for (const file of readdirSync(assetsDir)) {
      const type = TYPES[extname(file)];
      // Read now, not on first request: a rebuild replaces the hashed files, and the page this
      // server sends names the ones it started with.
      if (type !== undefined) sources[file] = { bytes: readFileSync(new URL(file, assetsDir)), type };
    }
  }
  const assets = new BrowserAssets(sources, 'No such asset of the admin console.');
  registerPath(
    app,
    '/admin',
    {
      GET: async (_request, reply) => {
        if (html === undefined) throw new ServiceUnavailableError('The admin console is not built: run `npm run build` (npm install does it too), then restart the server.');
        return sendBrowserPage(reply, html, STRICT_CSP);
      },
    },
    { produces: 'text/html' },
  );
  app.get('/admin/assets/:file', async (request, reply) => assets.send(request, reply, (request.params as { file: string }).file));
}
