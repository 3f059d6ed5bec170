import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { loadSchemaFile } from '../src/schema/load-schema.js';
import { chromiumAvailable, launchChromium } from './helpers/chromium.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * The browser app of examples/browser-app (docs/accounts.md#browser-apps) in Chromium, on the
 * suite's database: the page is served by its own serve.mjs on one port (its origin), restgraph
 * serves examples/accounts.yaml on another, with RESTGRAPH_CORS_ORIGINS naming the page's origin.
 * The page signs up, signs in, creates and lists a note, refreshes, resumes after a reload (the
 * refresh token in sessionStorage) and signs out, each step logged; the signed-out refresh token
 * is then refused. The same page served from an origin not in the list gets nothing through.
 */

const available = chromiumAvailable('accounts browser app');
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const wait = { timeout: 15_000 };
const PASSWORD = 'correct horse battery staple';

/** examples/browser-app/serve.mjs on a free port; resolves once it says where it listens. */
async function servePage(children: ChildProcessWithoutNullStreams[]): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'examples/browser-app/serve.mjs'), '--port', '0'], { stdio: 'pipe' });
  children.push(child);
  let printed = '';
  return new Promise((done, fail) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      printed += chunk;
      const origin = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(printed)?.[1];
      if (origin !== undefined) done(origin);
    });
    child.once('exit', (code) => fail(new Error(`serve.mjs exited (${code}): ${printed}`)));
  });
}

