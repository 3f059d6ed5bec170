import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, test } from 'vitest';
import {
  ADMIN,
  EventSourceClient,
  eventOf,
  eventsUrl,
  listenApp,
  replay,
  send,
  SseReader,
  tempDatabase,
  waitUntil,
  type ListeningApp,
  type Row,
} from './helpers/event-stream.js';
import type { RestgraphOptions } from '../src/app/app-options.js';

/**
 * GET /v1/events as clients live with it, on real sockets: a WHATWG EventSource receiving live
 * events, resuming after client-side and server-side disconnects and after a server restart with
 * Last-Event-ID (no gaps, no duplicates); heartbeats; shutdown ending every stream; slow consumers
 * disconnected without holding up writes or other subscribers.
 */

const SHUTDOWN_COMMENT = 'server shutting down; reconnect with Last-Event-ID';
const SLOW_COMMENT = 'disconnected: too far behind; reconnect with Last-Event-ID';

interface Started extends ListeningApp {
  cleanup: () => Promise<void>;
}

/** A test's servers and what it opened: `start`, `restart` and `track` add to them; all closed when it ends. */
interface Streams {
  /** An app on a fresh database (closed and removed when the test ends). */
  start: (options?: RestgraphOptions) => Promise<Started>;
  /** Another app on the same database and port (after the first was closed). */
  restart: (previous: ListeningApp, options?: RestgraphOptions) => Promise<ListeningApp>;
  /** Closed when the test ends. */
  track: <T extends { close: () => void }>(thing: T) => T;
  /** Servers still to close when the test ends (a test that closes one itself takes it out). */
  apps: ListeningApp[];
}

/**
 * `it` whose tests get `streams`. Tests share nothing (each its own databases, servers and
 * clients): they run concurrently, overlapping their waits.
 */
const it = test.extend<{ streams: Streams }>({
  // eslint-disable-next-line no-empty-pattern -- vitest reads the fixtures a fixture needs from this pattern
  streams: async ({}, use) => {
    const opened: { close: () => void }[] = [];
    const apps: ListeningApp[] = [];
    const databases: { cleanup: () => Promise<void> }[] = [];
    try {
      await use({
        start: async (options = {}) => {
          const db = await tempDatabase();
          databases.push(db);
          const server = await listenApp(db.url, options);
          apps.push(server);
          return { ...server, cleanup: db.cleanup };
        },
        restart: async (previous, options = {}) => {
          const server = await listenApp(previous.databaseUrl, options, previous.port);
          apps.push(server);
          return server;
        },
        track: (thing) => {
          opened.push(thing);
          return thing;
        },
        apps,
      });
    } finally {
      for (const thing of opened) thing.close();
      for (const server of apps) await server.close();
      for (const db of databases) await db.cleanup();
    }
  },
});

async function createUser(base: string, name: string): Promise<Row> {
  const response = await send(base, 'POST', '/users', { name });
  expect(response.status, response.text).toBe(201);
  return response.json();
}

/** EventSource clients reconnect 0.1 s after a stream ends, not 3 s: the reconnection tests wait for them. */
const RECONNECT_SOON = { events: { reconnectDelayMs: 100 } } as const;

/** The ids strictly increase (no duplicate, no reordering). */
function expectStrictlyIncreasing(ids: readonly number[]): void {
  for (let i = 1; i < ids.length; i++) expect(ids[i], `ids ${JSON.stringify(ids)}`).toBeGreaterThan(ids[i - 1] ?? 0);
}

