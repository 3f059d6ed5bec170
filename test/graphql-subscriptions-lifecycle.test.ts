import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { GraphQLFormattedError } from 'graphql';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, listenApp, send, tempDatabase, waitUntil, type ListeningApp, type Row } from './helpers/event-stream.js';
import { BODY_ALIASES, codes, isCloseLike, must, rawSubscriber, sseClient, writePosts, wsClient, type CloseLike } from './helpers/subscription-clients.js';

/**
 * GraphQL subscriptions over time, on real sockets: a subscriber that stops reading (paused, then
 * caught up; or ended with slow-consumer once it is more than maxLag events behind), graphql-sse's
 * single connection mode beside the distinct connections mode, and shutdown with subscriptions
 * open. The deliveries, access rules and limits themselves are in graphql-subscriptions.test.ts.
 *
 * A reader "stops" by pausing its TCP socket: the server's writes then wait, as they would for a
 * client on a slow network. Each event is sent with 30 aliases of a 4000-character body (~120 kB),
 * so the socket buffers fill within a few dozen events.
 */

interface UserView {
  id: string;
  name: string;
}

describe('a subscriber that stops reading, within maxLag (default 10000)', () => {
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
    const slow = await rawSubscriber(server, `subscription { postCreated { id ${BODY_ALIASES} } }`);
    const healthy = wsClient(server.base, { connectionParams: { Authorization: ADMIN } });
    try {
      const before = active();
      const onHealthy = healthy.run<{ postCreated: { id: string } }>('subscription { postCreated { id } }');
      await waitUntil(() => active() === before + 1, 'the healthy subscription to start');
      slow.pause();
      // ~120 kB per event to the paused reader: its socket fills within a few dozen events,
      // then 1000 wait in memory and delivery pauses (1500 writes stay far within maxLag 10000).
      const ids = await writePosts(server, author, 1500, 'paused');
      await onHealthy.waitForResults(1500, 60_000);
      expect(onHealthy.data.map((d) => d.postCreated.id)).toEqual(ids);
      expect(active()).toBe(before + 1);

      slow.resume();
      await waitUntil(() => slow.results().length >= 1500 || slow.messages.some((m) => m.type !== 'next'), 'the paused reader to catch up', 60_000);
      expect(slow.results().map((r) => r.data?.postCreated.id)).toEqual(ids);
      expect(slow.messages.every((m) => m.type === 'next' && m.payload?.errors === undefined)).toBe(true);
    } finally {
      slow.close();
      await healthy.dispose();
    }
  });
});

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
    const slow = await rawSubscriber(server, `subscription { postCreated { id ${BODY_ALIASES} } }`);
    const healthy = wsClient(server.base, { connectionParams: { Authorization: ADMIN } });
    try {
      const before = active();
      const onHealthy = healthy.run<{ postCreated: { id: string } }>('subscription { postCreated { id } }');
      await waitUntil(() => active() === before + 1, 'the healthy subscription to start');
      slow.pause();
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

describe('graphql-sse single connection mode is not offered (reserved streams would be shared by token)', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;

  beforeEach(async () => {
    db = await tempDatabase();
    server = await listenApp(db.url);
  });

  afterEach(async () => {
    await server.close();
    await db.cleanup();
  });

  it('PUT (reserving a stream) is 405 with Allow: GET, POST, and reserves nothing', async () => {
    for (const method of ['PUT', 'DELETE']) {
      const response = await fetch(`${server.base}/graphql/stream`, { method, headers: { authorization: ADMIN } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow'), method).toBe('GET, POST');
      const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]?.extensions.code, method).toBe('method-not-allowed');
    }
  });

  it('a request carrying a stream token (header or ?token) is refused with 400 and subscribes nothing', async () => {
    const base = server.app.restgraph.events.subscriberCount;
    for (const [url, headers] of [
      [`${server.base}/graphql/stream`, { 'x-graphql-event-stream-token': 'undefined', accept: 'text/event-stream' }],
      [`${server.base}/graphql/stream?token=undefined`, { accept: 'text/event-stream' }],
    ] as const) {
      const response = await fetch(url, { headers });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]?.extensions.code).toBe('bad-request');
    }
    expect(server.app.restgraph.events.subscriberCount).toBe(base);
  });

  it('a graphql-sse client in single-connection mode fails rather than sharing a stream', async () => {
    const single = sseClient(server.base, { headers: { authorization: ADMIN }, singleConnection: true });
    try {
      const run = single.run<{ userCreated: UserView }>('subscription { userCreated { id name } }');
      await waitUntil(() => run.ended, 'the single-connection subscription to fail');
      expect(run.data).toEqual([]);
    } finally {
      await single.dispose();
    }
  });
});

