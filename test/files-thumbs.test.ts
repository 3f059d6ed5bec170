import { deflateSync, crc32 } from 'node:zlib';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { keyOf, type FileValue } from '../src/core/file-fields.js';

/**
 * Thumbnails of image file fields (docs/files.md#thumbnails): the sizes of the list only, rendered
 * once and kept beside the file, deleted with it; image bombs refused at upload, on the suite's database.
 */

checkResponsesAgainstOpenApi();

const SCHEMA = `
resources:
  users:
    fields:
      name: { type: string }
      avatar: { type: file, maxSize: 1MB }
      photos: { type: file, multiple: true, thumbs: [50x20, 40x40c] }
`;

type User = { id: number; avatar: FileValue | null; photos: FileValue[] };

/** A PNG chunk: length, type, data, CRC. */
function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG whose header says `side` × `side` pixels (1-bit grey), with the first rows' data: a few hundred bytes. */
function bombPng(side: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 1; // bit depth
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.alloc((Math.ceil(side / 8) + 1) * 16))), chunk('IEND', Buffer.alloc(0))]);
}

describe('thumbnails', () => {
  let t: TestApp;
  let dir: { path: string; cleanup: () => void };
  const stored = (): string[] =>
    readdirSync(dir.path)
      .filter((shard) => shard !== 'tmp')
      .flatMap((shard) => readdirSync(join(dir.path, shard)));
  const newUser = async (): Promise<number> => json<User>(await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'ann' } })).id;
  const image = (width: number, height: number, format: 'png' | 'jpeg'): Promise<Buffer> =>
    sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } }).toFormat(format).toBuffer();

  beforeAll(async () => {
    dir = tempDir('restgraph-thumbs-');
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { dir: dir.path } });
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  it('renders a fitted and a cropped thumbnail once, keeps them beside the file, and deletes them with it', async () => {
    const id = await newUser();
    const put = await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar?name=me.jpg`, payload: await image(800, 400, 'jpeg'), headers: { 'content-type': 'image/jpeg' } });
    expect(put.statusCode, put.body).toBe(200);
    const key = keyOf(json<User>(put).avatar) ?? '';

    const fit = await t.app.inject({ url: `/users/${id}/avatar?thumb=100x100` });
    expect(fit.statusCode, fit.body).toBe(200);
    expect(fit.headers['content-type']).toBe('image/jpeg');
    expect(await sharp(fit.rawPayload).metadata()).toMatchObject({ format: 'jpeg', width: 100, height: 50 });
    expect(fit.headers.etag).toBe(`"${key}.100x100"`);
    expect(fit.headers['x-content-type-options']).toBe('nosniff');
    expect(fit.headers['content-security-policy']).toContain('sandbox');
    expect(fit.headers['content-disposition']).toContain('inline; filename="me-100x100.jpg"');
    expect(fit.headers['content-length']).toBe(String(fit.rawPayload.length));

    const crop = await t.app.inject({ url: `/users/${id}/avatar?thumb=100x100c` });
    expect(await sharp(crop.rawPayload).metadata()).toMatchObject({ width: 100, height: 100 });
    expect(stored().filter((name) => name.startsWith(key)).sort()).toEqual([key, `${key}.100x100`, `${key}.100x100c`]);

    // Kept: a second request reads the stored one (same bytes), and If-None-Match answers 304.
    const again = await t.app.inject({ url: `/users/${id}/avatar?thumb=100x100` });
    expect(again.rawPayload.equals(fit.rawPayload)).toBe(true);
    expect((await t.app.inject({ url: `/users/${id}/avatar?thumb=100x100`, headers: { 'if-none-match': String(fit.headers.etag) } })).statusCode).toBe(304);
    // The original is still the original.
    expect((await t.app.inject({ url: `/users/${id}/avatar` })).headers.etag).toBe(`"${key}"`);

    // Replaced: the old file and its thumbnails go after the commit.
    await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar`, payload: await image(10, 10, 'png') });
    await expect.poll(() => stored().filter((name) => name.startsWith(key))).toEqual([]);
    const small = await t.app.inject({ url: `/users/${id}/avatar?thumb=300x300` });
    expect(small.headers['content-type']).toBe('image/png');
    expect(await sharp(small.rawPayload).metadata()).toMatchObject({ width: 10, height: 10 }); // fit never enlarges

    const newKey = keyOf(json<User>(await t.app.inject({ url: `/users/${id}` })).avatar) ?? '';
    expect((await t.app.inject({ method: 'DELETE', url: `/users/${id}` })).statusCode).toBe(204);
    await expect.poll(() => stored().filter((name) => name.startsWith(newKey))).toEqual([]);
  });

  it('serves only the sizes of the list (the field\'s thumbs replacing the default), and only of images', async () => {
    const id = await newUser();
    await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar`, payload: await image(64, 64, 'png') });
    const other = await t.app.inject({ url: `/users/${id}/avatar?thumb=123x45` });
    expect(other.statusCode).toBe(400);
    expect(json<{ detail: string }>(other).detail).toContain('100x100, 300x300, 600x600, 100x100c, 300x300c, 600x600c');
    expect((await t.app.inject({ url: `/users/${id}/avatar?thumb=50x20` })).statusCode).toBe(400);
    expect((await t.app.inject({ url: `/users/${id}/avatar?thumb=../../x` })).statusCode).toBe(400);

    const post = await t.app.inject({ method: 'POST', url: `/users/${id}/photos`, payload: await image(200, 200, 'png') });
    const photo = json<User>(post).photos[0] as FileValue;
    const crop = await t.app.inject({ url: `${photo.url}?thumb=40x40c` });
    expect(await sharp(crop.rawPayload).metadata()).toMatchObject({ width: 40, height: 40 });
    const refused = await t.app.inject({ url: `${photo.url}?thumb=100x100` });
    expect(refused.statusCode).toBe(400);
    expect(json<{ detail: string }>(refused).detail).toContain('50x20, 40x40c');

    await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar?name=a.txt`, payload: 'plain text', headers: { 'content-type': 'text/plain' } });
    const text = await t.app.inject({ url: `/users/${id}/avatar?thumb=100x100` });
    expect(text.statusCode).toBe(400);
    expect(json<{ detail: string }>(text).detail).toContain('text/plain');
  });

  it('refuses an image bomb at upload (422, nothing stored) from its header alone', async () => {
    const id = await newUser();
    const bomb = bombPng(50_000);
    expect(bomb.length).toBeLessThan(2000);
    const before = stored();
    const put = await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar`, payload: bomb });
    expect(put.statusCode, put.body).toBe(422);
    expect(json<{ detail: string }>(put).detail).toContain('50000 × 50000');
    expect(stored().filter((name) => !before.includes(name))).toEqual([]); // nothing added (earlier replacements may still be deleting)
    expect(json<User>(await t.app.inject({ url: `/users/${id}` })).avatar).toBeNull();
    // An image within the limit whose header is no bomb still uploads.
    expect((await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar`, payload: bombPng(5_000) })).statusCode).toBe(200);
    // Its data is cut short: the thumbnail is a 422, not a 5xx.
    expect((await t.app.inject({ url: `/users/${id}/avatar?thumb=100x100` })).statusCode).toBe(422);
  });

  it('refuses a bomb whose JPEG frame header lies past the first 4 KB (read back from storage, then removed), and never decodes one at render time', async () => {
    const id = await newUser();
    const jpeg = await image(16, 16, 'jpeg');
    // 10 KB of an application segment (APP15) before the frame header, whose dimensions say 60,000 × 60,000.
    const padding = Buffer.concat([Buffer.from([0xff, 0xef, 0x28, 0x02]), Buffer.alloc(0x2800, 0x20)]);
    const padded = Buffer.concat([jpeg.subarray(0, 2), padding, jpeg.subarray(2)]);
    const within = await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar`, payload: padded });
    expect(within.statusCode, within.body).toBe(200); // dimensions found past the head, within the limit
    const sof = padded.indexOf(Buffer.from([0xff, 0xc0]));
    expect(sof).toBeGreaterThan(4100);
    const bomb = Buffer.from(padded);
    bomb.writeUInt16BE(60_000, sof + 5);
    bomb.writeUInt16BE(60_000, sof + 7);
    const before = stored();
    const refused = await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar`, payload: bomb });
    expect(refused.statusCode, refused.body).toBe(422);
    expect(stored().filter((name) => !before.includes(name))).toEqual([]); // nothing added (earlier replacements may still be deleting)

    // A bomb that reached storage anyway (written there by hand): the thumbnail is a 422, its pixels never decoded.
    const key = keyOf(json<User>(within).avatar) ?? '';
    writeFileSync(join(dir.path, key.slice(0, 2), key), bombPng(50_000));
    const thumb = await t.app.inject({ url: `/users/${id}/avatar?thumb=600x600` });
    expect(thumb.statusCode, thumb.body).toBe(422);
    expect(json<{ detail: string }>(thumb).detail).toContain('pixels');
  });

  it('checks thumbs at schema load', () => {
    const load = (fields: string): unknown => parseSchemaText(`resources:\n  things:\n    fields:\n      ${fields}\n`);
    expect(() => load('f: { type: file, thumbs: [100x100, 10x0, 9000x10, big] }')).toThrow(/thumbs\[1\][\s\S]*thumbs\[2\][\s\S]*thumbs\[3\]/);
    expect(() => load('s: { type: string, thumbs: [10x10] }')).toThrow(/"thumbs" applies to file fields/);
    expect(load('f: { type: file, thumbs: [10x10, 4096x1c] }')).toBeDefined();
  });
});
