import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { keyOf, type FileValue } from '../src/core/file-fields.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';
import { form, png } from './helpers/files.js';
import { startS3Server, type TestBucket } from './helpers/s3-server.js';

/**
 * File fields on S3-compatible storage (docs/files.md#s3), against s3rver in this process: the
 * lifecycle of a file (raw and multipart upload, byte-identical download, a range, a thumbnail,
 * replace, delete) checked on the bucket itself, streamed multipart uploads past 5 MiB, and a 413
 * that leaves no object; on the suite's database.
 */

checkResponsesAgainstOpenApi();

const SCHEMA = `
resources:
  users:
    fields:
      name: { type: string }
      avatar: { type: file, maxSize: 64KB, accept: [image/png, image/jpeg] }
      big: { type: file, maxSize: 7MB }
`;

const PREFIX = 'app/files/';
const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

type User = { id: number; name: string | null; avatar: FileValue | null; big: FileValue | null };

describe('file fields on S3-compatible storage', () => {
  let bucket: TestBucket;
  let t: TestApp;
  const stored = (): Promise<string[]> => bucket.keys(PREFIX);
  const newUser = async (): Promise<number> => json<User>(await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'ann' } })).id;
  const upload = (url: string, body: Buffer | string | Readable, type = 'application/octet-stream') => t.app.inject({ method: 'PUT', url, payload: body, headers: { 'content-type': type } });
  const image = (side: number): Promise<Buffer> => sharp({ create: { width: side, height: side, channels: 3, background: { r: 20, g: 120, b: 200 } } }).png().toBuffer();

  beforeAll(async () => {
    bucket = await startS3Server();
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { url: `s3://${bucket.name}/${PREFIX}`, s3: bucket.settings } });
  });
  afterAll(async () => {
    await t.close();
    await bucket.close();
  });

  it('keeps a raw upload through its life: stored, read whole and in part, thumbnailed, replaced, deleted', async () => {
    const id = await newUser();
    const bytes = await image(300);
    const put = await upload(`/users/${id}/avatar?name=me.png`, bytes, 'image/png');
    expect(put.statusCode, put.body).toBe(200);
    const first = json<User>(put).avatar as FileValue;
    const key = keyOf(first) ?? '';
    expect(await stored()).toContain(key);

    const get = await t.app.inject({ url: `/users/${id}/avatar` });
    expect(get.statusCode).toBe(200);
    expect(sha256(get.rawPayload)).toBe(sha256(bytes));
    expect(get.headers).toMatchObject({ 'content-type': 'image/png', 'content-length': String(bytes.length), etag: first.etag, 'x-content-type-options': 'nosniff' });
    expect(new Date(String(get.headers['last-modified'])).getTime()).not.toBeNaN();
    expect((await t.app.inject({ url: `/users/${id}/avatar`, headers: { 'if-none-match': first.etag } })).statusCode).toBe(304);

    const part = await t.app.inject({ url: `/users/${id}/avatar`, headers: { range: 'bytes=100-199' } });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-199/${bytes.length}`);
    expect(part.rawPayload.equals(bytes.subarray(100, 200))).toBe(true);
    expect((await t.app.inject({ url: `/users/${id}/avatar`, headers: { range: `bytes=${bytes.length}-` } })).statusCode).toBe(416);

    const thumb = await t.app.inject({ url: `/users/${id}/avatar?thumb=100x100` });
    expect(thumb.statusCode, thumb.body).toBe(200);
    expect(await sharp(thumb.rawPayload).metadata()).toMatchObject({ width: 100, height: 100 });
    expect(await stored()).toContain(`${key}.100x100`);

    // Replaced: the old object and its thumbnail leave the bucket after the commit.
    const second = json<User>(await upload(`/users/${id}/avatar`, png(100), 'image/png')).avatar as FileValue;
    await expect.poll(stored).not.toContain(key);
    const keys = await stored();
    expect(keys).not.toContain(`${key}.100x100`);
    expect(keys).toContain(keyOf(second));

    const del = await t.app.inject({ method: 'DELETE', url: `/users/${id}/avatar` });
    expect(del.statusCode).toBe(204);
    await expect.poll(stored).not.toContain(keyOf(second));
    expect((await t.app.inject({ url: `/users/${id}/avatar` })).statusCode).toBe(404);
  });

  it('takes files in a multipart form, replaces them with the next form, and deletes them with the record', async () => {
    const bytes = png(30_000);
    const created = await t.app.inject({ method: 'POST', url: '/users', ...form([{ name: 'name', value: 'bo' }, { name: 'avatar', file: bytes, filename: 'bo.png', type: 'image/png' }]) });
    expect(created.statusCode, created.body).toBe(201);
    const user = json<User>(created);
    const first = keyOf(user.avatar) ?? '';
    expect(await stored()).toContain(first);
    expect(sha256((await t.app.inject({ url: `/users/${user.id}/avatar` })).rawPayload)).toBe(sha256(bytes));

    const next = png(10);
    const patched = await t.app.inject({ method: 'PATCH', url: `/users/${user.id}`, ...form([{ name: 'avatar', file: next, filename: 'b2.png', type: 'image/png' }]) });
    expect(patched.statusCode, patched.body).toBe(200);
    const second = keyOf(json<User>(patched).avatar) ?? '';
    await expect.poll(stored).not.toContain(first);
    expect(sha256((await t.app.inject({ url: `/users/${user.id}/avatar` })).rawPayload)).toBe(sha256(next));

    expect((await t.app.inject({ method: 'DELETE', url: `/users/${user.id}` })).statusCode).toBe(204);
    await expect.poll(stored).not.toContain(second);
  });

  it('streams a file past one upload part (5 MiB) in parts, and reads it back byte-identical', async () => {
    const id = await newUser();
    const bytes = randomBytes(6 * 1024 * 1024 + 123);
    // A stream without Content-Length, in 64 KiB chunks.
    const chunks = Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, i) => bytes.subarray(i * 65_536, (i + 1) * 65_536));
    const put = await upload(`/users/${id}/big?name=data.bin`, Readable.from(chunks));
    expect(put.statusCode, put.body).toBe(200);
    const file = json<User>(put).big as FileValue;
    expect(file.size).toBe(bytes.length);
    const get = await t.app.inject({ url: `/users/${id}/big` });
    expect(sha256(get.rawPayload)).toBe(sha256(bytes));
    const tail = await t.app.inject({ url: `/users/${id}/big`, headers: { range: 'bytes=-1000' } });
    expect(tail.statusCode).toBe(206);
    expect(tail.rawPayload.equals(bytes.subarray(bytes.length - 1000))).toBe(true);
  });

  it('refuses a file past maxSize with 413 and leaves no object, in one part or past the first part', async () => {
    const id = await newUser();
    const before = await stored();
    const small = await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar`, payload: Readable.from([png(), randomBytes(40 * 1024), randomBytes(40 * 1024)]), headers: { 'content-type': 'image/png' } });
    expect(small.statusCode).toBe(413);
    expect(json<{ code: string }>(small).code).toBe('payload-too-large');
    // 8 MiB against 7 MB: the first 5 MiB part is sent before the limit is reached; the multipart upload is abandoned.
    const big = await t.app.inject({ method: 'PUT', url: `/users/${id}/big`, payload: Readable.from(Array.from({ length: 128 }, () => randomBytes(65_536))), headers: { 'content-type': 'application/octet-stream' } });
    expect(big.statusCode).toBe(413);
    expect(await stored()).toEqual(before);
    const user = json<User>(await t.app.inject({ url: `/users/${id}` }));
    expect([user.avatar, user.big]).toEqual([null, null]);
  });
});
