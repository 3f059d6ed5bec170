import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSignedIn } from './helpers/admin-console-page.js';
import { chromiumAvailable, launchChromium, saveScreenshot } from './helpers/chromium.js';
import { startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { onlyOnSqlite } from './helpers/test-database.js';

/**
 * The admin console under access rules (docs/auth.md#rules), in Chromium: a token that is not
 * admin sees only what `GET /v1/auth/me` says it may. A resource it cannot read is not in the
 * navigation and its page says so; a field it may read on no row has no column, no input and no
 * filter; a field it may not write is shown but has no input; a field it reads only on some rows
 * is marked and offered for no filter or sort; a list rule is said above the list. An admin sees
 * everything. Any page error fails the test. SQLite pass only (the console does not depend on the
 * database).
 */

const available = chromiumAvailable('admin console rules');
const wait = { timeout: 15_000 };

const SCHEMA = `
resources:
  users:
    access: { read: authenticated, write: authenticated }
    fields:
      name: { type: string, maxLength: 100 }
      email: { type: string, maxLength: 100, read: "id = @auth.sub", write: [users:admin] }
      note: { type: string, maxLength: 100, read: [users:admin] }
  posts:
    access: { read: authenticated, write: authenticated }
    rules:
      list: "authorId = @auth.sub"
    fields:
      title: { type: string, maxLength: 100 }
      authorId: { type: string, maxLength: 100 }
  secrets:
    access: { read: [secrets:read], write: [secrets:read] }
    fields:
      code: { type: string, maxLength: 100 }
`;

describe.skipIf(!available || onlyOnSqlite)('the admin console under access rules, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let userKey: string;
  const dir = tempDir();
  const problems: string[] = [];

  const open = (token: string, hash: string): Promise<Page> => openSignedIn(browser, { origin, token, hash, problems });
  const headers = async (page: Page): Promise<string[]> => (await page.getByRole('columnheader').allTextContents()).map((text) => text.replace(/[▲▼]/g, '').trim());

  beforeAll(async () => {
    const schema = join(dir.path, 'rules.yaml');
    writeFileSync(schema, SCHEMA);
    t = await startTestApp({ schema });
    for (const payload of [{ name: 'Ada', email: 'ada@example.com', note: 'vip' }, { name: 'Bob', email: 'bob@example.com', note: 'late payer' }]) {
      expect((await t.app.inject({ method: 'POST', url: '/users', payload })).statusCode).toBe(201);
    }
    for (const payload of [{ title: 'Ada writes', authorId: '1' }, { title: 'Bob writes', authorId: '2' }]) {
      expect((await t.app.inject({ method: 'POST', url: '/posts', payload })).statusCode).toBe(201);
    }
    userKey = (await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'ada', scopes: ['users:write'], subject: '1' } })).json<{ key: string }>().key;
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser.close();
    await t.close();
    dir.cleanup();
  });

  it.concurrent('a resource the token cannot read is not offered, and its page says why', async () => {
    const page = await open(userKey, '#/');
    const nav = page.getByRole('navigation', { name: 'Console' });
    await nav.getByRole('link', { name: 'users' }).waitFor(wait);
    await nav.getByRole('link', { name: 'posts' }).waitFor(wait);
    expect(await nav.getByRole('link', { name: 'secrets' }).count()).toBe(0);
    // The home page says which rows the list rule lets it see.
    await page.getByText('it sees the rows where authorId = @auth.sub').waitFor(wait);
    await page.goto(`${origin}/admin#/r/secrets`);
    await page.getByText('This token may not read secrets.').waitFor(wait);
    expect(problems).toEqual([]);
  });

  it.concurrent('fields: no column for a field it reads on no row, a marked one it reads on some, neither among the filters', async () => {
    const page = await open(userKey, '#/r/users');
    await page.getByRole('table').waitFor(wait);
    await page.getByRole('cell', { name: 'Ada', exact: true }).waitFor(wait);
    const shown = await headers(page);
    expect(shown).toContain('name');
    expect(shown).toContain('email (some rows)');
    expect(shown).not.toContain('note');
    // Only fully readable fields sort (a button) and filter.
    expect(await page.getByRole('button', { name: 'email' }).count()).toBe(0);
    await page.getByRole('button', { name: 'name' }).waitFor(wait);
    const filterFields = await page.getByLabel('Field').locator('option').allTextContents();
    expect(filterFields).toContain('name');
    expect(filterFields).not.toContain('email');
    expect(filterFields).not.toContain('note');
    await saveScreenshot(page, 'admin-rules-users-list.png');
    expect(problems).toEqual([]);
  });

  it.concurrent('no edit control for a field it may not write; a list rule is said above the list', async () => {
    const page = await open(userKey, '#/r/users/1');
    await page.getByRole('heading', { name: 'Edit' }).waitFor(wait);
    const form = page.locator('form.record-form');
    await form.getByLabel('name').waitFor(wait);
    expect(await form.getByLabel('email').count(), 'no input for email').toBe(0);
    expect(await form.getByLabel('note').count(), 'no input for note').toBe(0);
    // email is shown among the fields it cannot change.
    await page.locator('dl.record dt', { hasText: 'email' }).waitFor(wait);
    expect(await page.locator('dl.record dt', { hasText: 'note' }).count()).toBe(0);
    await saveScreenshot(page, 'admin-rules-user-record.png');

    await page.goto(`${origin}/admin#/r/posts`);
    await page.getByText('This token sees only the rows where authorId = @auth.sub.').waitFor(wait);
    await page.getByRole('cell', { name: 'Ada writes' }).waitFor(wait);
    expect(await page.getByRole('cell', { name: 'Bob writes' }).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it.concurrent('an admin sees every resource and field, and edits them all', async () => {
    const page = await open(TEST_ADMIN_TOKEN, '#/r/users/2');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'secrets' }).waitFor(wait);
    const form = page.locator('form.record-form');
    await form.getByLabel('email').waitFor(wait);
    await form.getByLabel('note').waitFor(wait);
    await page.goto(`${origin}/admin#/r/users`);
    await page.getByRole('cell', { name: 'late payer' }).waitFor(wait);
    expect(await headers(page)).toEqual(expect.arrayContaining(['name', 'email', 'note']));
    expect(problems).toEqual([]);
  });
});
