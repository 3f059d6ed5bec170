import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heapUsedAfterGc } from './helpers/heap.js';
import { discardLogs, json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * The authenticator remembers verified API keys by the whole Authorization header, which the holder
 * of one valid key can vary at will (spaces between `Bearer` and the token): what it remembers is
 * bounded in bytes. Measured over a real socket (app.inject() keeps ~10 KB per request of its own).
 */

describe('the verified-key cache is bounded in bytes', () => {
  let t: TestApp;
  let key: string;
  let base: string;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  /** GET over the socket with this Authorization header; resolves to the status. */
  const get = (authorization: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request(`${base}/users?limit=1`, { agent, headers: { authorization } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  beforeAll(async () => {
    t = await startTestApp({ apiKeyCacheMs: 3_600_000, logDestination: discardLogs() });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const created = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'cache', scopes: ['users:read'] } });
    key = json<{ key: string }>(created).key;
  });
  afterAll(async () => {
    agent.destroy();
    await t.close();
  });

  it('3,000 variants of one valid key’s header, 10 KB each, leave far less than their 30 MB on the heap', async () => {
    const before = heapUsedAfterGc();
    for (let i = 0; i < 3000; i++) expect(await get(`Bearer${' '.repeat(10_000 + i)}${key}`)).toBe(200);
    const grown = heapUsedAfterGc() - before;
    // The cache holds at most 4 MiB of headers; without a byte bound it kept all 30 MB.
    expect(grown, `heap grew by ${(grown / 1e6).toFixed(1)} MB`).toBeLessThan(12_000_000);
  });

  it('a key still works after its entries were evicted, and a revocation still takes effect at once', async () => {
    expect(await get(`Bearer ${key}`)).toBe(200);
    const listed = json<{ id: number; name: string }[]>(await t.app.inject({ method: 'GET', url: '/v1/tokens' }));
    const id = listed.find((k) => k.name === 'cache')?.id;
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/tokens/${String(id)}` })).statusCode).toBe(204);
    for (const header of [`Bearer ${key}`, `Bearer${' '.repeat(12_999)}${key}`]) expect(await get(header)).toBe(401);
  });
});
