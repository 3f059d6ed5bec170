import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSignedIn, until } from './helpers/admin-console-page.js';
import { chromiumAvailable, launchChromium, saveScreenshot } from './helpers/chromium.js';
import { startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { onlyOnSqlite } from './helpers/test-database.js';

/**
 * File fields in the admin console, in Chromium (docs/admin-console.md#files): an image uploaded
 * through the record page's file input shows its thumbnail (fetched with the token: the API wants
 * it in Authorization), in the record and in the table; Download saves the same bytes under the
 * file's name; a refused upload shows the server's problem; Remove deletes it from storage; a
 * multiple field adds and removes files one by one. Any page error or console error fails the
 * test. The console does not depend on the database, so this runs in the SQLite pass only.
 */

const available = chromiumAvailable('admin console files');
const wait = { timeout: 15_000 };

const SCHEMA = `
resources:
  photos:
    fields:
      title: { type: string, maxLength: 100 }
      image: { type: file, maxSize: 200KB, accept: [image/png, image/jpeg], thumbs: [100x100, 300x300c] }
      attachments: { type: file, multiple: true, maxFiles: 3, maxSize: 1MB }
`;

/** What the test reads of an `<img>` (the tests' TypeScript has no DOM types). */
type Img = { naturalWidth: number; naturalHeight: number };

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe.skipIf(!available || onlyOnSqlite)('file fields in the admin console, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let page: Page;
  const dir = tempDir();
  const filesDir = join(dir.path, 'files');
  const problems: string[] = [];
  let id: number;
  /** A 300 × 200 PNG: its 100x100 thumbnail is 100 × 67. */
  let image: Buffer;
  const imagePath = join(dir.path, 'sunset.png');

  const stored = (): string[] =>
    readdirSync(filesDir)
      .filter((shard) => shard !== 'tmp')
      .flatMap((shard) => readdirSync(join(filesDir, shard)))
      .filter((name) => !name.includes('.'));

  beforeAll(async () => {
    const schema = join(dir.path, 'photos.yaml');
    writeFileSync(schema, SCHEMA);
    image = await sharp({ create: { width: 300, height: 200, channels: 3, background: { r: 200, g: 80, b: 20 } } }).png().toBuffer();
    writeFileSync(imagePath, image);
    t = await startTestApp({ schema, files: { dir: filesDir } });
    const created = await t.app.inject({ method: 'POST', url: '/photos', payload: { title: 'Evening' } });
    id = created.json<{ id: number }>().id;
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    page = await openSignedIn(browser, { origin, token: TEST_ADMIN_TOKEN, hash: `#/r/photos/${id}`, problems, height: 1000 });
  });

  afterAll(async () => {
    await browser.close();
    await t.close();
    dir.cleanup();
  });

  it('uploads an image through the file input; the record shows its name, type, size and a thumbnail of the field’s first size', async () => {
    await page.getByRole('heading', { name: 'Files' }).waitFor(wait);
    await page.getByLabel('Upload image').setInputFiles(imagePath);
    const thumb = page.getByRole('img', { name: 'Thumbnail of sunset.png' });
    await thumb.waitFor(wait);
    await until(async () => (await thumb.evaluate((img) => (img as unknown as Img).naturalWidth)) > 0, 'the thumbnail loaded');
    // 100x100 (the field's first size) fits 300 × 200 inside: 100 × 67.
    expect(await thumb.evaluate((img) => [(img as unknown as Img).naturalWidth, (img as unknown as Img).naturalHeight])).toEqual([100, 67]);
    expect(await thumb.getAttribute('src')).toMatch(/^blob:/);
    const group = page.getByRole('group', { name: 'image' });
    await expect(group.textContent()).resolves.toContain(`image/png · ${(image.length / 1024).toFixed(1)} KB`);
    const record = (await t.app.inject({ method: 'GET', url: `/photos/${id}` })).json<{ image: { name: string; size: number } }>();
    expect(record.image).toMatchObject({ name: 'sunset.png', size: image.length });
    expect(stored()).toHaveLength(1);
    await saveScreenshot(page, 'admin-files-record.png');
    expect(problems).toEqual([]);
  });

  it('Download saves the same bytes under the file’s name', async () => {
    const [download] = await Promise.all([page.waitForEvent('download', wait), page.getByRole('button', { name: 'Download sunset.png' }).click()]);
    expect(download.suggestedFilename()).toBe('sunset.png');
    const saved = await download.path();
    expect(sha256(readFileSync(saved))).toBe(sha256(image));
  });

  it('the table shows the image’s thumbnail and name', async () => {
    const list = await openSignedIn(browser, { origin, token: TEST_ADMIN_TOKEN, hash: '#/r/photos', problems });
    const thumb = list.locator('table tbody').getByRole('img', { name: 'Thumbnail of sunset.png' });
    await thumb.waitFor(wait);
    await until(async () => (await thumb.evaluate((img) => (img as unknown as Img).naturalWidth)) > 0, 'the thumbnail in the table loaded');
    await expect(list.locator('table tbody').textContent()).resolves.toContain('sunset.png');
    await saveScreenshot(list, 'admin-files-table.png');
    await list.context().close();
  });

  it('a refused upload shows the server’s problem: a type the field does not accept (415), a file past maxSize (413); the file stays', async () => {
    const group = page.getByRole('group', { name: 'image' });
    await page.getByLabel('Replace image').setInputFiles({ name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('not an image at all\n') });
    await expect(group.getByRole('alert').textContent(wait)).resolves.toMatch(/image takes image\/png, image\/jpeg; this file is text\/plain .*\(415 unsupported-media-type\)/);
    const big = await sharp({ create: { width: 400, height: 400, channels: 3, background: { r: 1, g: 2, b: 3 } } }).png({ compressionLevel: 0 }).toBuffer();
    await page.getByLabel('Replace image').setInputFiles({ name: 'big.png', mimeType: 'image/png', buffer: big });
    await until(async () => /\(413 payload-too-large\)/.test((await group.getByRole('alert').textContent()) ?? ''), 'the 413 shown');
    await page.getByRole('img', { name: 'Thumbnail of sunset.png' }).waitFor(wait);
    expect(stored()).toHaveLength(1);
  });

  it('Remove asks, then deletes the file: the field is empty and storage holds nothing', async () => {
    await page.getByRole('button', { name: 'Remove sunset.png' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove file' }).click();
    await page.getByRole('group', { name: 'image' }).getByText('No file.').waitFor(wait);
    expect((await t.app.inject({ method: 'GET', url: `/photos/${id}` })).json<{ image: unknown }>().image).toBeNull();
    await until(() => Promise.resolve(stored().length === 0), 'the file deleted from storage');
  });

  it('a multiple field adds files one by one and removes one of them', async () => {
    const group = page.getByRole('group', { name: 'attachments' });
    await page.getByLabel('Add a file to attachments').setInputFiles({ name: 'a.txt', mimeType: 'text/plain', buffer: Buffer.from('first\n') });
    await group.getByText('a.txt').waitFor(wait);
    await page.getByLabel('Add a file to attachments').setInputFiles({ name: 'b.txt', mimeType: 'text/plain', buffer: Buffer.from('second\n') });
    await group.getByText('b.txt').waitFor(wait);
    await page.getByRole('button', { name: 'Remove a.txt' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove file' }).click();
    await until(async () => (await group.getByText('a.txt').count()) === 0, 'a.txt removed');
    const record = (await t.app.inject({ method: 'GET', url: `/photos/${id}` })).json<{ attachments: { name: string }[] }>();
    expect(record.attachments.map((file) => file.name)).toEqual(['b.txt']);
    await saveScreenshot(page, 'admin-files-multiple.png');
    expect(problems).toEqual([]);
  });
});
