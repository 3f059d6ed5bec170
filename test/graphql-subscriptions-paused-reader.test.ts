import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenApp, send, tempDatabase, waitUntil, type ListeningApp } from './helpers/event-stream.js';
import { pausedBesideHealthy, writePosts } from './helpers/subscription-clients.js';

/**
 * A GraphQL subscriber that stops reading, within maxLag, on real sockets: paused, not dropped,
 * then caught up. (Readers that fall too far behind: graphql-subscriptions-slow-consumers-ws.test.ts and -sse.test.ts;
 * the rest of the subscriptions' lifecycle: graphql-subscriptions-lifecycle.test.ts.)
 *
 * A reader "stops" by pausing its TCP socket: the server's writes then wait, as they would for a
 * client on a slow network. Each event is sent with 30 aliases of a 4000-character body (~120 kB),
 * so the socket buffers fill within a few dozen events.
 */

describe('a subscriber that stops reading, within maxLag (default 10000) and the bytes a connection may hold queued (default 32 MiB)', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  const active = (): number => server.app.restgraph.events.subscriberCount;

  beforeAll(async () => {
    db = await tempDatabase();
    server = await listenApp(db.url);
  });

  afterAll(async () => {
    await server.close();
    await db.cleanup();
  });

  it('a subscriber that stops reading is paused, not dropped: when it reads again it gets every event once, in order; writes and other subscribers go on meanwhile', { timeout: 90_000 }, async () => {
    const author = (await send(server.base, 'POST', '/users', { name: 'paused reader' })).json();
    const { slow, healthy, onHealthy, before } = await pausedBesideHealthy(server);
    try {
      // ~120 kB per event to the paused reader: its socket fills within a few dozen events, then
      // the rest wait in memory (200 events, ~24 MB, stay within maxLag 10000 and within the
      // 32 MiB a connection's subscriptions may hold queued).
      const ids = await writePosts(server, author, 200, 'paused');
      await onHealthy.waitForResults(200, 60_000);
      expect(onHealthy.data.map((d) => d.postCreated.id)).toEqual(ids);
      expect(active()).toBe(before + 1);

      slow.resume();
      await waitUntil(() => slow.results().length >= 200 || slow.messages.some((m) => m.type !== 'next'), 'the paused reader to catch up', 60_000);
      expect(slow.results().map((r) => r.data?.postCreated.id)).toEqual(ids);
      expect(slow.messages.every((m) => m.type === 'next' && m.payload?.errors === undefined)).toBe(true);
    } finally {
      slow.close();
      await healthy.dispose();
    }
  });
});
