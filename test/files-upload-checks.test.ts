import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { png } from './helpers/files.js';

/**
 * Upload checks (docs/files.md#upload): an image whose dimensions are not in its first megabyte
 * is refused (its pixel count cannot be checked), and a raw upload refuses Idempotency-Key (a
 * replay would need the file's bytes), as a multipart body does.
 */

const SCHEMA = `
resources:
  items:
    fields:
      title: { type: string }
      any: { type: file, maxSize: 8MB }
      many: { type: file, multiple: true, maxFiles: 5 }
`;

/** A JPEG whose frame header (60000 × 60000) comes after `metadata` bytes of APP1 segments. */
function jpegWithLongMetadata(metadata: number): Buffer {
  const parts = [Buffer.from([0xff, 0xd8])];
  for (let left = metadata; left > 0; left -= 65_533) {
    const size = Math.min(65_533, left);
    const header = Buffer.from([0xff, 0xe1, 0, 0]);
    header.writeUInt16BE(size + 2, 2);
    parts.push(header, Buffer.alloc(size, 0x20));
  }
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]);
  sof.writeUInt16BE(60_000, 5);
  sof.writeUInt16BE(60_000, 7);
  parts.push(sof, Buffer.from([0xff, 0xd9]));
  return Buffer.concat(parts);
}

describe('upload checks', () => {
  let t: TestApp;
  let dir: { path: string; cleanup: () => void };
  const stored = (): string[] => (existsSync(dir.path) ? readdirSync(dir.path).filter((s) => s !== 'tmp').flatMap((s) => readdirSync(join(dir.path, s))) : []);
  beforeAll(async () => {
    dir = tempDir('restgraph-upload-checks-');
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { dir: dir.path } });
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });
  const newItem = async (): Promise<number> => json<{ id: number }>(await t.app.inject({ method: 'POST', url: '/items', payload: { title: 'x' } })).id;

  it('refuses an image whose dimensions are not in its first megabyte with a 422, and keeps nothing', async () => {
    const id = await newItem();
    const before = stored();
    const response = await t.app.inject({ method: 'PUT', url: `/items/${id}/any`, payload: jpegWithLongMetadata(2_600_000), headers: { 'content-type': 'image/jpeg' } });
    // Before: 200, the 60000 × 60000 image stored.
    expect(response.statusCode).toBe(422);
    expect(json<{ detail: string }>(response).detail).toMatch(/dimensions/);
    expect(stored()).toEqual(before);
    expect(json<{ any: unknown }>(await t.app.inject({ url: `/items/${id}` })).any).toBeNull();
  });

  it('refuses Idempotency-Key on a raw upload with a 400, before storing anything', async () => {
    const id = await newItem();
    const headers = { 'content-type': 'image/png', 'idempotency-key': 'k-1' };
    const first = await t.app.inject({ method: 'POST', url: `/items/${id}/many`, payload: png(), headers });
    const second = await t.app.inject({ method: 'POST', url: `/items/${id}/many`, payload: png(), headers });
    // Before: 200 and 200, two files appended under one key.
    expect([first.statusCode, second.statusCode]).toEqual([400, 400]);
    expect(json<{ detail: string }>(first).detail).toMatch(/Idempotency-Key/);
    expect(json<{ many: unknown }>(await t.app.inject({ url: `/items/${id}` })).many).toBeNull();
  });
});
