import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { GraphQLFormattedError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ADMIN, waitUntil } from './helpers/event-stream.js';
import { BODY_ALIASES, codes, laggingServer, must, writePosts } from './helpers/subscription-clients.js';

/**
 * GraphQL subscribers that stop reading and fall more than maxLag events behind, on real sockets:
 * ended with one slow-consumer error, while writes and other subscribers go on. (Within maxLag:
 * graphql-subscriptions-paused-reader.test.ts; graphql-ws: graphql-subscriptions-slow-consumers-ws.test.ts.)
 *
 * A reader "stops" by pausing its TCP socket: the server's writes then wait, as they would for a
 * client on a slow network. Each event is sent with 30 aliases of a 4000-character body (~120 kB),
 * so the socket buffers fill within a few dozen events.
 */

describe('graphql-sse subscribers that fall too far behind (maxLag 100, paused 250 ms)', () => {
  const MAX_LAG = 100;
  const lagging = laggingServer(MAX_LAG, 250);

  // graphql-sse's own server would read the event iterator into an unbounded queue; ours pulls
  // an event only when the previous message has gone out (src/graphql/sse-transport.ts).
  it('a reader that stops is ended with one slow-consumer error once it is more than maxLag events behind (the server does not buffer its events)', { timeout: 90_000 }, async () => {
    const active = (): number => lagging.server.app.restgraph.events.subscriberCount;
    const before = active();
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = httpRequest(`${lagging.server.base}/graphql/stream`, {
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
      const ids = await writePosts(lagging.server, lagging.author, 2000, 'lagging sse');
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
