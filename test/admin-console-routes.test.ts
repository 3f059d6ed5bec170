import Fastify from 'fastify';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerProblemHandlers } from '../src/http/problem-details.js';
import { ADMIN_CONSOLE_BUILD, registerAdminConsoleRoutes } from '../src/rest/admin-console-routes.js';
import { startTestApp, tempDir, type TestApp } from './helpers/test-app.js';

/**
 * `/admin` and `/admin/assets/*` over app.inject (the browser test drives the console itself):
 * the page under the strict CSP, only the built files by name, and a 503 that says what to do when
 * the console was never built. (The suite's global set-up builds dist/console/.)
 */
describe('the admin console routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves the built page with a strict CSP, and its assets by their listed names only', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/admin', headers: { authorization: '' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.body).not.toMatch(/<script>|style=/);
    const script = /src="\/admin\/assets\/([^"]+\.js)"/.exec(page.body)?.[1];
    const style = /href="\/admin\/assets\/([^"]+\.css)"/.exec(page.body)?.[1];
    expect(readdirSync(fileURLToPath(new URL('assets/', ADMIN_CONSOLE_BUILD)))).toEqual(expect.arrayContaining([script, style]));

    const js = await t.app.inject({ method: 'GET', url: `/admin/assets/${script}`, headers: { authorization: '' } });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const again = await t.app.inject({ method: 'GET', url: `/admin/assets/${script}`, headers: { authorization: '', 'if-none-match': String(js.headers.etag) } });
    expect(again.statusCode).toBe(304);
    const css = await t.app.inject({ method: 'GET', url: `/admin/assets/${style}`, headers: { authorization: '' } });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');

    for (const url of ['/admin/assets/nothing.js', '/admin/assets/..%2F..%2Fpackage.json', '/admin/assets/%2E%2E%2Findex.html', '/admin/index.html']) {
      const refused = await t.app.inject({ method: 'GET', url, headers: { authorization: '' } });
      expect(refused.statusCode, url).toBe(404);
      expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    }
  });

  it('answers 503 saying to run npm run build when there is no build', async () => {
    const empty = tempDir();
    const app = Fastify();
    try {
      registerProblemHandlers(app, { maxMs: 1000, maxBytes: 1024 });
      registerAdminConsoleRoutes(app, new URL(`file://${empty.path}/`));
      const answer = await app.inject({ method: 'GET', url: '/admin' });
      expect(answer.statusCode).toBe(503);
      expect(answer.json()).toMatchObject({ code: 'service-unavailable', detail: 'The admin console is not built: run `npm run build` (npm install does it too), then restart the server.' });
      expect((await app.inject({ method: 'GET', url: '/admin/assets/index.js' })).statusCode).toBe(404);
    } finally {
      await app.close();
      empty.cleanup();
    }
  });
});
