import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium, saveScreenshot } from './helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';

/**
 * The API reference at /docs in a real browser (Debian's Chromium through playwright-core): Swagger
 * UI loads every asset from restgraph itself under a strict CSP, renders the latest OpenAPI
 * document with the users endpoints, and "Try it out" with a bearer token from "Authorize" calls
 * the API. Any page error, console error or failed load (4xx/5xx) fails the test; a screenshot
 * goes to test-results/docs.png (and
 * docs-try-it-out.png).
 */

const available = chromiumAvailable('API reference');

describe.skipIf(!available)('the API reference at /docs, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Alice' } });
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  it('renders the users endpoints from /openapi.json, and calls GET /users with a token from Authorize', { timeout: 120_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const problems: string[] = [];
    const requested: string[] = [];
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('console', (message) => {
      // Failed loads are judged by the response listener below; the API call's own 401 would not be one.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
    });
    page.on('request', (request) => requested.push(request.url()));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    const wait = { timeout: 60_000 };
    const answer = await page.goto(`${origin}/docs`);
    expect(answer?.headers()['content-security-policy']).toContain("default-src 'none'");
    // The users tag with its operations, as Swagger UI lays them out.
    await page.locator('.opblock-tag', { hasText: 'users' }).first().waitFor(wait);
    for (const [method, path] of [['get', '/users'], ['post', '/users'], ['get', '/users/{id}'], ['patch', '/users/{id}'], ['delete', '/users/{id}'], ['get', '/users/{id}/posts']]) {
      await page.locator(`.opblock-${method} [data-path="${path}"]`).first().waitFor(wait);
    }
    await expect(page.locator('.info .title').first().textContent()).resolves.toContain('restgraph API');
    await page.locator('.opblock-tag', { hasText: 'users' }).first().scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'docs.png');

    // Authorize with the admin token, then try GET /users.
    await page.click('.auth-wrapper .authorize');
    await page.locator('.modal-ux input[type="text"], .modal-ux input[type="password"]').first().fill(TEST_ADMIN_TOKEN);
    await page.locator('.modal-ux button.authorize').first().click();
    await page.locator('.modal-ux button.btn-done, .modal-ux .close-modal').first().click();
    const listUsers = page.locator('#operations-users-listUsers');
    await listUsers.locator('.opblock-summary').click();
    await listUsers.locator('button.try-out__btn').click();
    await listUsers.locator('button.execute').click();
    const live = listUsers.locator('.live-responses-table tbody .response-col_status').first();
    await live.waitFor(wait);
    expect((await live.textContent())?.trim()).toBe('200');
    await expect(listUsers.locator('.live-responses-table .microlight').first().textContent()).resolves.toContain('"Alice"');

    await saveScreenshot(page, 'docs-try-it-out.png');
    expect(problems).toEqual([]);
    // Nothing came from anywhere but this server.
    expect(requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([]);
    await page.close();
  });
});
