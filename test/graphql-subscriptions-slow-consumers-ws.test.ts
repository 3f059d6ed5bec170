import { describe, expect, it } from 'vitest';
import { waitUntil } from './helpers/event-stream.js';
import { laggingServer, pausedBesideHealthy, writePosts } from './helpers/subscription-clients.js';

/**
 * GraphQL subscribers that stop reading and fall more than maxLag events behind, on real sockets:
 * ended with one slow-consumer error, while writes and other subscribers go on. (Within maxLag:
 * graphql-subscriptions-paused-reader.test.ts; graphql-sse: graphql-subscriptions-slow-consumers-sse.test.ts.)
 *
 * A reader "stops" by pausing its TCP socket: the server's writes then wait, as they would for a
 * client on a slow network. Each event is sent with 30 aliases of a 4000-character body (~120 kB),
 * so the socket buffers fill within a few dozen events.
 */

describe('graphql-ws subscribers that fall too far behind (maxLag 100, paused 250 ms)', () => {
  const MAX_LAG = 100;
  const lagging = laggingServer(MAX_LAG, 250);

  // 2,000 writes: 3 to 7 s alone, 30 s in a full `npm test` on a loaded 2-core machine.
  it('a reader that stops is ended with one slow-consumer error once it is more than maxLag events behind; writes and other subscribers go on', { timeout: 120_000 }, async () => {
    const active = (): number => lagging.server.app.restgraph.events.subscriberCount;
    const { slow, healthy, onHealthy, before } = await pausedBesideHealthy(lagging.server);
    try {
      // The paused reader's socket takes a few dozen ~120 kB events; more than 100 behind and
      // taking nothing for 250 ms, it is ended while the writes go on.
      const writing = writePosts(lagging.server, lagging.author, 2000, 'lagging');
      writing.catch(() => undefined); // (awaited below)
      // Ended on the server while its client still does not read. The client reads again at
      // once: graphql-ws's keep-alive ends a connection that answers no ping for 12 to 24 s,
      // which a reader paused through all the writes would not, on a slow machine.
      await waitUntil(() => active() === before, 'the server to end the lagging subscription', 60_000);
      slow.resume();
      const ids = await writing;
      await onHealthy.waitForResults(2000, 60_000);
      expect(onHealthy.data.map((d) => d.postCreated.id)).toEqual(ids);
      expect(onHealthy.ended).toBe(false);

      await waitUntil(() => slow.messages.some((m) => m.type === 'complete'), 'the lagging subscription’s complete message', 60_000);
      const delivered = slow.messages.filter((m) => m.type === 'next' && m.payload?.errors === undefined);
      expect(delivered.length).toBeGreaterThan(0);
      expect(delivered.length).toBeLessThan(2000 - MAX_LAG);
      expect(delivered.map((m) => m.payload?.data?.postCreated.id)).toEqual(ids.slice(0, delivered.length));
      const rest = slow.messages.slice(delivered.length);
      expect(rest).toEqual([
        {
          id: 'slow',
          type: 'next',
          payload: {
            data: null,
            errors: [
              {
                message: expect.any(String) as string,
                locations: [{ line: 1, column: 16 }],
                path: ['postCreated'],
                extensions: { code: 'slow-consumer', status: 503 },
              },
            ],
          },
        },
        { id: 'slow', type: 'complete' },
      ]);
      expect(rest[0]?.payload?.errors?.[0]?.message).toContain('fell too far behind');
    } finally {
      slow.close();
      await healthy.dispose();
    }
  });
});