describe.skipIf(!available)('examples/browser-app in Chromium, from another origin', () => {
  const children: ChildProcessWithoutNullStreams[] = [];
  let t: TestApp;
  let api: string;
  let pageOrigin: string;
  let strangerOrigin: string;
  let browser: Browser;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    pageOrigin = await servePage(children);
    strangerOrigin = await servePage(children);
    // As `RESTGRAPH_CORS_ORIGINS=<the page's origin> restgraph serve examples/accounts.yaml` would.
    const { cors } = optionsFromEnv({ RESTGRAPH_CORS_ORIGINS: pageOrigin });
    expect(cors).toEqual({ origins: [pageOrigin], maxAgeSeconds: 600 });
    t = await startTestApp({ schema: loadSchemaFile(join(ROOT, 'examples/accounts.yaml')), cors });
    api = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser.close();
    await t.close();
    for (const child of children) child.kill();
  });

  const open = async (origin: string): Promise<Page> => {
    const page = await (await browser.newContext()).newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    await page.goto(`${origin}/?api=${encodeURIComponent(api)}`);
    return page;
  };
  /** Clicks a step's button and resolves to the log line it adds (the nth line of the log). */
  const step = async (page: Page, button: string, line: number): Promise<string> => {
    await page.getByRole('button', { name: button, exact: true }).click();
    const item = page.locator('#log li').nth(line - 1);
    await item.waitFor(wait);
    return (await item.textContent()) ?? '';
  };
  const refreshFromNode = (refreshToken: string) =>
    fetch(`${api}/v1/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) });

  it('signs up, signs in, creates and lists a note, refreshes, resumes after a reload, refreshes on a 401, signs out; the refresh token is then refused', async () => {
    const page = await open(pageOrigin);
    await expect(page.getByLabel('API').inputValue()).resolves.toBe(api);
    await page.getByLabel('Email').fill('bea@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    expect(await step(page, 'Sign up', 1)).toMatch(/^✓ sign-up: account \d+ made$/);
    expect(await step(page, 'Sign in', 2)).toBe('✓ sign-in: signed in as bea@example.com');
    await page.getByLabel('Note').fill('Written in a browser');
    expect(await step(page, 'Add note', 3)).toMatch(/^✓ add note: note \d+ created$/);
    expect(await step(page, 'List notes', 4)).toBe('✓ list notes: notes: Written in a browser');

    // Where the tokens are: the refresh token in sessionStorage; nothing in localStorage or cookies.
    const first = await page.evaluate<string | null>("sessionStorage.getItem('refreshToken')");
    expect(first).toMatch(/^[\w-]{43}$/);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(1);
    expect(await page.evaluate<number>('localStorage.length')).toBe(0);
    expect(await page.evaluate<string>('document.cookie')).toBe('');

    expect(await step(page, 'Refresh', 5)).toBe('✓ refresh: new access and refresh tokens');
    const second = await page.evaluate<string | null>("sessionStorage.getItem('refreshToken')");
    expect(second).toMatch(/^[\w-]{43}$/);
    expect(second).not.toBe(first);

    // A reload loses the access token (memory only); the refresh token resumes the session.
    await page.reload();
    await expect(page.locator('#log li').first().textContent(wait)).resolves.toBe('✓ resume: new access and refresh tokens');
    expect(await step(page, 'List notes', 2)).toBe('✓ list notes: notes: Written in a browser');

    // An access token that has expired (a 401, played here by the browser's network layer once):
    // the page refreshes and tries again, unseen.
    const beforeRetry = await page.evaluate<string | null>("sessionStorage.getItem('refreshToken')");
    let expired = 0;
    await page.route(`${api}/notes`, (route) => {
      if (route.request().method() !== 'GET' || expired++ > 0) return route.continue();
      const problem = { type: 'urn:restgraph:problem:invalid-token', title: 'Invalid token', status: 401, detail: 'The token has expired.', code: 'invalid-token' };
      return route.fulfill({ status: 401, contentType: 'application/problem+json', headers: { 'access-control-allow-origin': pageOrigin }, body: JSON.stringify(problem) });
    });
    expect(await step(page, 'List notes', 3)).toBe('✓ list notes: notes: Written in a browser');
    expect(expired).toBe(2);
    expect(await page.evaluate<string | null>("sessionStorage.getItem('refreshToken')")).not.toBe(beforeRetry);
    await page.unroute(`${api}/notes`);

    const last = await page.evaluate<string | null>("sessionStorage.getItem('refreshToken')");
    expect(await step(page, 'Sign out', 4)).toBe('✓ sign out: signed out');
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(await step(page, 'List notes', 5)).toMatch(/^✗ list notes: 401 /);
    const refused = await refreshFromNode(last ?? '');
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe('invalid-credentials');

    // The note is Bea's, as the rules (ownerId = @auth.sub) made it.
    const signIn = await fetch(`${api}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bea@example.com', password: PASSWORD }) });
    const session = (await signIn.json()) as { accessToken: string; user: { id: number } };
    const notes = (await (await fetch(`${api}/notes`, { headers: { authorization: `Bearer ${session.accessToken}` } })).json()) as { ownerId: number; text: string }[];
    expect(notes).toMatchObject([{ ownerId: session.user.id, text: 'Written in a browser' }]);
    expect(pageErrors).toEqual([]);
    await page.context().close();
  });

  it('from an origin not in RESTGRAPH_CORS_ORIGINS, the browser lets nothing through: the preflight gets no Access-Control-Allow-Origin', async () => {
    const page = await open(strangerOrigin);
    await page.getByLabel('Email').fill('mallory@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    expect(await step(page, 'Sign up', 1)).toBe('✗ sign-up: Failed to fetch');
    expect(await step(page, 'Sign in', 2)).toBe('✗ sign-in: Failed to fetch');
    // The preflight failed, so the browser never sent the sign-up: no such account.
    const signIn = await fetch(`${api}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'mallory@example.com', password: PASSWORD }) });
    expect(signIn.status).toBe(401);
    expect(pageErrors).toEqual([]);
    await page.context().close();

    // The preflights themselves, as documented in docs/accounts.md#browser-apps.
    const preflight = (origin: string) =>
      fetch(`${api}/v1/auth/sign-in`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    const allowed = await preflight(pageOrigin);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(pageOrigin);
    expect(allowed.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(allowed.headers.get('access-control-allow-headers')).toBe('content-type');
    expect(allowed.headers.get('access-control-max-age')).toBe('600');
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    expect(allowed.headers.get('vary')).toBe('Origin');
    const stranger = await preflight(strangerOrigin);
    expect(stranger.status).toBe(204);
    for (const name of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age']) expect(stranger.headers.get(name), name).toBeNull();
    expect(stranger.headers.get('vary')).toBe('Origin');
  });
});
