import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
 * The command the sign-in page offers for making an admin key: the one for this server's schema
 * file and database. `local`, naming the database, goes to a browser on the server's own machine
 * (where the command can run); `remote` names no database (shown to admins only elsewhere, see
 * docs/admin-console.md), and goes to any other visitor, who is not signed in.
 */
export interface TokenCommandHint {
  local: string;
  remote: string;
}

/** Where the console reads the hint: `<meta name="restgraph-token-command" content="…">`. */
const HINT_META = 'restgraph-token-command';

/**
 * `GET /admin`: the admin console (console/, docs/admin-console.md), a single page over the public
 * API, under a Content-Security-Policy stricter than the other pages' (no inline styles).
 * `GET /admin/assets/:file` serves the files the build made, as listed once here at start-up: only
 * those names exist, so no path from a request reaches the file system. Without a build, `/admin`
 * answers a 503 that says how to make one. Plain routes: nothing is added to other requests.
 */
export function registerAdminConsoleRoutes(app: FastifyInstance, build: URL = ADMIN_CONSOLE_BUILD, hint?: TokenCommandHint): void {
  const index = new URL('index.html', build);
  const html = existsSync(index) ? readFileSync(index, 'utf8') : undefined;
  const pages = html === undefined ? undefined : { local: withHint(html, hint?.local), remote: withHint(html, hint?.remote) };
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
      GET: async (request, reply) => {
        if (pages === undefined) throw new ServiceUnavailableError('The admin console is not built: run `npm run build` (npm install does it too), then restart the server.');
        return sendBrowserPage(reply, fromThisMachine(request) ? pages.local : pages.remote, STRICT_CSP);
      },
    },
    { produces: 'text/html' },
  );
  app.get('/admin/assets/:file', async (request, reply) => assets.send(request, reply, (request.params as { file: string }).file));
}

/** The page with the hint in a meta element the console reads (none: the console's own wording). */
function withHint(html: string, command: string | undefined): string {
  if (command === undefined) return html;
  const meta = `<meta name="${HINT_META}" content="${escapeAttribute(command)}">`;
  return html.includes('</head>') ? html.replace('</head>', `${meta}</head>`) : `${meta}${html}`;
}

/**
 * A request from a browser on the server's machine: a loopback peer, and no proxy's forwarding
 * header (a proxy on the same machine passes on requests from anywhere).
 */
function fromThisMachine(request: FastifyRequest): boolean {
  const { headers } = request;
  if (headers['x-forwarded-for'] !== undefined || headers.forwarded !== undefined || headers['x-real-ip'] !== undefined) return false;
  const peer = request.socket.remoteAddress ?? '';
  return peer === '::1' || peer.startsWith('127.') || peer.startsWith('::ffff:127.');
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
