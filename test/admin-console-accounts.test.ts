import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { chromiumAvailable, launchChromium, saveScreenshot } from './helpers/chromium.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { onlyOnSqlite } from './helpers/test-database.js';

/**
 * The admin console with accounts, in Chromium (docs/admin-console.md#signing-in-with-an-account):
 * an admin account (`accounts.admin: "role = 'admin'"`) signs in with email and password, opens
 * Accounts, disables another account and sees it disabled (and the server refuses that account's
 * sign-in); signing out ends the session on the server; a member account signs in too and is
 * offered no Accounts page. The console does not depend on the database: SQLite pass only.
 */

const available = chromiumAvailable('admin console accounts');
const wait = { timeout: 15_000 };
const PASSWORD = 'correct horse battery staple';
const SCHEMA = ACCOUNTS_SCHEMA.replace('claims: [role, orgId] }', `claims: [role, orgId], admin: "role = 'admin'" }`);

describe.skipIf(!available || onlyOnSqlite)('the admin console with accounts, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let origin: string;
  const problems: string[] = [];

  const signUp = async (email: string, role?: 'admin'): Promise<number> => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: { authorization: '' }, payload: { email, password: PASSWORD } });
    expect(res.statusCode, res.body).toBe(201);
    const id = json<{ user: { id: number } }>(res).user.id;
    if (role !== undefined) expect((await t.app.inject({ method: 'PATCH', url: `/users/${id}`, payload: { role } })).statusCode).toBe(200);
    return id;
  };
  const signInWithPassword = async (email: string): Promise<void> => {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in with password', exact: true }).click();
  };
  const nav = (name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });

  beforeAll(async () => {
    t = await startTestApp({ schema: parseSchemaText(SCHEMA) });
    await signUp('root@example.com', 'admin');
    for (const name of ['ann', 'bob', 'mia']) await signUp(`${name}@example.com`);
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
    });
  });

  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  it('an admin account signs in with email and password, disables an account on the Accounts page and sees it disabled', async () => {
    await page.goto(`${origin}/admin`);
    await page.getByLabel('Email').waitFor(wait);
    await page.getByLabel('Token').waitFor(wait);
    await saveScreenshot(page, 'admin-accounts-sign-in.png');
    await signInWithPassword('root@example.com');
    await nav('Accounts').waitFor(wait);
    // An account's session: the access token as the console's token, its refresh token beside it.
    const stored = await page.evaluate<{ token: string | null; refresh: string | null }>("({ token: sessionStorage.getItem('restgraph.console.token'), refresh: sessionStorage.getItem('restgraph.console.refresh') })");
    expect(stored.token?.split('.')).toHaveLength(3);
    const refresh = JSON.parse(stored.refresh ?? '{}') as { refreshToken?: unknown; expiresAt?: unknown };
    expect(typeof refresh.refreshToken).toBe('string');
    expect(typeof refresh.expiresAt).toBe('number');
    await nav('API keys').waitFor(wait);

    await nav('Accounts').click();
    const row = page.locator('table tbody tr', { hasText: 'mia@example.com' });
    await row.waitFor(wait);
    expect(await page.locator('table tbody tr').count()).toBe(4);
    await expect(row.locator('.state').first().textContent()).resolves.toBe('active');

    await page.getByLabel('Search by email').fill('MI');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.locator('table tbody tr', { hasText: 'ann@example.com' }).waitFor({ state: 'detached', ...wait });
    expect(await page.locator('table tbody tr').count()).toBe(1);

    await page.getByRole('button', { name: 'Disable mia@example.com' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disable account' }).click();
    await page.getByText('mia@example.com is disabled').waitFor(wait);
    await expect(row.locator('.state').first().textContent()).resolves.toBe('disabled');
    await page.getByRole('button', { name: 'Enable mia@example.com' }).waitFor(wait);
    await saveScreenshot(page, 'admin-accounts.png');
    expect(problems).toEqual([]);

    const refused = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: { authorization: '' }, payload: { email: 'mia@example.com', password: PASSWORD } });
    expect(refused.statusCode).toBe(401);
  });

  it('signing out ends the session on the server; a member account signs in and is offered no Accounts page', async () => {
    const refreshToken = await page.evaluate<string>("JSON.parse(sessionStorage.getItem('restgraph.console.refresh')).refreshToken");
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByLabel('Email').waitFor(wait);
    await expect.poll(async () => (await t.app.inject({ method: 'POST', url: '/v1/auth/refresh', headers: { authorization: '' }, payload: { refreshToken } })).statusCode, wait).toBe(401);
    expect(await page.evaluate<string | null>("sessionStorage.getItem('restgraph.console.refresh')")).toBeNull();

    await signInWithPassword('bob@example.com');
    await nav('users').waitFor(wait);
    expect(await nav('Accounts').count()).toBe(0);
    expect(await nav('API keys').count()).toBe(0);
    await page.goto(`${origin}/admin#/accounts`);
    await page.getByText('This token may not manage accounts (it needs the admin scope).').waitFor(wait);
    expect(problems).toEqual([]);
  });
});
