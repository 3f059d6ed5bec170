import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSignedIn, until } from './helpers/admin-console-page.js';
import { chromiumAvailable, launchChromium, saveScreenshot } from './helpers/chromium.js';
import { startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { onlyOnSqlite } from './helpers/test-database.js';

/**
 * The admin console's records and keys in Chromium (issue 33, point 22), each test in a browser
 * context of its own, run concurrently on one server over a schema of authors and books (a book
 * names its author and, optionally, its editor: two references to authors): a new API key is
 * scrolled to and focused; revoking the key the console is signed in with warns, then signs out;
 * a reference is a searchable picker; a record shows the first rows of each hasMany relation with
 * a link to the filtered list; a whole row opens its record (by mouse and by Enter); generated
 * labels take "a" or "an" by sound. Any page error or console error fails the test. The console
 * does not depend on the database, so this runs in the SQLite pass only.
 */

const available = chromiumAvailable('admin console records');
const wait = { timeout: 15_000 };

const SCHEMA = `
versions: [v1]
resources:
  authors:
    fields:
      name: { type: string, required: true, maxLength: 200 }
    relations:
      books:       { hasMany: books, foreignKey: authorId }
      editedBooks: { hasMany: books, foreignKey: editorId }
  books:
    description: Books, each with its author.
    fields:
      title:    { type: string, required: true, maxLength: 300 }
      authorId: { type: integer, required: true, references: authors, onDelete: cascade }
      editorId: { type: integer, references: authors, onDelete: setNull }
    relations:
      author: { belongsTo: authors, foreignKey: authorId }
      editor: { belongsTo: authors, foreignKey: editorId }
`;

describe.skipIf(!available || onlyOnSqlite)('the admin console’s records and keys, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  const dir = tempDir();
  const pages: Page[] = [];
  const problems: string[] = [];
  /** Ids by name. */
  const authors = new Map<string, number>();

  /** A page of its own (a context of its own: its own sessionStorage), signed in with `token`, at `hash`. */
  const open = async (token: string, hash: string): Promise<Page> => {
    const page = await openSignedIn(browser, { origin, token, hash, problems });
    pages.push(page);
    return page;
  };
  const post = async (url: string, payload: Record<string, unknown>): Promise<{ id: number }> => {
    const response = await t.app.inject({ method: 'POST', url, payload });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: number }>();
  };
  const newKey = async (name: string, scopes: string[]): Promise<{ key: string; prefix: string }> => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name, scopes } });
    return response.json<{ key: string; prefix: string }>();
  };

  beforeAll(async () => {
    const schema = join(dir.path, 'bookshop.yaml');
    writeFileSync(schema, SCHEMA);
    t = await startTestApp({ schema });
    const names = [...Array.from({ length: 30 }, (_, i) => `Author ${String(i + 1).padStart(2, '0')}`), 'Terry Pratchett', 'Ursula K. Le Guin'];
    // Enough keys that the New API key form sits below the first screen.
    await Promise.all([
      ...names.map(async (name) => authors.set(name, (await post('/authors', { name })).id)),
      ...Array.from({ length: 25 }, (_, i) => newKey(`filler ${i + 1}`, ['books:read'])),
    ]);
    const terry = authors.get('Terry Pratchett');
    const titles = ['The Colour of Magic', 'The Light Fantastic', 'Equal Rites', 'Mort', 'Sourcery', 'Wyrd Sisters', 'Pyramids'];
    await Promise.all([
      ...titles.map((title) => post('/books', { title, authorId: terry })),
      post('/books', { title: 'A Wizard of Earthsea', authorId: authors.get('Ursula K. Le Guin'), editorId: terry }),
    ]);
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser.close();
    await t.close();
    dir.cleanup();
  });

  it.concurrent('a new API key, shown once, is scrolled into view and focused (the field, described by the warning)', async () => {
    const page = await open(TEST_ADMIN_TOKEN, '#/keys');
    await page.getByRole('heading', { name: 'New API key' }).waitFor(wait);
    await page.getByLabel('Name').fill('deploy');
    await page.getByRole('checkbox', { name: 'admin' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.locator('#shown-once-value');
    await shown.waitFor(wait);
    await until(async () => (await page.evaluate<string | undefined>('document.activeElement?.id')) === 'shown-once-value', 'the focus on the new key');
    const box = await page.evaluate<{ top: number; bottom: number; height: number }>(
      '(() => { const r = document.getElementById("shown-once-value").getBoundingClientRect(); return { top: r.top, bottom: r.bottom, height: innerHeight }; })()',
    );
    expect(box.top, 'the key is below the top of the window').toBeGreaterThanOrEqual(0);
    expect(box.bottom, 'the key is above the bottom of the window').toBeLessThanOrEqual(box.height);
    await expect(shown.getAttribute('aria-describedby').then((ids) => page.locator(`#${ids ?? 'none'}`).textContent())).resolves.toContain('it is shown only this once');
    expect(await shown.inputValue()).toMatch(/^rg_/);
    await saveScreenshot(page, 'admin-keys-shown-once.png');
    expect(problems).toEqual([]);
  });

  it.concurrent('revoking the key the console is signed in with warns first, then signs out cleanly', async () => {
    const own = await newKey('my own', ['admin']);
    const other = await newKey('someone else', ['books:read']);
    const page = await open(own.key, '#/keys');
    // Another key: no such warning.
    await page.getByRole('button', { name: `Revoke someone else (${other.prefix})` }).click();
    const otherDialog = page.getByRole('dialog', { name: 'Revoke someone else?' });
    await otherDialog.waitFor(wait);
    expect(await otherDialog.textContent()).not.toContain('signed in');
    await otherDialog.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: `Revoke my own (${own.prefix})` }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke my own?' });
    await dialog.waitFor(wait);
    await expect(dialog.textContent()).resolves.toContain('This console is signed in with this key: revoking it signs you out.');
    await saveScreenshot(page, 'admin-keys-revoke-own.png');
    await dialog.getByRole('button', { name: 'Revoke key and sign out' }).click();
    await page.getByLabel('Token').waitFor(wait);
    await page.getByRole('status').getByText('You revoked the key this console was signed in with, and are signed out.').waitFor(wait);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(await page.getByRole('alert').count(), 'no error is shown').toBe(0);
    expect((await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: { authorization: `Bearer ${own.key}` } })).statusCode).toBe(401);
    expect(problems).toEqual([]);
  });

  it.concurrent('a reference is a combobox: typing searches the referenced resource by name over the API, the arrow keys and Enter pick; an id can still be typed', async () => {
    const page = await open(TEST_ADMIN_TOKEN, '#/r/books/new');
    await page.getByRole('heading', { name: 'New book' }).waitFor(wait);
    await page.getByLabel('title').fill('Small Gods');
    const author = page.getByRole('combobox', { name: 'authorId' });
    await author.fill('pratch');
    const options = page.getByRole('listbox', { name: 'authors matching authorId' }).getByRole('option');
    await options.filter({ hasText: 'Terry Pratchett' }).waitFor(wait);
    expect(await options.count()).toBe(1);
    await expect(options.first().textContent()).resolves.toContain(`#${authors.get('Terry Pratchett')}`);
    await saveScreenshot(page, 'admin-reference-picker.png');
    await author.press('ArrowDown');
    await expect(author.getAttribute('aria-activedescendant')).resolves.toBe(await options.first().getAttribute('id'));
    await author.press('Enter');
    expect(await author.inputValue()).toBe(String(authors.get('Terry Pratchett')));
    await expect(author.getAttribute('aria-expanded')).resolves.toBe('false');
    await page.locator('#field-authorId-chosen', { hasText: 'Terry Pratchett' }).waitFor(wait);

    // An id typed as it is: offered as a match too, and sent as it is without picking.
    const editor = page.getByRole('combobox', { name: 'editorId' });
    await editor.fill(String(authors.get('Author 05')));
    await page.getByRole('listbox', { name: 'authors matching editorId' }).getByRole('option', { name: /Author 05/ }).waitFor(wait);
    await editor.press('Escape');
    await page.getByRole('button', { name: 'Create book' }).click();
    await page.getByRole('heading', { name: /^book \d+$/ }).waitFor(wait);
    const id = /#\/r\/books\/(\d+)$/.exec(page.url())?.[1];
    const created = (await t.app.inject({ method: 'GET', url: `/books/${id ?? 0}` })).json<Record<string, unknown>>();
    expect(created).toMatchObject({ title: 'Small Gods', authorId: authors.get('Terry Pratchett'), editorId: authors.get('Author 05') });
    // The edit form shows whom the ids name.
    await page.locator('#field-authorId-chosen', { hasText: 'Terry Pratchett' }).waitFor(wait);
    await page.locator('#field-editorId-chosen', { hasText: 'Author 05' }).waitFor(wait);
    expect(problems).toEqual([]);
  });

  it.concurrent('a record shows the first rows of each hasMany relation, with a link to the filtered list', async () => {
    const terry = authors.get('Terry Pratchett') ?? 0;
    const page = await open(TEST_ADMIN_TOKEN, `#/r/authors/${terry}`);
    await page.getByRole('heading', { name: `author ${terry}` }).waitFor(wait);
    const books = page.getByRole('region', { name: 'books', exact: true });
    await books.getByText('The first 5 of 7 books whose authorId is this author.').waitFor(wait);
    expect(await books.locator('tbody tr').count()).toBe(5);
    const edited = page.getByRole('region', { name: 'editedBooks', exact: true });
    await edited.getByText('The 1 book whose editorId is this author.').waitFor(wait);
    await edited.locator('tbody tr', { hasText: 'A Wizard of Earthsea' }).waitFor(wait);
    await saveScreenshot(page, 'admin-record-related.png');
    await books.getByRole('link', { name: 'All 7 books' }).click();
    await page.getByRole('heading', { name: 'books' }).waitFor(wait);
    await page.getByText('Total: 7 · page 1').waitFor(wait);
    expect(page.url()).toContain(`#/r/books?authorId=${terry}`);
    await page.getByRole('list', { name: 'Filters' }).getByText(`authorId eq ${terry}`).waitFor(wait);
    expect(problems).toEqual([]);
  });

  it.concurrent('a whole row opens its record, by a click anywhere on it or Enter on the focused row; the links in a row still go where they point', async () => {
    // By name: the authors were created concurrently, so their ids need not follow their names.
    const page = await open(TEST_ADMIN_TOKEN, '#/r/authors?sort=name');
    await page.getByText('Total: 32 · page 1').waitFor(wait);
    await page.getByRole('cell', { name: 'Author 05' }).click();
    await page.getByRole('heading', { name: `author ${authors.get('Author 05')}` }).waitFor(wait);
    await page.goBack();
    await page.getByText('Total: 32 · page 1').waitFor(wait);
    const row = page.locator('tbody tr', { hasText: 'Author 03' });
    await row.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `author ${authors.get('Author 03')}` }).waitFor(wait);

    // In a list of books, the author's link opens the author, not the book.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'books', exact: true }).click();
    const mort = page.locator('tbody tr', { hasText: 'Mort' });
    await mort.getByRole('link', { name: String(authors.get('Terry Pratchett')), exact: true }).click();
    await page.getByRole('heading', { name: `author ${authors.get('Terry Pratchett')}` }).waitFor(wait);
    expect(problems).toEqual([]);
  });

  it.concurrent('generated labels read "an author" and "a book" (the article by sound)', async () => {
    const page = await open(TEST_ADMIN_TOKEN, '#/');
    const cards = page.locator('ul.cards li');
    await cards.filter({ hasText: 'authors' }).getByText('An author.').waitFor(wait);
    await cards.filter({ hasText: 'books' }).getByText('Books, each with its author.').waitFor(wait);
    expect(await page.locator('main').textContent()).not.toMatch(/\bA author\b/);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'authors', exact: true }).click();
    await page.locator('main p.muted', { hasText: 'An author.' }).waitFor(wait);
    expect(problems).toEqual([]);
  });
});
