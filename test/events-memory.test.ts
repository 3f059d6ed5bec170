import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heapUsedAfterGc } from './helpers/heap.js';
import { ADMIN, listenApp, send, tempDatabase, type ListeningApp } from './helpers/event-stream.js';

/**
 * The event dispatcher keeps recent events in memory so subscribers catch up without a query:
 * bounded in bytes as well as in count, since one event may carry a record of up to a megabyte.
 */

describe('recent events in memory', () => {
  let server: ListeningApp;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const db = await tempDatabase();
    cleanup = db.cleanup;
    server = await listenApp(db.url);
  });
  afterAll(async () => {
    await server.close();
    await cleanup();
  });

  it('80 events of 900 KB each, with a subscriber reading them, leave well under their 72 MB on the heap', async () => {
    // A subscriber (an SSE stream) keeps the dispatcher remembering recent events; it reads and drops them.
    let received = 0;
    const stream = request(`${server.base}/v1/events?types=post.created`, { headers: { authorization: ADMIN, accept: 'text/event-stream' } }, (response) => {
      response.on('data', (chunk: Buffer) => (received += chunk.length));
    });
    stream.end();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const user = (await send(server.base, 'POST', '/users', { name: 'Writer' })).json();
    const before = heapUsedAfterGc();
    const big = 'x'.repeat(900_000);
    for (let i = 0; i < 80; i++) {
      const created = await send(server.base, 'POST', '/posts', { title: `Big ${i}`, userId: user.id, tags: { text: `${i}${big}` } });
      expect(created.status).toBe(201);
    }
    while (received < 80 * 900_000) await new Promise((resolve) => setTimeout(resolve, 50));
    const grown = heapUsedAfterGc() - before;
    stream.destroy();
    // At most 32 MiB of recent events stay; without a byte bound all 80 (10,000 by count) did.
    expect(grown, `heap grew by ${(grown / 1e6).toFixed(1)} MB`).toBeLessThan(48_000_000);
  });
});
