import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, listenApp, send, tempDatabase, waitUntil, type ListeningApp } from './helpers/event-stream.js';
import { isCloseLike, must, sseClient, wsClient, type CloseLike } from './helpers/subscription-clients.js';

/**
 * GraphQL subscriptions over time, on real sockets: graphql-sse's single connection mode beside
 * the distinct connections mode, shutdown with subscriptions open, credentials revoked while
 * subscriptions run. The deliveries, access rules and limits themselves are in
 * graphql-subscriptions.test.ts; subscribers that stop reading in
 * graphql-subscriptions-paused-reader.test.ts and graphql-subscriptions-slow-consumers-ws.test.ts and -sse.test.ts.
 */

interface UserView {
  id: string;
  name: string;
}

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

  describe('a credential revoked while its subscriptions run (open streams\' credentials checked every streamCredentialCheckMs: 200)', () => {
    let server: ListeningApp;
    let db: Awaited<ReturnType<typeof tempDatabase>>;

    beforeEach(async () => {
      db = await tempDatabase();
      server = await listenApp(db.url, { streamCredentialCheckMs: 200 });
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
