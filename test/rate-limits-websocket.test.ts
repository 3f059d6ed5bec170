import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { RestgraphOptions } from '../src/app/app-options.js';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { ADMIN, listenApp, send, tempDatabase, waitUntil, type ListeningApp } from './helpers/event-stream.js';
import { startOfWindow } from './helpers/rate-limit-windows.js';
import { isCloseLike, wsClient, type CloseLike, type Recorder, type SubscriptionClient } from './helpers/subscription-clients.js';

/**
 * graphql-ws clients send their credential in connection_init, after the HTTP upgrade (issue 33,
 * point 11): a connection counts against its credential once connection_init names it, not against
 * the anonymous quota of its address; upgrades that name no credential count against a bound of
 * their own per address, so a flood of upgrades that never authenticate is still refused.
 *
 * Quotas here have windows of a day (aligned to UTC midnight): a test never straddles two.
 */

const DAY = 86_400;

describe('rate limits of WebSocket connections', () => {
  const opened: { server: ListeningApp; cleanup: () => Promise<void>; clients: SubscriptionClient[]; sockets: (() => void)[] }[] = [];

  afterEach(async () => {
    for (const { server, cleanup, clients, sockets } of opened.splice(0)) {
      for (const close of sockets) close();
      for (const client of clients) await client.dispose();
      await server.close();
      await cleanup();
    }
  });

  async function start(rateLimits: RestgraphOptions['rateLimits']): Promise<(typeof opened)[number]> {
    const db = await tempDatabase();
    const server = await listenApp(db.url, { rateLimits });
    const started = { server, cleanup: db.cleanup, clients: [], sockets: [] };
    opened.push(started);
    await startOfWindow(DAY, 60_000);
    return started;
  }

  async function keyFor(server: ListeningApp, name: string): Promise<string> {
    const created = await send(server.base, 'POST', '/v1/tokens', { name, scopes: ['users:read'] });
    expect(created.status, created.text).toBe(201);
    return `Bearer ${created.json<{ key: string }>().key}`;
  }

  /** A graphql-ws client with `authorization` in connection_init (none: anonymous), running a subscription. */
  function subscriber(started: (typeof opened)[number], authorization: string | undefined, closes?: CloseLike[]): Recorder<{ productCreated: { name: string } }> {
    const client = wsClient(started.server.base, { lazy: false, ...(authorization === undefined ? {} : { connectionParams: { Authorization: authorization } }), ...(closes === undefined ? {} : { closes }) });
    started.clients.push(client);
    return client.run<{ productCreated: { name: string } }>('subscription { productCreated { name } }');
  }

  /** Waits until `count` more subscriptions run on the server; fails at once when one of `recorders` ended instead. */
  async function allRunning(server: ListeningApp, recorders: readonly Recorder<{ productCreated: { name: string } }>[], before: number): Promise<void> {
    await waitUntil(() => {
      const ended = recorders.findIndex((r) => r.ended);
      if (ended >= 0) throw new Error(`connection ${ended + 1} of ${recorders.length} was refused: ${recorders[ended]?.describe() ?? ''}`);
      return server.app.restgraph.events.subscriberCount === before + recorders.length;
    }, `${recorders.length} subscriptions to run`);
  }

  /** A WebSocket upgrade of /graphql spoken with node:http: its status (101 when upgraded) and headers. */
  function attemptUpgrade(started: (typeof opened)[number], headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(`${started.server.base}/graphql`, {
        agent: false,
        headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'), 'sec-websocket-protocol': 'graphql-transport-ws', ...headers },
      });
      request.once('upgrade', (response, socket) => {
        started.sockets.push(() => socket.destroy());
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: '' });
      });
      request.once('response', (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.once('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      });
      request.once('error', reject);
      request.end();
    });
  }

  it('more authenticated connections from one address than the anonymous quota all open and run; the address keeps its anonymous quota', async () => {
    const started = await start({ anonymous: '5/1d', webSocketConnections: '40/1d' });
    const { server } = started;
    const key = await keyFor(server, 'subscriber');
    const before = server.app.restgraph.events.subscriberCount;
    const recorders = Array.from({ length: 15 }, () => subscriber(started, key));
    await allRunning(server, recorders, before);
    // None of them used the anonymous quota of 127.0.0.1.
    const anonymous = await send(server.base, 'GET', '/products', undefined, { authorization: '' });
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('ratelimit')).toMatch(/^"anonymous";r=4;t=\d+$/);
  });

  it('a connection counts against the quota of the credential connection_init names (4429 once it is used up); one without a credential against the anonymous quota', async () => {
    const started = await start({ default: '5/1d', anonymous: '2/1d', webSocketConnections: '40/1d' });
    const { server } = started;
    // (The admin token's requests count against its own quota: two of its five.)
    const [first, second] = [await keyFor(server, 'first'), await keyFor(server, 'second')];
    const before = server.app.restgraph.events.subscriberCount;
    const onFirst = Array.from({ length: 5 }, () => subscriber(started, first));
    await allRunning(server, onFirst, before);
    const closes: CloseLike[] = [];
    const sixth = subscriber(started, first, closes);
    await sixth.waitForEnd();
    expect(isCloseLike(sixth.error) ? sixth.error.code : sixth.error).toBe(4429);
    expect(closes[0]?.reason).toMatch(/^The quota "default" \(5 per 86400 s\) is used up; try again in \d+ s\.$/);
    // Another credential from the same address has its own quota.
    await allRunning(server, [subscriber(started, second)], before + 5);
    // Without a credential anywhere: the anonymous quota of the address (2).
    await allRunning(server, [subscriber(started, undefined), subscriber(started, undefined)], before + 6);
    const anonymousCloses: CloseLike[] = [];
    const third = subscriber(started, undefined, anonymousCloses);
    await third.waitForEnd();
    expect(anonymousCloses[0]).toMatchObject({ code: 4429, reason: expect.stringContaining('"anonymous" (2 per 86400 s)') as unknown });
  });

  it('upgrades that name no credential are bounded per address: past the bound, 429 with Retry-After, before any WebSocket is made', async () => {
    const started = await start({ anonymous: '5/1d', webSocketConnections: '20/1d' });
    const { server } = started;
    // Upgrades that never send connection_init (a flood): the first 20 are upgraded.
    for (let i = 1; i <= 20; i++) expect((await attemptUpgrade(started)).status, `upgrade ${i}`).toBe(101);
    const refused = await attemptUpgrade(started);
    expect(refused.status).toBe(429);
    expect(refused.headers['ratelimit-policy']).toBe(`"webSocketConnections";q=20;w=${DAY}`);
    expect(refused.headers['ratelimit']).toMatch(/^"webSocketConnections";r=0;t=\d+$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // (Errors on /graphql are GraphQL responses.)
    expect(JSON.parse(refused.body)).toMatchObject({ errors: [{ extensions: { code: 'rate-limited' } }] });
    // An upgrade with a credential in its own headers counts against that credential instead.
    expect((await attemptUpgrade(started, { authorization: ADMIN })).status).toBe(101);
    // A GET that only names Upgrade (no Connection: upgrade) is no upgrade: an ordinary anonymous request.
    const plain = await new Promise<{ status: number; policy: string | undefined }>((resolve, reject) => {
      const request = httpRequest(`${server.base}/graphql?query=${encodeURIComponent('{ __typename }')}`, { agent: false, headers: { upgrade: 'websocket', accept: 'application/json' } }, (response) => {
        response.resume();
        resolve({ status: response.statusCode ?? 0, policy: response.headers['ratelimit-policy'] as string | undefined });
      });
      request.once('error', reject);
      request.end();
    });
    expect(plain).toEqual({ status: 200, policy: '"anonymous";q=5;w=86400' });
  });

  it('the bound is a setting with a default; off removes it', () => {
    expect(optionsFromEnv({ RESTGRAPH_RATE_LIMIT_WEBSOCKET_CONNECTIONS: '100/1m' }).rateLimits?.webSocketConnections).toBe('100/1m');
    expect(optionsFromEnv({ RESTGRAPH_RATE_LIMIT_WEBSOCKET_CONNECTIONS: 'off' }).rateLimits?.webSocketConnections).toBe('off');
    expect(() => optionsFromEnv({ RESTGRAPH_RATE_LIMIT_WEBSOCKET_CONNECTIONS: 'lots' })).toThrow(/RESTGRAPH_RATE_LIMIT_WEBSOCKET_CONNECTIONS/);
  });
});
