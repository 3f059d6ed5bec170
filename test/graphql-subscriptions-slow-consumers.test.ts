import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { GraphQLFormattedError } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, listenApp, send, tempDatabase, waitUntil, type ListeningApp, type Row } from './helpers/event-stream.js';
import { BODY_ALIASES, codes, must, pausedBesideHealthy, writePosts } from './helpers/subscription-clients.js';

/**
 * GraphQL subscribers that stop reading and fall more than maxLag events behind, on real sockets:
 * ended with one slow-consumer error (graphql-ws and graphql-sse), while writes and other
 * subscribers go on. (Within maxLag: graphql-subscriptions-paused-reader.test.ts.)
 *
 * A reader "stops" by pausing its TCP socket: the server's writes then wait, as they would for a
 * client on a slow network. Each event is sent with 30 aliases of a 4000-character body (~120 kB),
 * so the socket buffers fill within a few dozen events.
 */

describe('subscribers that fall too far behind (maxLag 100)', () => {
  const MAX_LAG = 100;
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  let author: Row;

  beforeAll(async () => {
    db = await tempDatabase();
    server = await listenApp(db.url, { events: { maxLag: MAX_LAG } });
    author = (await send(server.base, 'POST', '/users', { name: 'lagging' })).json();
  });

  afterEach(async () => {
    await waitUntil(() => server.app.restgraph.events.subscriberCount === 0, 'every subscription of the test to end on the server');
  });

  afterAll(async () => {
    await server.close();
    await db.cleanup();
  });

  it('graphql-ws: a reader that stops is ended with one slow-consumer error once it is more than maxLag events behind; writes and other subscribers go on', { timeout: 90_000 }, async () => {
    const active = (): number => server.app.restgraph.events.subscriberCount;
    const { slow, healthy, onHealthy, before } = await pausedBesideHealthy(server);
    try {
      // The paused reader's socket takes a few dozen ~120 kB events, 1000 more wait in memory, and
      // the rest of the 2000 puts it far more than 100 behind.
      const ids = await writePosts(server, author, 2000, 'lagging');
      await onHealthy.waitForResults(2000, 60_000);
      expect(onHealthy.data.map((d) => d.postCreated.id)).toEqual(ids);
      expect(onHealthy.ended).toBe(false);
      // Ended on the server while its client still does not read.
      await waitUntil(() => active() === before, 'the server to end the lagging subscription');

      slow.resume();
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

  // graphql-sse's own server would read the event iterator into an unbounded queue; ours pulls
  // an event only when the previous message has gone out (src/graphql/sse-transport.ts).
  it('graphql-sse: a reader that stops is ended with one slow-consumer error once it is more than maxLag events behind (the server does not buffer its events)', { timeout: 90_000 }, async () => {
    const active = (): number => server.app.restgraph.events.subscriberCount;
    const before = active();
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = httpRequest(`${server.base}/graphql/stream`, {
        method: 'POST',
        agent: false,
        headers: { authorization: ADMIN, 'content-type': 'application/json', accept: 'text/event-stream' },
      });
      request.once('response', resolve);
      request.once('error', reject);
      request.end(JSON.stringify({ query: `subscription { postCreated { id ${BODY_ALIASES} } }` }));
    });
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk));
    try {
      expect(response.statusCode).toBe(200);
      await waitUntil(() => active() === before + 1, 'the SSE subscription to start');
      response.pause();
      response.socket.pause();
      const ids = await writePosts(server, author, 2000, 'lagging sse');
      await waitUntil(() => active() === before, 'the server to end the lagging SSE subscription', 10_000);

      response.socket.resume();
      response.resume();
      await waitUntil(() => text.includes('event: complete'), 'the end of the lagging SSE stream', 60_000);
      const results = text
        .split('\n\n')
        .filter((frame) => frame.startsWith('event: next'))
        .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as { data: { postCreated: { id: string } } | null; errors?: GraphQLFormattedError[] });
      const last = must(results.at(-1));
      expect(codes(last.errors ?? [])).toEqual(['slow-consumer']);
      const delivered = results.slice(0, -1);
      expect(delivered.length).toBeLessThan(2000 - MAX_LAG);
      expect(delivered.map((r) => r.data?.postCreated.id)).toEqual(ids.slice(0, delivered.length));
    } finally {
      response.destroy();
    }
  });
});
