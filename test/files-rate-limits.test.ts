import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { png } from './helpers/files.js';

/**
 * A resource's rate limits (docs/rate-limits.md) on its file routes (docs/files.md): an upload or
 * a file's removal counts as an update, a download or thumbnail as a get.
 */

const SCHEMA = `
resources:
  photos:
    access: { read: public, write: public }
    rateLimits: { update: 2/1m, get: 3/1m }
    fields:
      title: { type: string }
      image: { type: file, thumbs: [10x10] }
      extras: { type: file, multiple: true, maxFiles: 20 }
`;

/** A client address of its own for each test, so counters never meet across tests. */
function address(): string {
  const bytes = randomBytes(3);
  return `10.${bytes[0] ?? 0}.${bytes[1] ?? 0}.${bytes[2] ?? 0}`;
}

describe('rate limits on file routes', () => {
  let t: TestApp;
  let dir: { path: string; cleanup: () => void };
  let id: number;
  beforeAll(async () => {
    dir = tempDir('restgraph-files-rl-');
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { dir: dir.path } });
    id = json<{ id: number }>(await t.app.inject({ method: 'POST', url: '/photos', payload: { title: 'a' } })).id;
    const first = await t.app.inject({ method: 'PUT', url: `/photos/${id}/image`, payload: png(), headers: { 'content-type': 'image/png' } });
    expect(first.statusCode).toBe(200);
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  const as = (remoteAddress: string) => (method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH', url: string, payload?: Buffer | Record<string, unknown>) =>
    t.app.inject({ method, url, remoteAddress, headers: { authorization: '', ...(Buffer.isBuffer(payload) ? { 'content-type': 'image/png' } : {}) }, ...(payload === undefined ? {} : { payload }) });

  it('counts uploads and removals as updates, with PATCH: the third in the window is a 429', async () => {
    const send = as(address());
    const statuses = [
      (await send('PUT', `/photos/${id}/image`, png())).statusCode,
      (await send('POST', `/photos/${id}/extras`, png())).statusCode,
      (await send('PUT', `/photos/${id}/image`, png())).statusCode,
      (await send('DELETE', `/photos/${id}/extras`)).statusCode,
      (await send('PATCH', `/photos/${id}`, { title: 'b' })).statusCode,
    ];
    // Before: 200 200 200 204 200 (file routes counted nothing).
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
  });

  it('counts downloads and thumbnails as gets', async () => {
    const send = as(address());
    const statuses = [];
    for (const url of [`/photos/${id}/image`, `/photos/${id}/image?thumb=10x10`, `/photos/${id}/image`, `/photos/${id}/image?thumb=10x10`, `/photos/${id}`]) {
      statuses.push((await send('GET', url)).statusCode);
    }
    // Before: 200 200 200 200 200.
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });
});