describe.concurrent('EventSource clients', () => {
  it('receive live events: named by type, lastEventId = event id, data as the stream documents it', async ({ streams: { start, track } }) => {
    const server = await start();
    const client = track(new EventSourceClient(eventsUrl(server.base)));
    await client.waitFor((c) => c.opens === 1, 'open');
    const user = await createUser(server.base, 'Live');
    const patched = await send(server.base, 'PATCH', `/users/${user.id}`, { bio: 'hello' });
    const post = await send(server.base, 'POST', '/posts', { title: 'Live post', userId: user.id });
    await client.waitFor((c) => c.events.length === 3, 'three events');
    expect(client.events.map((e) => ({ id: e.id, type: e.type, bodyId: e.body.id, bodyType: e.body.type, object: e.body.data.object, previous: e.body.data.previous }))).toEqual([
      { id: 1, type: 'user.created', bodyId: '1', bodyType: 'user.created', object: user, previous: undefined },
      { id: 2, type: 'user.updated', bodyId: '2', bodyType: 'user.updated', object: patched.json(), previous: { bio: null, updatedAt: user.updatedAt } },
      { id: 3, type: 'post.created', bodyId: '3', bodyType: 'post.created', object: post.json(), previous: undefined },
    ]);
    expect(client.attempts).toEqual([null]);
    expect(client.errors).toBe(0);
  });

  it('an anonymous EventSource receives post events and nothing of users', async ({ streams: { start, track } }) => {
    const server = await start();
    const client = track(new EventSourceClient(eventsUrl(server.base), { authorization: '' }));
    await client.waitFor((c) => c.opens === 1, 'open');
    const user = await createUser(server.base, 'Hidden');
    const post = await send(server.base, 'POST', '/posts', { title: 'Public', userId: user.id });
    await client.waitFor((c) => c.events.length >= 1, 'the post event');
    expect(client.events.map((e) => [e.id, e.type, e.body.data.object])).toEqual([[2, 'post.created', post.json()]]);
  });

  it('closed by the client mid-stream while writes continue, then resumed with Last-Event-ID (header and lastEventId): no gaps, no duplicates', async ({ streams: { start, track } }) => {
    const server = await start();
    const first = track(new EventSourceClient(eventsUrl(server.base)));
    await first.waitFor((c) => c.opens === 1, 'open');
    for (let i = 0; i < 10; i++) await createUser(server.base, `Before ${i}`);
    await first.waitFor((c) => c.events.length === 10, 'the first ten events');
    // Writes go on while the client goes away…
    const during = (async () => {
      for (let i = 0; i < 20; i++) await createUser(server.base, `During ${i}`);
    })();
    first.close();
    const seen = first.lastId;
    await during;
    // …and while it comes back: one client resumes with the header, one with the query parameter.
    const after = (async () => {
      for (let i = 0; i < 20; i++) await createUser(server.base, `After ${i}`);
    })();
    const byHeader = track(new EventSourceClient(eventsUrl(server.base), { lastEventId: seen }));
    const byParameter = track(new EventSourceClient(eventsUrl(server.base, { lastEventId: String(seen) })));
    await after;
    const last = await createUser(server.base, 'Last');
    const everything = (await replay(server.base, eventOf('user.created', last.id))).map((e) => e.id);
    expect(everything).toHaveLength(51);
    for (const client of [byHeader, byParameter]) {
      await client.waitFor((c) => c.lastId === everything.at(-1), 'the last event');
      expectStrictlyIncreasing(client.ids);
      expect([...first.ids, ...client.ids]).toEqual(everything);
    }
    expect(byHeader.attempts).toEqual([String(seen)]);
    expect(first.ids).toEqual(everything.slice(0, first.ids.length));
  });

  it('dropped by the server mid-stream: EventSource reconnects by itself with Last-Event-ID and misses nothing', async ({ streams: { start, track } }) => {
    const server = await start(RECONNECT_SOON);
    // The stream tells clients when to reconnect (3 s by default, as the heartbeat test shows).
    const reader = track(await SseReader.open(eventsUrl(server.base)));
    await reader.waitFor((r) => r.comments.length === 1, 'connected');
    expect(reader.retry).toBe(RECONNECT_SOON.events.reconnectDelayMs);
    reader.close();
    const client = track(new EventSourceClient(eventsUrl(server.base)));
    await client.waitFor((c) => c.opens === 1, 'open');
    // Writes through inject: they use no socket, so dropping every connection touches only the stream.
    const create = async (name: string): Promise<void> => {
      const response = await server.app.inject({ method: 'POST', url: '/users', payload: { name } });
      expect(response.statusCode).toBe(201);
    };
    for (let i = 0; i < 5; i++) await create(`Before ${i}`);
    await client.waitFor((c) => c.events.length === 5, 'five events');
    const writing = (async () => {
      for (let i = 0; i < 30; i++) await create(`Across ${i}`);
    })();
    server.app.server.closeAllConnections();
    await writing;
    await client.waitFor((c) => c.events.length >= 35, 'every event after reconnecting');
    expect(client.ids).toEqual(Array.from({ length: 35 }, (_, i) => i + 1));
    expect(client.attempts.length).toBeGreaterThanOrEqual(2);
    expect(client.attempts[0]).toBeNull();
    // The reconnection carried the last id the client had seen when the connection dropped.
    const resumedFrom = Number(client.attempts[1]);
    expect(client.events.filter((e) => e.connection === 1).at(-1)?.id).toBe(resumedFrom);
    expect(client.events.filter((e) => e.connection === 2).at(0)?.id).toBe(resumedFrom + 1);
  });

  it('across a server restart on the same database and port: the stream ends on close, EventSource reconnects with Last-Event-ID, ids go on increasing', async ({ streams: { start, restart, track, apps } }) => {
    const before = await start(RECONNECT_SOON);
    const client = track(new EventSourceClient(eventsUrl(before.base)));
    await client.waitFor((c) => c.opens === 1, 'open');
    for (let i = 0; i < 5; i++) await createUser(before.base, `Before ${i}`);
    await client.waitFor((c) => c.events.length === 5, 'five events');
    await before.close();
    apps.splice(apps.indexOf(before), 1);
    await client.waitFor((c) => c.errors >= 1, 'the stream to end');
    // The old server closed this process's pooled fetch connections too. A client must get to read
    // those ends before it sends again, or it picks a dead socket ("other side closed": plain Node
    // and undici do the same with a bare http.Server); one in another process would have by now.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await restart(before, RECONNECT_SOON);
    expect(after.port).toBe(before.port);
    const made: Row[] = [];
    for (let i = 0; i < 5; i++) made.push(await createUser(after.base, `After ${i}`));
    expect(made.map((u) => u.id)).toEqual([6, 7, 8, 9, 10]);
    await client.waitFor((c) => c.events.length >= 10, 'the events written after the restart');
    expect(client.ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(client.events.map((e) => e.body.data.object.name)).toEqual([0, 1, 2, 3, 4].map((i) => `Before ${i}`).concat([0, 1, 2, 3, 4].map((i) => `After ${i}`)));
    expect(client.attempts[0]).toBeNull();
    expect(client.attempts.slice(1).every((a) => a === '5')).toBe(true);
    expect(client.attempts.length).toBeGreaterThanOrEqual(2);
    // And live again on the new server.
    const live = await createUser(after.base, 'Live again');
    await client.waitFor((c) => c.lastId === 11, 'a live event');
    expect(client.events.at(-1)?.body.data.object).toEqual(live);
  });
});

describe.concurrent('credentials of open streams', () => {
  it('a stream opened with an API key ends once the key is revoked (a revoked key stops working within the key cache time)', async ({ streams: { start, track } }) => {
    const server = await start({ apiKeyCacheMs: 0, events: { heartbeatMs: 50 } });
    const token = await send(server.base, 'POST', '/v1/tokens', { name: 'reader', scopes: ['users:read'] });
    expect(token.status).toBe(201);
    const { id, key } = token.json<{ id: number; key: string }>();
    const reader = track(await SseReader.open(eventsUrl(server.base), { authorization: `Bearer ${key}` }));
    expect(reader.status).toBe(200);
    const before = await createUser(server.base, 'Seen');
    await reader.until(eventOf('user.created', before.id), 'an event before revocation');
    expect((await send(server.base, 'DELETE', `/v1/tokens/${id}`)).status).toBe(204);
    expect((await send(server.base, 'GET', '/users', undefined, { authorization: `Bearer ${key}` })).status).toBe(401);
    await createUser(server.base, 'After revocation');
    await reader.waitFor((r) => r.isEnded, 'the stream of the revoked key to end', 15_000).catch((error: unknown) => {
      throw new Error(`still open: ${reader.events.length} events received, the last ${String(reader.events.at(-1)?.body.data.object.name)}`, { cause: error });
    });
  });
});

describe.concurrent('catch-up and live hand-over under concurrent writes', () => {
  it('readers joining at many points with Last-Event-ID each get exactly the ids after theirs, in order', async ({ streams: { start, track } }) => {
    const server = await start();
    let acknowledged = 0;
    const writer = async (name: string): Promise<void> => {
      for (let i = 0; i < 60; i++) {
        const response = await server.app.inject({ method: 'POST', url: '/users', payload: { name: `${name} ${i}` } });
        expect(response.statusCode).toBe(201);
        acknowledged++;
      }
    };
    const writers = Promise.all(['A', 'B', 'C', 'D'].map(writer));
    const readers: { from: number; reader: SseReader }[] = [];
    for (const threshold of [0, 10, 30, 50, 80, 110, 140, 170, 200, 230]) {
      await waitUntil(() => acknowledged >= threshold, `${threshold} writes`);
      // Resume from a little behind the newest acknowledged write: part catch-up, part live.
      const from = Math.max(0, acknowledged - 7);
      readers.push({ from, reader: track(await SseReader.open(eventsUrl(server.base), { 'last-event-id': String(from) })) });
    }
    await writers;
    for (const { from, reader } of readers) {
      await reader.until((e) => e.id === 240, `event 240 (from ${from})`);
      expect(reader.ids).toEqual(Array.from({ length: 240 - from }, (_, i) => from + i + 1));
    }
  });
});

describe.concurrent('heartbeat, shutdown and slow consumers', () => {
  it('a heartbeat comment comes every heartbeatMs while idle', async ({ streams: { start, track } }) => {
    const server = await start({ events: { heartbeatMs: 50 } });
    const reader = track(await SseReader.open(eventsUrl(server.base)));
    await reader.waitFor((r) => r.comments.filter((c) => c === 'heartbeat').length >= 3, 'three heartbeats');
    expect(reader.comments.slice(0, 4)).toEqual(['connected; last event id 0', 'heartbeat', 'heartbeat', 'heartbeat']);
    expect(reader.text.startsWith('retry: 3000\n: connected; last event id 0\n\n: heartbeat\n\n: heartbeat\n\n: heartbeat\n\n')).toBe(true);
    expect(reader.events).toEqual([]);
    expect(reader.malformed).toEqual([]);
  });

  it('app.close() resolves while streams are open; each ends with a final comment', async ({ streams: { start, track, apps } }) => {
    const server = await start();
    const readers = [track(await SseReader.open(eventsUrl(server.base))), track(await SseReader.open(eventsUrl(server.base, { types: 'post.created' }), { authorization: '' }))];
    const client = track(new EventSourceClient(eventsUrl(server.base)));
    await client.waitFor((c) => c.opens === 1, 'open');
    for (const reader of readers) await reader.waitFor((r) => r.comments.length === 1, 'connected');
    await server.close();
    apps.splice(apps.indexOf(server), 1);
    for (const reader of readers) {
      await reader.ended;
      expect(reader.comments).toEqual(['connected; last event id 0', SHUTDOWN_COMMENT]);
      expect(reader.text.endsWith(`: ${SHUTDOWN_COMMENT}\n\n`)).toBe(true);
    }
    await client.waitFor((c) => c.errors >= 1, 'the EventSource to see the end');
  });

  it('app.close() resolves even when a stream’s client has stopped reading', async ({ streams: { start, track, apps } }) => {
    const server = await start({ events: { maxLag: 50, maxPausedMs: 250 } });
    const baseline = server.app.restgraph.events.subscriberCount;
    track(await rawStream(server.port));
    await waitUntil(() => server.app.restgraph.events.subscriberCount === baseline + 1, 'the stalled subscriber');
    const user = await createUser(server.base, 'Writer');
    // Fill the socket buffers of the stalled client.
    for (let i = 0; i < 60; i++) await send(server.base, 'POST', '/posts', { title: `Big ${i}`, userId: user.id, body: 'x'.repeat(60_000) });
    const closed = server.close();
    apps.splice(apps.indexOf(server), 1);
    await closed;
  });

  it('a consumer that never reads is disconnected; writes keep succeeding and another subscriber gets every event', async ({ streams: { start, track } }) => {
    const server = await start({ events: { maxLag: 50, maxPausedMs: 250 } });
    // Other consumers of the one event path (the webhook feeder) count too.
    const baseline = server.app.restgraph.events.subscriberCount;
    const slow = track(await rawStream(server.port));
    const fast = track(await SseReader.open(eventsUrl(server.base)));
    await waitUntil(() => server.app.restgraph.events.subscriberCount === baseline + 2, 'both subscribers');
    const user = await createUser(server.base, 'Writer');
    const body = 'y'.repeat(50_000);
    let writes = 0;
    // Write large events until the slow one is dropped (its kernel buffers take a few MB first).
    while (server.app.restgraph.events.subscriberCount === baseline + 2) {
      const response = await send(server.base, 'POST', '/posts', { title: `Large ${writes}`, userId: user.id, body });
      expect(response.status).toBe(201);
      if (++writes > 2000) throw new Error('the slow consumer was never disconnected');
      await fast.until((e) => e.id === writes + 1, `event ${writes + 1}`);
    }
    for (let i = 0; i < 20; i++) {
      const response = await send(server.base, 'POST', '/posts', { title: `After ${i}`, userId: user.id, body });
      expect(response.status).toBe(201);
    }
    const last = writes + 21;
    await fast.until((e) => e.id === last, 'every event');
    expect(fast.ids).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    expect(fast.isEnded).toBe(false);
    expect(server.app.restgraph.events.subscriberCount).toBe(baseline + 1);

    // The slow client, reading at last, finds a prefix of the events and the end of the stream.
    slow.resume();
    await slow.ended;
    const reader = slow.frames();
    expect(reader.ids.length).toBeGreaterThan(0);
    expect(reader.ids.length).toBeLessThan(last);
    expect(reader.ids).toEqual(Array.from({ length: reader.ids.length }, (_, i) => i + 1));
    // Ended gracefully (a last comment saying why) or cut off: never another event after the gap.
    const lastComment = reader.comments.at(-1);
    if (lastComment !== 'connected; last event id 0') expect(lastComment).toBe(SLOW_COMMENT);
  });

  it('a consumer dropped as too slow has its connection closed, so the bytes it left unread are released', async ({ streams: { start, track } }) => {
    const server = await start({ events: { maxLag: 50, maxPausedMs: 250 } });
    const baseline = server.app.restgraph.events.subscriberCount;
    track(await rawStream(server.port));
    await waitUntil(() => server.app.restgraph.events.subscriberCount === baseline + 1, 'the stalled subscriber');
    const connections = (): Promise<number> => new Promise((resolve, reject) => server.app.server.getConnections((error, count) => (error === null ? resolve(count) : reject(error))));
    expect(await connections()).toBe(1);
    // Writes through inject: the stalled stream is the only connection.
    const user = await server.app.inject({ method: 'POST', url: '/users', payload: { name: 'Writer' } });
    expect(user.statusCode).toBe(201);
    let writes = 0;
    while (server.app.restgraph.events.subscriberCount === baseline + 1) {
      const response = await server.app.inject({ method: 'POST', url: '/posts', payload: { title: `Large ${writes}`, userId: 1, body: 'v'.repeat(50_000) } });
      expect(response.statusCode).toBe(201);
      if (++writes > 2000) throw new Error('the slow consumer was never disconnected');
    }
    await waitUntil(async () => (await connections()) === 0, 'the server to close the slow consumer’s connection');
  });

  it('HEAD /v1/events answers at once with the stream’s headers and no body, and subscribes nothing', async ({ streams: { start, track } }) => {
    const server = await start();
    const baseline = server.app.restgraph.events.subscriberCount;
    const head = await new Promise<{ status: number; contentType: string | undefined; body: string }>((resolve, reject) => {
      const request = httpRequest(eventsUrl(server.base), { method: 'HEAD', headers: { authorization: ADMIN }, agent: false }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.once('end', () => resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'], body }));
      });
      request.once('error', reject);
      const timer = setTimeout(() => reject(new Error('HEAD /v1/events was not answered within 10 s')), 10_000);
      track({ close: () => (clearTimeout(timer), request.destroy()) });
      request.end();
    });
    expect(head).toEqual({ status: 200, contentType: 'text/event-stream; charset=utf-8', body: '' });
    await waitUntil(() => server.app.restgraph.events.subscriberCount === baseline, 'no subscriber left');
  });

  it('a fast reader replaying many stored events (far over the lag limit) is not taken for a slow one', async ({ streams: { start, track } }) => {
    const server = await start({ events: { maxLag: 50, maxPausedMs: 250 } });
    const user = await createUser(server.base, 'Author');
    for (let i = 0; i < 100; i++) await send(server.base, 'POST', '/posts', { title: `Post ${i}`, userId: user.id, body: 'z'.repeat(2000) });
    const reader = track(await SseReader.open(eventsUrl(server.base), { 'last-event-id': '0' }));
    await reader.until((e) => e.id === 101, 'the whole replay');
    expect(reader.ids).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
    expect(reader.comments).not.toContain(SLOW_COMMENT);
  });

  it('live subscribers keep up with one large transaction (a cascade of 101 events, 1.5 MB) under the default buffer limit', async ({ streams: { start, track } }) => {
    const server = await start();
    const user = await createUser(server.base, 'Prolific');
    for (let i = 0; i < 100; i++) await send(server.base, 'POST', '/posts', { title: `Post ${i}`, userId: user.id, body: 'w'.repeat(15_000) });
    const reader = track(await SseReader.open(eventsUrl(server.base)));
    const client = track(new EventSourceClient(eventsUrl(server.base)));
    await client.waitFor((c) => c.opens === 1, 'open');
    await reader.waitFor((r) => r.comments.length === 1, 'connected');
    expect((await send(server.base, 'DELETE', `/users/${user.id}`)).status).toBe(204);
    await reader.until(eventOf('user.deleted', user.id), 'the cascade');
    expect(reader.events.map((e) => e.type)).toEqual([...Array<string>(100).fill('post.deleted'), 'user.deleted']);
    expect(reader.comments).not.toContain(SLOW_COMMENT);
    await client.waitFor((c) => c.events.length === 101, 'the cascade in the EventSource');
    expect(client.attempts).toEqual([null]);
  });
});

interface RawStream {
  socket: Socket;
  resume: () => void;
  ended: Promise<void>;
  frames: () => { ids: number[]; comments: string[] };
  close: () => void;
}

/** GET /v1/events on a raw socket that reads nothing until `resume()`. */
async function rawStream(port: number): Promise<RawStream> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.pause();
  socket.write(`GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nAuthorization: ${ADMIN}\r\n\r\n`);
  const chunks: Buffer[] = [];
  const ended = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // The last chunk of a chunked response ends it (the connection may stay open for the next request).
      if (Buffer.concat(chunks.slice(-2)).toString('latin1').endsWith('\r\n0\r\n\r\n')) resolve();
    });
    socket.once('end', resolve);
    socket.once('close', () => resolve());
    socket.once('error', () => resolve());
  });
  socket.pause();
  return {
    socket,
    resume: () => socket.resume(),
    ended,
    frames: () => parseChunked(Buffer.concat(chunks).toString('utf8')),
    close: () => socket.destroy(),
  };
}

/** The ids and comments in a raw HTTP/1.1 chunked SSE response. */
function parseChunked(raw: string): { ids: number[]; comments: string[] } {
  const headEnd = raw.indexOf('\r\n\r\n');
  let rest = raw.slice(headEnd + 4);
  let body = '';
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    if (lineEnd < 0) break;
    const size = parseInt(rest.slice(0, lineEnd), 16);
    if (Number.isNaN(size) || size === 0) break;
    body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
  const ids: number[] = [];
  const comments: string[] = [];
  for (const line of body.split('\n')) {
    if (line.startsWith('id: ')) ids.push(Number(line.slice(4)));
    else if (line.startsWith(':')) comments.push(line.slice(1).trim());
  }
  return { ids, comments };
}

