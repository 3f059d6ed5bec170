import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium, saveScreenshot } from './helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';

/**
 * GraphiQL in a real browser (Debian's Chromium through playwright-core): the page served at
 * /graphql loads its assets from restgraph itself under a strict CSP, introspects the schema
 * (within the query limits), and runs the seed's query with a token from its Headers tab.
 */

const available = chromiumAvailable('GraphiQL');

describe.skipIf(!available)('GraphiQL at /graphql, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    t = await startTestApp();
    for (const body of [{ name: 'Alice' }]) await t.app.inject({ method: 'POST', url: '/users', payload: body });
    for (const title of ['first', 'second', 'third']) await t.app.inject({ method: 'POST', url: '/posts', payload: { title, userId: 1 } });
    url = `${await t.app.listen({ port: 0, host: '127.0.0.1' })}/graphql`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  it('loads without errors, introspects, and runs the seed query with a token from the Headers tab', { timeout: 120_000 }, async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('console', (message) => {
      // Failed loads are judged by the response listener (a 404 for the favicon among them).
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(url);
    // GraphiQL is a 3.5 MB script: give a loaded machine time to parse it.
    const wait = { timeout: 60_000 };
    await page.waitForSelector('.graphiql-execute-button', wait);
    // Type as a user would (insertText: no auto-closed brackets), replacing the default query.
    await page.locator('.graphiql-query-editor .CodeMirror').first().click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('{ user(id: "1") { name posts(last: 2) { title } } }');
    await page.getByText('Headers', { exact: true }).click();
    const headers = page.locator('.graphiql-editor-tool .CodeMirror').last();
    await headers.waitFor(wait);
    await headers.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${TEST_ADMIN_TOKEN}` }));
    await page.click('.graphiql-execute-button');
    await page.locator('.result-window', { hasText: '"posts"' }).waitFor(wait);
    const result = ((await page.textContent('.result-window')) ?? '').replace(/\s+/g, '');
    expect(result).toContain('{"data":{"user":{"name":"Alice","posts":[{"title":"second"},{"title":"third"}]}}}');
    // The documentation explorer is built from introspection (within the query limits).
    await page.click('[aria-label="Show Documentation Explorer"]');
    await page.locator('.graphiql-doc-explorer', { hasText: 'mutation' }).waitFor(wait);
    await page.getByText('Query', { exact: true }).first().click();
    await page.locator('.graphiql-doc-explorer', { hasText: 'usersConnection' }).waitFor(wait);
    await saveScreenshot(page, 'graphiql.png');
    expect(problems).toEqual([]);
    await page.close();
  });
});