describe('shutdown with subscriptions open', () => {
  it('graphql-ws: app.close() completes; every client sees its connection close (a code graphql-ws clients reconnect on)', async () => {
    const db = await tempDatabase();
    const server = await listenApp(db.url);
    try {
      const adminCloses: CloseLike[] = [];
      const anonymousCloses: CloseLike[] = [];
      const admin = wsClient(server.base, { connectionParams: { Authorization: ADMIN }, closes: adminCloses });
      const anonymous = wsClient(server.base, { closes: anonymousCloses });
      const base = server.app.restgraph.events.subscriberCount;
      const users = admin.run('subscription { userCreated { id } }');
      const posts = anonymous.run('subscription { postCreated { id } }');
      await waitUntil(() => server.app.restgraph.events.subscriberCount === base + 2, 'both subscriptions to start');

      await server.close();

      await users.waitForEnd();
      await posts.waitForEnd();
      for (const [recorder, closes] of [
        [users, adminCloses],
        [posts, anonymousCloses],
      ] as const) {
        expect(recorder.results).toEqual([]);
        // Not "complete": the subscription did not end, the server went away; graphql-ws clients
        // retry on these codes (1001 going away, 1005 no status, 1012 service restart).
        expect(recorder.errored).toBe(true);
        expect(isCloseLike(recorder.error)).toBe(true);
        expect(closes).toHaveLength(1);
        expect([1001, 1005, 1012]).toContain(must(closes[0]).code);
      }
      expect(server.app.restgraph.events.subscriberCount).toBe(0);
      await admin.dispose();
      await anonymous.dispose();
    } finally {
      await db.cleanup();
    }
  });

  it('graphql-sse: app.close() completes; the subscriber sees its stream break, not a completion (so graphql-sse clients reconnect)', async () => {
    const db = await tempDatabase();
    const server = await listenApp(db.url);
    try {
      const client = sseClient(server.base, { headers: { authorization: ADMIN } });
      const base = server.app.restgraph.events.subscriberCount;
      const users = client.run('subscription { userCreated { id } }');
      await waitUntil(() => server.app.restgraph.events.subscriberCount === base + 1, 'the subscription to start');
      await server.close();
      await users.waitForEnd();
      expect({ results: users.results, completed: users.completed, errored: users.errored }).toEqual({ results: [], completed: false, errored: true });
      await client.dispose();
    } finally {
      await db.cleanup();
    }
  });

  it('graphql-sse over a keep-alive HTTP connection: the server closes the connection, and app.close() does not wait for the client to', async () => {
    const db = await tempDatabase();
    const server = await listenApp(db.url);
    const agent = new Agent({ keepAlive: true });
    try {
      const base = server.app.restgraph.events.subscriberCount;
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        const request = httpRequest(`${server.base}/graphql/stream`, {
          method: 'POST',
          agent,
          headers: { authorization: ADMIN, 'content-type': 'application/json', accept: 'text/event-stream' },
        });
        request.once('response', resolve);
        request.once('error', reject);
        request.end(JSON.stringify({ query: 'subscription { userCreated { id } }' }));
      });
      expect(response.statusCode).toBe(200);
      response.resume();
      const socket: Socket = response.socket;
      let socketClosed = false;
      socket.once('close', () => (socketClosed = true));
      await waitUntil(() => server.app.restgraph.events.subscriberCount === base + 1, 'the subscription to start');

      let closed = false;
      const closing = server.close().then(() => (closed = true));
      try {
        await waitUntil(() => socketClosed && closed, 'the server to close the stream’s connection and finish app.close()', 10_000);
      } finally {
        // Let close() finish even when the server left the connection open.
        agent.destroy();
        await closing;
      }
    } finally {
      await db.cleanup();
    }
  });

  describe('a credential revoked while its subscriptions run (credentials re-checked every heartbeatMs: 200)', () => {
    let server: ListeningApp;
    let db: Awaited<ReturnType<typeof tempDatabase>>;

    beforeEach(async () => {
      db = await tempDatabase();
      server = await listenApp(db.url, { events: { heartbeatMs: 200 } });
    });
    afterEach(async () => {
      await server.close();
      await db.cleanup();
    });

    const scopedKey = async (): Promise<{ id: number; authorization: string }> => {
      const made = (await send(server.base, 'POST', '/v1/tokens', { name: 'revoked while subscribed', scopes: ['users:read'] }, { authorization: ADMIN })).json();
      return { id: made.id, authorization: `Bearer ${String(made.key)}` };
    };

    for (const transport of ['graphql-ws', 'graphql-sse'] as const) {
      it(`${transport}: events flow until the key is revoked; then the server ends the subscription, and no later event reaches it`, async () => {
        const key = await scopedKey();
        const closes: CloseLike[] = [];
        const client =
          transport === 'graphql-ws'
            ? wsClient(server.base, { connectionParams: { Authorization: key.authorization }, closes })
            : sseClient(server.base, { headers: { authorization: key.authorization } });
        const before = server.app.restgraph.events.subscriberCount;
        try {
          const users = client.run<{ userCreated: { name: string } }>('subscription { userCreated { name } }');
          await waitUntil(() => server.app.restgraph.events.subscriberCount === before + 1, 'the subscription to start');
          expect((await send(server.base, 'POST', '/users', { name: 'seen' }, { authorization: ADMIN })).status).toBe(201);
          await waitUntil(() => users.results.length === 1, 'the first event');

          expect((await send(server.base, 'DELETE', `/v1/tokens/${key.id}`, undefined, { authorization: ADMIN })).status).toBe(204);
          await waitUntil(() => server.app.restgraph.events.subscriberCount === before, 'the server to end the revoked subscription', 5000);
          await users.waitForEnd(5000);
          expect((await send(server.base, 'POST', '/users', { name: 'after revocation' }, { authorization: ADMIN })).status).toBe(201);

          expect(users.results).toEqual([{ data: { userCreated: { name: 'seen' } } }]);
          // Not a normal completion: the connection is cut (4403 on a WebSocket).
          expect(users.completed).toBe(false);
          if (transport === 'graphql-ws') expect(closes).toEqual([{ code: 4403, reason: 'Forbidden' }]);
        } finally {
          await client.dispose();
        }
      });
    }

    it('a subscription whose key stays valid is not ended by the checks', async () => {
      const key = await scopedKey();
      const client = wsClient(server.base, { connectionParams: { Authorization: key.authorization } });
      try {
        const users = client.run<{ userCreated: { name: string } }>('subscription { userCreated { name } }');
        const before = server.app.restgraph.events.subscriberCount;
        await waitUntil(() => server.app.restgraph.events.subscriberCount === before + 1 || users.results.length > 0, 'the subscription to start');
        await new Promise((resolve) => setTimeout(resolve, 1000)); // five checks
        expect((await send(server.base, 'POST', '/users', { name: 'still here' }, { authorization: ADMIN })).status).toBe(201);
        await waitUntil(() => users.results.length === 1, 'the event after five checks');
        expect(users.errored || users.completed).toBe(false);
      } finally {
        await client.dispose();
      }
    });
  });
});
