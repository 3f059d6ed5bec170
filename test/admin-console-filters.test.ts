import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSignedIn, until } from './helpers/admin-console-page.js';
import { chromiumAvailable, launchChromium, saveScreenshot } from './helpers/chromium.js';
import { startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { onlyOnSqlite } from './helpers/test-database.js';

/**
 * The admin console's filter expressions and enum counts in Chromium: an expression typed in the
 * list's filter bar and applied with Enter filters the rows, and stays in the address through
 * paging, sorting, a reload and Back; a bad one shows the server's words with a caret under the
 * offset it names, and the text cursor is put there; the counts per enum value (aggregates) are of
 * the filtered rows, and a click narrows the list to a value; a refused aggregate hides them.
 * Any page error or console error fails the test. The console does not depend on the database,
 * so this runs in the SQLite pass only.
 */

const available = chromiumAvailable('admin console filters');
const wait = { timeout: 15_000 };

const SCHEMA = `
versions: [v1]
resources:
  customers:
    access: { read: [customers:read] }
    fields:
      name: { type: string, required: true, maxLength: 200 }
    relations:
      orders: { hasMany: orders, foreignKey: customerId }
  orders:
    access: { read: [orders:read] }
    fields:
      status:     { type: enum, values: [pending, paid, shipped] }
      total:      { type: number, required: true }
      customerId: { type: integer, required: true, references: customers }
    relations:
      customer: { belongsTo: customers, foreignKey: customerId }
`;

interface Order {
  status: string | null;
  total: number;
}

/** 42 orders: totals 10 to 420; statuses in turn, the last two without one. */
const ORDERS: Order[] = Array.from({ length: 42 }, (_, i) => ({ status: i >= 40 ? null : (['pending', 'paid', 'shipped'][(i + 1) % 3] ?? null), total: (i + 1) * 10 }));
const count = (test: (order: Order) => boolean): number => ORDERS.filter(test).length;

describe.skipIf(!available || onlyOnSqlite)('the admin console’s filter expressions and enum counts, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  const dir = tempDir();
  const problems: string[] = [];

  /** A page of its own (its own sessionStorage), signed in with `token`, at `hash`. */
  const open = (token: string, hash: string): Promise<Page> => openSignedIn(browser, { origin, token, hash, problems, height: 900 });
  /** Saves the page at a desktop's width and at a phone's, where nothing may stick out sideways. */
  const shoot = async (page: Page, name: string): Promise<void> => {
    await saveScreenshot(page, `admin-${name}.png`);
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow, `${name} is wider than a phone`).toBeLessThanOrEqual(0);
    await saveScreenshot(page, `admin-${name}-phone.png`);
    await page.setViewportSize({ width: 1280, height: 900 });
  };
  const summary = (page: Page) => page.locator('.list-summary');
  const rows = (page: Page) => page.getByRole('region', { name: 'orders table' }).locator('tbody tr');
  /** The `filter` of the page's address. */
  const filterInUrl = (page: Page): string | null => new URLSearchParams(new URL(page.url()).hash.split('?')[1] ?? '').get('filter');
  const apply = async (page: Page, expression: string): Promise<void> => {
    const input = page.getByLabel('Filter expression', { exact: true });
    await input.fill(expression);
    await input.press('Enter');
  };

  beforeAll(async () => {
    const schema = join(dir.path, 'shop.yaml');
    writeFileSync(schema, SCHEMA);
    t = await startTestApp({ schema });
    const customer = await t.app.inject({ method: 'POST', url: '/customers', payload: { name: 'Ada' } });
    const customerId = customer.json<{ id: number }>().id;
    for (const order of ORDERS) {
      const response = await t.app.inject({ method: 'POST', url: '/orders', payload: { ...order, customerId } });
      expect(response.statusCode, response.body).toBe(201);
    }
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser.close();
    await t.close();
    dir.cleanup();
  });

  it.concurrent('an expression typed and applied with Enter filters the rows, and stays through paging, sorting, a reload and Back', async () => {
    const page = await open(TEST_ADMIN_TOKEN, '#/r/orders');
    await summary(page).getByText(`Total: ${ORDERS.length}`).waitFor(wait);
    const expression = "status = 'paid' or total > 150";
    const matching = count((order) => order.status === 'paid' || order.total > 150);
    expect(matching).toBeGreaterThan(25);
    await apply(page, expression);
    await summary(page).getByText(`Total: ${matching} · page 1`).waitFor(wait);
    expect(filterInUrl(page)).toBe(expression);
    expect(await rows(page).count()).toBe(25);
    await shoot(page, 'filter-expression');

    // The next page (the Link header's cursor) keeps the filter.
    await page.getByRole('button', { name: 'Next' }).click();
    await summary(page).getByText('page 2').waitFor(wait);
    await until(async () => (await rows(page).count()) === matching - 25, 'the rest of the matching rows on page 2');

    // Sorting keeps it: the smallest totals first are the paid ones.
    await page.getByTitle('Sort by total').click();
    await summary(page).getByText(`Total: ${matching} · page 1`).waitFor(wait);
    expect(filterInUrl(page)).toBe(expression);
    const firstTotal = ORDERS.filter((order) => order.status === 'paid' || order.total > 150).map((order) => order.total).sort((a, b) => a - b)[0];
    await until(async () => (await rows(page).first().locator('td').nth(2).textContent()) === String(firstTotal), 'the smallest matching total first');

    // A reload keeps it, in the address and in the input.
    await page.reload();
    await summary(page).getByText(`Total: ${matching} · page 1`).waitFor(wait);
    expect(await page.getByLabel('Filter expression', { exact: true }).inputValue()).toBe(expression);

    // Back: to the list before sorting, still filtered; then to the whole list.
    await page.goBack();
    await until(() => Promise.resolve(!page.url().includes('sort=')), 'the address before sorting');
    await summary(page).getByText(`Total: ${matching} · page 1`).waitFor(wait);
    expect(filterInUrl(page)).toBe(expression);
    await page.goBack();
    await summary(page).getByText(`Total: ${ORDERS.length} · page 1`).waitFor(wait);
    expect(await page.getByLabel('Filter expression', { exact: true }).inputValue()).toBe('');

    // The field filters still work, ANDed with the expression; Clear removes only the expression.
    await apply(page, 'total <= 100');
    await summary(page).getByText(`Total: ${count((order) => order.total <= 100)} · page 1`).waitFor(wait);
    await page.getByLabel('Field', { exact: true }).selectOption('status');
    await page.getByLabel('Value', { exact: true }).selectOption('shipped');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await summary(page).getByText(`Total: ${count((order) => order.total <= 100 && order.status === 'shipped')} · page 1`).waitFor(wait);
    await page.getByRole('button', { name: 'Clear' }).click();
    await summary(page).getByText(`Total: ${count((order) => order.status === 'shipped')} · page 1`).waitFor(wait);
    expect(filterInUrl(page)).toBeNull();
    expect(problems).toEqual([]);
  });

  it.concurrent('a bad expression shows the server’s words, a caret under the offset it names, and puts the text cursor there', async () => {
    const page = await open(TEST_ADMIN_TOKEN, '#/r/orders');
    await summary(page).getByText(`Total: ${ORDERS.length}`).waitFor(wait);
    const input = page.getByLabel('Filter expression', { exact: true });
    for (const [expression, offset, words] of [
      ["status = 'paid' or totl > 100", 19, 'unknown field "totl" at 19'],
      // The end of the expression (trimmed: the bar sends what was typed without the spaces around it).
      ['total > 100 and (status =  ', 25, 'the end of the expression at 25'],
    ] as const) {
      await apply(page, expression);
      const error = page.locator('#filter-expression-error');
      await error.getByText(words).waitFor(wait);
      await expect(input.getAttribute('aria-invalid')).resolves.toBe('true');
      await expect(input.getAttribute('aria-describedby')).resolves.toBe('filter-expression-error');
      const caret = error.locator('.filter-caret');
      await expect(caret.getAttribute('data-offset')).resolves.toBe(String(offset));
      const [shown, under] = ((await caret.textContent()) ?? '').split('\n');
      expect(shown?.trimEnd()).toBe(expression.trim());
      expect(under).toBe(`${' '.repeat(offset)}^`);
      await expect(caret.locator('mark').textContent()).resolves.toBe(expression.trim().charAt(offset) || ' ');
      await until(async () => (await page.evaluate<string | undefined>('document.activeElement?.id')) === 'filter-expression', 'the focus in the expression');
      expect(await page.evaluate<number | null>('document.activeElement.selectionStart')).toBe(offset);
      expect(await page.evaluate<number | null>('document.activeElement.selectionEnd')).toBe(offset);
      // The list says nothing else: the error is the expression's.
      expect(await page.getByRole('alert').count()).toBe(1);
    }
    await shoot(page, 'filter-expression-error');
    // Mending it clears the error.
    await apply(page, "total > 100 and (status = 'paid')");
    await summary(page).getByText(`Total: ${count((order) => order.total > 100 && order.status === 'paid')} · page 1`).waitFor(wait);
    expect(await page.locator('#filter-expression-error').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it.concurrent('counts per enum value are of the filtered rows, and a click narrows the list to a value', async () => {
    const page = await open(TEST_ADMIN_TOKEN, '#/r/orders');
    const counts = page.getByRole('region', { name: 'Counts by value' });
    for (const status of ['pending', 'paid', 'shipped']) await counts.getByRole('link', { name: `status ${status}: ${count((order) => order.status === status)}` }).waitFor(wait);
    await counts.getByRole('link', { name: `status (empty): ${count((order) => order.status === null)}` }).waitFor(wait);
    await shoot(page, 'enum-counts');

    await counts.getByRole('link', { name: /^status paid: / }).click();
    await summary(page).getByText(`Total: ${count((order) => order.status === 'paid')} · page 1`).waitFor(wait);
    expect(filterInUrl(page)).toBe("status = 'paid'");
    expect(await page.getByLabel('Filter expression', { exact: true }).inputValue()).toBe("status = 'paid'");

    // Under a filter, the counts are of its rows, and a click ANDs the value to it.
    await apply(page, 'total > 150');
    const over = (order: Order): boolean => order.total > 150;
    await counts.getByRole('link', { name: `status shipped: ${count((order) => over(order) && order.status === 'shipped')}` }).waitFor(wait);
    await counts.getByRole('link', { name: `status (empty): ${count((order) => over(order) && order.status === null)}` }).click();
    await summary(page).getByText(`Total: ${count((order) => over(order) && order.status === null)} · page 1`).waitFor(wait);
    expect(filterInUrl(page)).toBe('(total > 150) and status is null');
    await counts.getByRole('link', { name: `status (empty): ${count((order) => over(order) && order.status === null)}` }).waitFor(wait);
    expect(await counts.getByRole('link').count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it.concurrent('where the aggregate is refused (a path into a resource the key may not read), the counts are not shown', async () => {
    const key = (await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'orders only', scopes: ['orders:read'] } })).json<{ key: string }>().key;
    const page = await open(key, '#/r/orders');
    const counts = page.getByRole('region', { name: 'Counts by value' });
    await counts.getByRole('link', { name: `status paid: ${count((order) => order.status === 'paid')}` }).waitFor(wait);
    await apply(page, "customer.name ~ 'a'");
    await page.getByRole('alert').getByText('403').waitFor(wait);
    await until(async () => (await counts.count()) === 0, 'the counts hidden');
    expect(problems).toEqual([]);
  });
});
