import { describe, expect, it } from 'vitest';
import { ADMIN, eventsUrl, send, SseReader, waitUntil } from './helpers/event-stream.js';
import { BODY_ALIASES, laggingServer, rawSubscriber, wsClient, writePosts } from './helpers/subscription-clients.js';

/**
 * One transaction may write more events than a subscriber may fall behind (a delete cascading to
 * many rows): subscribers that keep reading get every one of them. A subscriber is paused while
 * its buffers are full, and only one that stays paused, not reading, is ended as too slow. (Before,
 * any write during such a burst ended every paused subscriber at once, readers included.)
 */
describe('a burst of more events than maxLag in one transaction (maxLag 100)', () => {
  const MAX_LAG = 100;
  const lagging = laggingServer(MAX_LAG, undefined, 10_000);

  it('reaches every graphql-ws subscriber and /v1/events consumer that keeps reading, while writes go on', { timeout: 90_000 }, async () => {
    const { server } = lagging;
    const owner = (await send(server.base, 'POST', '/users', { name: 'burst owner' }, { authorization: ADMIN })).json<{ id: number }>();
    // More posts than a group of subscribers holds in memory (1,000), each event with its body.
    const count = 1200;
    const body = 'b'.repeat(2000);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const response = await server.app.inject({ method: 'POST', url: '/posts', payload: { title: `burst ${i}`, userId: owner.id, body } });
      expect(response.statusCode).toBe(201);
      ids.push(String((JSON.parse(response.body) as { id: number }).id));
    }
    const shared = [await rawSubscriber(server, 'subscription { postDeleted { id body } }'), await rawSubscriber(server, 'subscription { postDeleted { id body } }')];
    const other = wsClient(server.base, { connectionParams: { Authorization: ADMIN } });
    const stream = await SseReader.open(eventsUrl(server.base, { types: 'post.deleted' }), { authorization: ADMIN });
    try {
      const before = server.app.restgraph.events.subscriberCount;
      const onOther = other.run<{ postDeleted: { id: string; title: string } }>('subscription { postDeleted { title id } }');
      await waitUntil(() => server.app.restgraph.events.subscriberCount === before + 1, 'the third subscription to start');
      await stream.waitFor((r) => r.comments.length > 0, 'the connected comment');

      // The cascade: 1,200 post.deleted events in one transaction; then writes go on meanwhile.
      expect((await send(server.base, 'DELETE', `/users/${String(owner.id)}`, undefined, { authorization: ADMIN })).status).toBe(204);
      for (let i = 0; i < 20; i++) expect((await send(server.base, 'POST', '/users', { name: `meanwhile ${i}` }, { authorization: ADMIN })).status).toBe(201);

      await onOther.waitForResults(count, 60_000);
      expect(onOther.data.map((d) => d.postDeleted.id)).toEqual(ids);
      expect(onOther.ended).toBe(false);
      for (const subscriber of shared) {
        await waitUntil(() => subscriber.results().length >= count, 'every post.deleted on a shared subscription', 60_000);
        const results = subscriber.results();
        expect(results.filter((r) => r.errors !== undefined)).toEqual([]);
        expect(results.map((r) => (r.data as unknown as { postDeleted: { id: string } }).postDeleted.id)).toEqual(ids);
      }
      await stream.until((e) => e.type === 'post.deleted' && e.body.data.object.id === Number(ids.at(-1)), 'the last post.deleted', 60_000);
      expect(stream.events.map((e) => String(e.body.data.object.id))).toEqual(ids);
      expect(stream.comments.filter((c) => c.includes('behind'))).toEqual([]);
    } finally {
      for (const subscriber of shared) subscriber.close();
      await other.dispose();
      stream.close();
    }
  });
});

describe('a subscriber more than maxLagReading behind (maxLag 100, maxLagReading 300, paused 1 hour)', () => {
  // maxPausedMs far beyond the test's timeout: the subscription can only end for being too far behind.
  const lagging = laggingServer(100, 3_600_000, 300);

  it('is ended with slow-consumer at once, well before it has taken nothing for maxPausedMs', { timeout: 90_000 }, async () => {
    const { server } = lagging;
    const active = (): number => server.app.restgraph.events.subscriberCount;
    const before = active();
    // ~120 kB a result: its socket's buffers fill within a few dozen.
    const slow = await rawSubscriber(server, `subscription { postCreated { id ${BODY_ALIASES} } }`);
    slow.pause();
    try {
      const writing = writePosts(server, lagging.author, 500, 'behind');
      writing.catch(() => undefined); // (awaited below)
      // Ended on the server while its client does not read; the client then reads again at once
      // (graphql-ws's keep-alive ends a connection that answers no ping for 12 to 24 s).
      await waitUntil(() => active() === before, 'the server to end the subscription', 60_000);
      slow.resume();
      await writing;
      await waitUntil(() => slow.messages.some((m) => m.type === 'complete'), 'the subscription to end', 60_000);
      const results = slow.results();
      expect(results.at(-1)?.errors?.[0]?.extensions?.code).toBe('slow-consumer');
      expect(results.length).toBeLessThan(500);
    } finally {
      slow.close();
    }
  });
});
