import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, saveScreenshot } from './helpers/chromium.js';
import { TcpProxy } from './helpers/tcp-proxy.js';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { onlyOnSqlite } from './helpers/test-database.js';
import { answer, WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * The admin console at /admin in a real browser (Debian's Chromium through playwright-core), on a
 * real server and socket over a SQLite file, every flow of issue 25 in order, one page reused:
 * sign in (a wrong token first), browse, sort, filter and page users, create a user after a
 * validation error, edit through a 412 from a concurrent change, delete after a confirmation that
 * names the onDelete rules, create and revoke an API key, create a webhook whose receiver answers
 * 500 and retry its failed delivery, watch events arrive in the tail (and resume after a dropped
 * connection with Last-Event-ID), the status page, sign out; then a token with only users:read sees
 * users and is offered nothing else. Each page is saved at 1280×800 and 390×844 in test-results/
 * (admin-<page>.png, admin-<page>-phone.png), and any page error or console error fails the test.
 * The console does not depend on the database, so this runs in the SQLite pass only.
 */

const available = chromiumAvailable('admin console');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const wait = { timeout: 15_000 };

describe.skipIf(!available || onlyOnSqlite)('the admin console at /admin, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let origin: string;
  let receiver: WebhookReceiver;
  let readerKey: string;
  const problems: string[] = [];

  const watch = (watched: Page): void => {
    watched.on('pageerror', (error) => problems.push(String(error)));
    watched.on('console', (message) => {
      // The browser logs every 4xx a fetch gets (the 401, 412 and 422 provoked here) as "Failed to
      // load resource"; the console's own errors are anything else.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
    });
  };

  /** Saves the page at both sizes; at the phone's width nothing may stick out sideways, and no error may have been logged. */
  const shoot = async (name: string): Promise<void> => {
    await saveScreenshot(page, `admin-${name}.png`);
    await page.setViewportSize(PHONE);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow, `${name} is wider than a phone`).toBeLessThanOrEqual(0);
    await saveScreenshot(page, `admin-${name}-phone.png`);
    await page.setViewportSize(DESKTOP);
    expect(problems).toEqual([]);
  };

  const nav = (name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });
  const rows = () => page.locator('table tbody tr');
  const signIn = async (token: string): Promise<void> => {
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    receiver.respond('/hook', answer(500));
    t = await startTestApp({
      webhooks: { allowHosts: ['127.0.0.1'], retryScheduleSeconds: [], pollIntervalMs: 50 },
      events: { reconnectDelayMs: 200 },
    });
    for (let i = 1; i <= 30; i++) {
      const name = `User ${String(i).padStart(2, '0')}`;
      await t.app.inject({ method: 'POST', url: '/users', payload: { name, email: `user${i}@example.com` } });
    }
    const key = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'reader', scopes: ['users:read'] } });
    readerKey = key.json<{ key: string }>().key;
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: DESKTOP });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    page = await context.newPage();
    watch(page);
  });

  afterAll(async () => {
    await browser.close();
    await t.close();
    await receiver.close();
  });

  it('serves the page under a strict CSP; a wrong token is refused with the server’s reason, the right one signs in (sessionStorage, no cookie)', async () => {
    const answered = await page.goto(`${origin}/admin`);
    const csp = answered?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self';");
    expect(csp).not.toContain('unsafe-inline');
    await page.getByLabel('Token').waitFor(wait);
    await shoot('sign-in');

    await signIn('rg_not-a-real-key');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('The API key is unknown or revoked. (401 invalid-token)');
    await signIn(TEST_ADMIN_TOKEN);
    await nav('users').waitFor(wait);
    expect(await page.evaluate<string | null>("sessionStorage.getItem('restgraph.console.token')")).toBe(TEST_ADMIN_TOKEN);
    expect(await page.evaluate<string>('document.cookie')).toBe('');
    for (const name of ['posts', 'products', 'orders', 'API keys', 'Webhooks', 'Events', 'Status', 'GraphiQL', 'API reference']) await nav(name).waitFor(wait);
    await shoot('home');
  });

  it('browses users: 25 a page with the total, Next and Previous by the Link header, sorting by a header, a filter', async () => {
    await nav('users').click();
    await page.getByText('Total: 30 · page 1').waitFor(wait);
    expect(await rows().count()).toBe(25);
    await shoot('users');

    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Total: 30 · page 2').waitFor(wait);
    expect(await rows().count()).toBe(5);
    await expect(page.getByRole('button', { name: 'Next' }).isDisabled()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Previous' }).click();
    await page.getByText('Total: 30 · page 1').waitFor(wait);

    // Sorting by keyboard: the header is a button.
    await page.getByRole('button', { name: 'email', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.locator('th[aria-sort="ascending"]', { hasText: 'email' }).waitFor(wait);
    await rows().first().getByText('user10@example.com').waitFor(wait);
    // Sorting: name descending puts User 30 first; the fragment keeps the sort.
    await page.getByRole('button', { name: 'name', exact: true }).click();
    await page.locator('th[aria-sort="ascending"]', { hasText: 'name' }).waitFor(wait);
    await page.getByRole('button', { name: 'name', exact: true }).click();
    await page.locator('th[aria-sort="descending"]', { hasText: 'name' }).waitFor(wait);
    await rows().first().getByText('User 30').waitFor(wait);
    expect(page.url()).toContain('#/r/users?sort=-name');

    // A filter with an operator: names starting "User 0" are 1 to 9.
    await page.getByLabel('Field').selectOption('name');
    await page.getByLabel('Operator').selectOption('startsWith');
    await page.getByLabel('Value').fill('User 0');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByText('Total: 9 · page 1').waitFor(wait);
    expect(await rows().count()).toBe(9);
    await expect(rows().first().textContent()).resolves.toContain('User 09');
    await shoot('users-filtered');
    await page.getByRole('button', { name: 'Remove filter name startsWith User 0' }).click();
    await page.getByText('Total: 30 · page 1').waitFor(wait);
  });

  it('creates a user: the server’s validation error appears next to its field first', async () => {
    await page.getByRole('link', { name: 'New user' }).click();
    await page.getByRole('heading', { name: 'New user' }).waitFor(wait);
    await expect(page.getByLabel('name').getAttribute('aria-required')).resolves.toBe('true');
    await page.getByLabel('name').fill('Zed');
    await page.getByLabel('email').fill('not-an-email');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.locator('#field-email-error', { hasText: 'email must be a valid email address' }).waitFor(wait);
    await expect(page.getByLabel('email').getAttribute('aria-invalid')).resolves.toBe('true');
    await shoot('new-user-invalid');
    await page.getByLabel('email').fill('zed@example.com');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('heading', { name: 'user 31' }).waitFor(wait);
    const created = await t.app.inject({ method: 'GET', url: '/users/31' });
    expect(created.json()).toMatchObject({ name: 'Zed', email: 'zed@example.com' });
  });

  it('edits with If-Match: a concurrent change gives a 412 that offers Reload, then the edit goes through', async () => {
    await page.getByLabel('bio', { exact: true }).fill('Written in the console');
    await t.app.inject({ method: 'PATCH', url: '/users/31', payload: { bio: 'Changed elsewhere' } });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Someone else changed this user after you opened it').waitFor(wait);
    await shoot('edit-conflict');
    await page.getByRole('button', { name: 'Reload' }).click();
    // (Polled from here: waitForFunction would evaluate a string in the page, which its CSP forbids.)
    for (let tries = 0; (await page.getByLabel('bio', { exact: true }).inputValue()) !== 'Changed elsewhere'; tries++) {
      expect(tries, 'the reloaded bio').toBeLessThan(300);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await page.getByLabel('bio', { exact: true }).fill('Written after reloading');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor(wait);
    expect((await t.app.inject({ method: 'GET', url: '/users/31' })).json()).toMatchObject({ bio: 'Written after reloading' });
  });

  it('deletes after a confirmation that says what the onDelete rules do to related rows', async () => {
    const doomed = (await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Doomed' } })).json<{ id: number }>();
    for (const title of ['one', 'two']) await t.app.inject({ method: 'POST', url: '/posts', payload: { title, userId: doomed.id } });
    await page.goto(`${origin}/admin#/r/users/${doomed.id}`);
    await page.getByRole('heading', { name: `user ${doomed.id}` }).waitFor(wait);
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: `Delete user ${doomed.id}?` });
    await dialog.waitFor(wait);
    await expect(dialog.textContent()).resolves.toContain('cascade: the rows of posts whose userId is this user are deleted too, and their own rules apply in turn (now: 2).');
    await expect(dialog.textContent()).resolves.toContain('restrict: the delete is refused while there are rows of orders whose userId is this user (now: 0).');
    await shoot('delete-confirm');
    await dialog.getByRole('button', { name: 'Delete user' }).click();
    await page.getByRole('heading', { name: 'users' }).waitFor(wait);
    expect((await t.app.inject({ method: 'GET', url: `/users/${doomed.id}` })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/posts?userId=${doomed.id}` })).json()).toEqual([]);
  });

  it('creates an API key with chosen scopes (shown once, copied) and revokes it', async () => {
    await nav('API keys').click();
    await page.getByRole('heading', { name: 'New API key' }).waitFor(wait);
    await page.getByLabel('Name').fill('ci');
    await page.getByRole('checkbox', { name: 'users:read' }).check();
    await page.getByRole('checkbox', { name: 'posts:write' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.locator('#shown-once-value');
    await shown.waitFor(wait);
    const key = await shown.inputValue();
    expect(key).toMatch(/^rg_/);
    await page.getByText('it is shown only this once').waitFor(wait);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor(wait);
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
    expect((await t.app.inject({ method: 'GET', url: '/users?limit=1', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
    const row = rows().filter({ hasText: 'ci' }).filter({ hasText: 'posts:write' });
    await expect(row.textContent()).resolves.toContain('users:read');
    await shoot('keys-created');
    await page.getByRole('button', { name: 'Done' }).click();

    await row.getByRole('button', { name: /^Revoke ci/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked').waitFor(wait);
    expect((await t.app.inject({ method: 'GET', url: '/users?limit=1', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(401);
    await shoot('keys');
  });

  it('creates a webhook (secret shown once), sees its delivery fail against a 500, retries it, pauses, resumes and rotates', async () => {
    await nav('Webhooks').click();
    await page.getByLabel('URL').fill(receiver.url('/hook'));
    await page.getByRole('checkbox', { name: 'user.created' }).check();
    await page.getByLabel('Description').fill('failing receiver');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await expect(page.locator('#shown-once-value').inputValue()).resolves.toMatch(/^whsec_/);
    await shoot('webhooks');
    await page.getByRole('button', { name: 'Done' }).click();
    await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Hooked' } });
    await page.getByRole('link', { name: receiver.url('/hook') }).click();
    await page.getByRole('heading', { name: 'Webhook 1' }).waitFor(wait);
    const delivery = page.locator('tr.delivery').first();
    await delivery.getByText('failed').waitFor(wait);
    await expect(delivery.textContent()).resolves.toContain('HTTP 500');
    await page.getByRole('button', { name: 'Retry delivery 1' }).click();
    await delivery.locator('.attempts li').nth(1).waitFor(wait);
    await expect(delivery.locator('.attempts li').nth(1).textContent()).resolves.toContain('HTTP 500');
    expect(receiver.to('/hook')).toHaveLength(2);
    await shoot('webhook-deliveries');

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('.record .state', { hasText: 'paused' }).waitFor(wait);
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('.record .state', { hasText: 'active' }).waitFor(wait);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    await expect(page.locator('#shown-once-value').inputValue()).resolves.toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByText('No webhook endpoints.').waitFor(wait);
    expect((await t.app.inject({ method: 'GET', url: '/v1/webhooks' })).json()).toEqual([]);
  });

  it('tails events: one arrives live; paused, then resumed with Last-Event-ID, nothing is missed', async () => {
    await nav('Events').click();
    await page.getByText('Connected: waiting for events.').waitFor(wait);
    await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Live one' } });
    const live = page.locator('.event', { hasText: 'Live one' });
    await live.waitFor(wait);
    await expect(live.textContent()).resolves.toMatch(/user\.created #\d+ 20\d\d-/);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText(/^Paused after event \d+/).waitFor(wait);
    await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'While paused' } });
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('.event', { hasText: 'While paused' }).waitFor(wait);
    await page.getByText(/^Resumed with Last-Event-ID \d+/).waitFor(wait);
    // The type filter: only user.updated from now on.
    await page.getByRole('checkbox', { name: 'user.updated' }).check();
    await page.getByText(/^Resumed with Last-Event-ID \d+/).waitFor(wait);
    await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Not shown' } });
    await t.app.inject({ method: 'PATCH', url: '/users/1', payload: { bio: 'Shown' } });
    await page.locator('.event', { hasText: 'user.updated' }).waitFor(wait);
    expect(await page.locator('.event', { hasText: 'Not shown' }).count()).toBe(0);
    await shoot('events');
  });

  it('resumes the tail with Last-Event-ID after the connection drops, and says so', async () => {
    const proxy = await TcpProxy.start('127.0.0.1', Number(new URL(origin).port));
    const other = await context.newPage();
    watch(other);
    try {
      // Another origin (the proxy's port): a tab of its own, signed in on its own.
      await other.goto(`http://127.0.0.1:${proxy.port}/admin#/events`);
      await other.getByLabel('Token').fill(TEST_ADMIN_TOKEN);
      await other.getByRole('button', { name: 'Sign in' }).click();
      await other.getByText('Connected: waiting for events.').waitFor(wait);
      proxy.cut();
      await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'During the drop' } });
      await other.locator('.event', { hasText: 'During the drop' }).waitFor(wait);
      await other.getByText(/^Connection dropped; reconnected with Last-Event-ID \d+/).waitFor(wait);
      expect(problems).toEqual([]);
    } finally {
      await other.close();
      await proxy.close();
    }
  });

  it('shows the status page: version, database, resources, /readyz', async () => {
    await nav('Status').click();
    await page.getByText('ready (200)').waitFor(wait);
    const text = await page.locator('dl.record').textContent();
    expect(text).toContain('SQLite');
    expect(text).toMatch(/restgraph version\d+\.\d+\.\d+/);
    expect(text).toContain('users, posts, products, orders');
    await shoot('status');
  });

  it('signs out: the token is forgotten', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token').waitFor(wait);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
  });

  it('a token with only users:read sees users and is offered no create, edit, delete, keys or webhooks', async () => {
    // By keyboard this time: Enter in the Token field signs in.
    await page.getByLabel('Token').fill(readerKey);
    await page.keyboard.press('Enter');
    await nav('users').waitFor(wait);
    await expect(page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()).resolves.toEqual(['users', 'posts', 'products', 'Events', 'Status', 'GraphiQL', 'API reference']);
    await nav('users').click();
    await page.getByText('Total: ').waitFor(wait);
    expect(await page.getByRole('link', { name: 'New user' }).count()).toBe(0);
    await rows().first().getByRole('link').first().click();
    await page.getByRole('heading', { name: /^user \d+$/ }).waitFor(wait);
    await page.locator('dl.record').getByText('name').waitFor(wait);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Edit' }).count()).toBe(0);
    expect(await page.locator('form.record-form').count()).toBe(0);
    await shoot('reader-record');
    for (const [hash, says] of [
      ['#/keys', 'This token may not manage API keys'],
      ['#/webhooks', 'This token may not manage webhooks'],
      ['#/r/users/new', 'This token may not create users'],
      ['#/r/orders', 'This token may not read orders'],
    ] as const) {
      await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
      await page.getByRole('alert').getByText(says).waitFor(wait);
    }
    await shoot('reader-keys');
  });
});
