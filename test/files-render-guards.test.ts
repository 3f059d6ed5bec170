import { rmSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { keyOf, type FileValue } from '../src/core/file-fields.js';
import { MAX_JPEG_SCANS, MAX_WAITING_RENDERS } from '../src/files/render-guards.js';
import { json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';

/**
 * What keeps thumbnail rendering available to everyone (docs/files.md#thumbnails): a JPEG built
 * of many scans (each a pass over every block: slow to decode at any size) is refused before it
 * is decoded; a failed render is remembered, not run again on every request; and renders beyond
 * the queue's bound are refused with a 503 rather than waiting without end; on the suite's database.
 */

const SCHEMA = `
resources:
  users:
    fields:
      name: { type: string }
      avatar: { type: file, maxSize: 5MB }
`;

type User = { id: number; avatar: FileValue | null };

/** A progressive JPEG whose last scan is repeated until it has `scans` scans: decodable, and as slow as its scans are many. */
async function manyScansJpeg(scans: number): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 10, g: 90, b: 160 } } })
    .jpeg({ progressive: true })
    .toBuffer();
  const sos: number[] = [];
  for (let at = 0; at < jpeg.length - 1; at++) if (jpeg[at] === 0xff && jpeg[at + 1] === 0xda) sos.push(at);
  const last = sos[sos.length - 1] ?? 0;
  const end = jpeg.length - 2; // EOI
  const extra = Array.from({ length: scans - sos.length }, () => jpeg.subarray(last, end));
  return Buffer.concat([jpeg.subarray(0, end), ...extra, jpeg.subarray(end)]);
}

describe('thumbnail rendering stays available', () => {
  let t: TestApp;
  let dir: { path: string; cleanup: () => void };
  const userWith = async (bytes: Buffer, name: string): Promise<{ id: number; file: FileValue }> => {
    const id = json<User>(await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'ann' } })).id;
    const put = await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar?name=${name}`, payload: bytes, headers: { 'content-type': 'application/octet-stream' } });
    expect(put.statusCode, put.body).toBe(200);
    return { id, file: json<User>(put).avatar as FileValue };
  };

  beforeAll(async () => {
    dir = tempDir('restgraph-render-guards-');
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { dir: dir.path } });
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  it('refuses a JPEG of more scans than the bound before decoding it, and remembers the refusal', async () => {
    const { id, file } = await userWith(await manyScansJpeg(MAX_JPEG_SCANS + 40), 'scans.jpg');
    expect(file.type).toBe('image/jpeg');
    const refused = await t.app.inject({ url: `/users/${id}/avatar?thumb=100x100` });
    expect(refused.statusCode, refused.body).toBe(422);
    expect(json<{ detail: string }>(refused).detail).toContain(`more than the ${MAX_JPEG_SCANS}`);

    // Remembered: with the file's bytes gone from storage, a render would answer 404; the refusal comes again instead.
    const key = keyOf(file) ?? '';
    rmSync(join(dir.path, key.slice(0, 2), key));
    const again = await t.app.inject({ url: `/users/${id}/avatar?thumb=100x100` });
    expect(again.statusCode, again.body).toBe(422);
    expect(json<{ detail: string }>(again).detail).toContain('scans');

    // An ordinary progressive JPEG renders.
    const progressive = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 10, g: 90, b: 160 } } }).jpeg({ progressive: true }).toBuffer();
    const ordinary = await userWith(progressive, 'fine.jpg');
    expect((await t.app.inject({ url: `/users/${ordinary.id}/avatar?thumb=100x100` })).statusCode).toBe(200);
  });

  it('refuses renders past the queue bound with a 503 and Retry-After; the others render', async () => {
    // Large (36 megapixels) and cheap to send: each render decodes every pixel.
    const big = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: { r: 240, g: 240, b: 240 } } }).png({ compressionLevel: 9 }).toBuffer();
    const users = await Promise.all(Array.from({ length: 7 }, (_, n) => userWith(big, `big-${n}.png`)));
    const sizes = ['100x100', '300x300', '600x600', '100x100c', '300x300c', '600x600c'];
    const requests = users.flatMap((user) => sizes.map((size) => `/users/${user.id}/avatar?thumb=${size}`));
    expect(requests.length).toBeGreaterThan(MAX_WAITING_RENDERS + 2);
    const answers = await Promise.all(requests.map((url) => t.app.inject({ url })));
    const busy = answers.filter((answer) => answer.statusCode === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0]?.headers['retry-after']).toBe('5');
    expect(answers.every((answer) => answer.statusCode === 200 || answer.statusCode === 503)).toBe(true);
    // Refused for the moment only: asked again, one renders.
    const url = requests[answers.findIndex((answer) => answer.statusCode === 503)] ?? '';
    expect((await t.app.inject({ url })).statusCode).toBe(200);
  }, 120_000);
});
