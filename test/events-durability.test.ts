import { describe, expect } from 'vitest';
import { freePort, itWithFolder, killAll, logLines, startCli, waitReady, type CliFolder, type Running } from './helpers/cli-process.js';
import { eventOf, eventsUrl, listenApp, replay, send, SseReader, tempDatabase, waitUntil, type Row, type StreamEvent } from './helpers/event-stream.js';
import { TEST_ADMIN_TOKEN } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from './helpers/test-database.js';

/**
 * The outbox survives what a server lives through: `restgraph serve` killed with SIGKILL in the
 * middle of writes (every acknowledged write keeps its event, every stored row has one, ids go on
 * increasing after the restart), SIGTERM with streams open, and retention (events older than the
 * retention are pruned when the server starts; replay then begins at the oldest kept event).
 */

// Each test has its own folder, database and servers: the tests run concurrently.
const it = itWithFolder('restgraph-events-cli-').extend<{ database: TestDatabase }>({
  database: async ({ folder }, use) => {
    const database = await createTestDatabase(folder.path, 'events');
    try {
      await use(database);
    } finally {
      // The servers first: they hold the database open.
      await killAll(folder.children);
      await database.drop();
    }
  },
});

/** `restgraph serve` on a free port and the test's database; resolves once /readyz is 200. */
async function serve(folder: CliFolder, database: TestDatabase, env: Record<string, string> = {}): Promise<{ running: Running; base: string }> {
  const port = await freePort();
  const running = startCli(folder.path, ['serve'], { DATABASE_URL: database.url, PORT: String(port), RESTGRAPH_ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...env }, folder.children);
  await waitReady(running, port);
  return { running, base: `http://127.0.0.1:${port}` };
}

/** The outbox as the server replays it from 0: every stored event, up to the newest at connection time. */
async function replayAll(base: string): Promise<{ events: StreamEvent[]; lastId: number }> {
  const reader = await SseReader.open(eventsUrl(base), { 'last-event-id': '0' });
  try {
    expect(reader.status).toBe(200);
    await reader.waitFor((r) => r.comments.length > 0, 'the connected comment');
    const lastId = Number(/^connected; last event id (\d+)$/.exec(reader.comments[0] ?? '')?.[1]);
    expect(Number.isInteger(lastId)).toBe(true);
    if (lastId > 0) await reader.until((e) => e.id === lastId, `event ${lastId}`);
    return { events: [...reader.events], lastId };
  } finally {
    reader.close();
  }
}

async function backdate(db: TestDatabase, ids: readonly number[], occurredAt: string): Promise<void> {
  for (const id of ids) expect(await db.run('update "_restgraph_events" set "occurredAt" = ? where "id" = ?', [occurredAt, id])).toBe(1);
}

describe.concurrent('restgraph serve killed with SIGKILL', () => {
  it('every acknowledged write has its event, in order; stored rows and events agree; ids go on increasing after the restart', async ({ folder, database }) => {
    const first = await serve(folder, database);
    /** What each acknowledged write must have left in the outbox, in order. */
    const acknowledged: { type: string; object: Row }[] = [];
    const write = async (method: string, path: string, body: unknown, type: string): Promise<Row> => {
      const response = await send(first.base, method, path, body);
      expect(response.status, response.text).toBe(method === 'DELETE' ? 204 : method === 'POST' ? 201 : 200);
      const object = method === 'DELETE' ? (body as Row) : response.json();
      acknowledged.push({ type, object });
      return object;
    };
    const alice = await write('POST', '/users', { name: 'Alice' }, 'user.created');
    const bob = await write('POST', '/users', { name: 'Bob', email: 'bob@example.com' }, 'user.created');
    await write('PATCH', `/users/${alice.id}`, { bio: 'first' }, 'user.updated');
    const post = await write('POST', '/posts', { title: 'Hello', userId: bob.id }, 'post.created');
    const product = await write('POST', '/products', { name: 'Widget', sku: 'WIDGET-9', price: 2 }, 'product.created');
    await write('POST', '/orders', { userId: alice.id, productId: product.id, quantity: 1 }, 'order.created');
    const current = (await send(first.base, 'GET', `/posts/${post.id}`)).json();
    await write('DELETE', `/posts/${post.id}`, current, 'post.deleted');

    // A burst of concurrent creates, killed part-way: some are acknowledged, some never answered.
    const burst = Array.from({ length: 60 }, (_, i) =>
      send(first.base, 'POST', '/users', { name: `Burst ${i}` }).then(
        (response) => (response.status === 201 ? response.json() : undefined),
        () => undefined,
      ),
    );
    let answered = 0;
    for (const pending of burst) void pending.then((row) => (row === undefined ? undefined : answered++));
    await waitUntil(() => answered >= 10, 'ten acknowledged creates');
    first.running.child.kill('SIGKILL');
    expect(await first.running.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const burstRows = (await Promise.all(burst)).filter((row): row is Row => row !== undefined);
    expect(burstRows.length).toBeGreaterThanOrEqual(10);

    const second = await serve(folder, database);
    const { events, lastId } = await replayAll(second.base);
    const ids = events.map((e) => e.id);
    if (TEST_DIALECT === 'sqlite') expect(ids).toEqual(Array.from({ length: lastId }, (_, i) => i + 1));
    else {
      // PostgreSQL hands out ids before commit: those of the transactions the kill cut short are
      // never used. What was committed replays in increasing id order, up to the last.
      expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
      expect(ids.at(-1)).toBe(lastId);
    }
    // The acknowledged sequential writes, exactly and first.
    expect(events.slice(0, acknowledged.length).map((e) => ({ type: e.type, object: e.body.data.object }))).toEqual(acknowledged);
    // Every acknowledged create of the burst has its event, with the object as acknowledged.
    const burstEvents = events.slice(acknowledged.length);
    expect(burstEvents.every((e) => e.type === 'user.created')).toBe(true);
    const byId = new Map(burstEvents.map((e) => [e.body.data.object.id, e.body.data.object]));
    for (const row of burstRows) expect(byId.get(row.id)).toEqual(row);
    // Rows and events agree: every stored user has its created event and no event names a missing row.
    const listed = await send(second.base, 'GET', '/users?limit=1000');
    const stored = listed.json<Row[]>().map((u) => u.id);
    // (Events come in commit order; concurrent creates may commit in another order than their row ids.)
    const createdIds = events.filter((e) => e.type === 'user.created').map((e) => e.body.data.object.id);
    expect(stored).toEqual([...createdIds].sort((a, b) => a - b));

    // New writes after the restart get larger ids.
    const after = await send(second.base, 'POST', '/users', { name: 'After restart' });
    expect(after.status).toBe(201);
    const afterEvents = await replay(second.base, eventOf('user.created', after.json().id), lastId);
    // (One event, with a larger id; PostgreSQL may skip ids that transactions cut short by the kill took.)
    expect(afterEvents).toHaveLength(1);
    expect(afterEvents[0]?.id).toBeGreaterThan(lastId);
  });
});

describe.concurrent('restgraph serve with streams open', () => {
  it('SIGTERM ends every stream with the shutdown comment and exits 0', async ({ folder, database }) => {
    const { running, base } = await serve(folder, database);
    const readers = [await SseReader.open(eventsUrl(base)), await SseReader.open(eventsUrl(base, { types: 'post.created' }), { authorization: '' })];
    for (const reader of readers) await reader.waitFor((r) => r.comments.length === 1, 'connected');
    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    for (const reader of readers) {
      await reader.ended;
      expect(reader.comments.at(-1)).toBe('server shutting down; reconnect with Last-Event-ID');
    }
    expect(logLines(running.stdout()).at(-1)?.msg).toBe('stopped');
  });

  it('RESTGRAPH_SSE_HEARTBEAT_SECONDS sets the heartbeat interval', async ({ folder, database }) => {
    const { base } = await serve(folder, database, { RESTGRAPH_SSE_HEARTBEAT_SECONDS: '1' });
    const reader = await SseReader.open(eventsUrl(base));
    try {
      await reader.waitFor((r) => r.comments.includes('heartbeat'), 'a heartbeat');
      expect(reader.comments.slice(0, 2)).toEqual(['connected; last event id 0', 'heartbeat']);
    } finally {
      reader.close();
    }
  });

  for (const [name, value] of [
    ['RESTGRAPH_EVENT_RETENTION_DAYS', '0'],
    ['RESTGRAPH_EVENT_RETENTION_DAYS', 'week'],
    ['RESTGRAPH_SSE_HEARTBEAT_SECONDS', '0'],
    ['RESTGRAPH_SSE_HEARTBEAT_SECONDS', '1.5'],
  ] as const) {
    it(`${name}=${value} stops serve at start-up with RG_CONFIG_INVALID naming the variable`, async ({ folder, database }) => {
      const running = startCli(folder.path, ['serve'], { DATABASE_URL: database.url, PORT: String(await freePort()), [name]: value }, folder.children);
      const exit = await running.exited;
      expect(exit.code).toBe(1);
      expect(running.stderr()).toContain('[RG_CONFIG_INVALID]');
      expect(running.stderr()).toContain(name);
    });
  }
});

describe.concurrent('retention', () => {
  it('RESTGRAPH_EVENT_RETENTION_DAYS: events older than the retention are pruned at start; replay from 0 begins at the oldest kept one', async ({ folder, database }) => {
    const first = await serve(folder, database, { RESTGRAPH_EVENT_RETENTION_DAYS: '1' });
    for (let i = 1; i <= 6; i++) expect((await send(first.base, 'POST', '/users', { name: `User ${i}` })).status).toBe(201);
    expect((await replayAll(first.base)).lastId).toBe(6);
    first.running.child.kill('SIGTERM');
    expect(await first.running.exited).toEqual({ code: 0, signal: null });
    await backdate(database, [1, 2, 3], new Date(Date.now() - 25 * 60 * 60 * 1000).toISOString());
    await backdate(database, [4], new Date(Date.now() - 23 * 60 * 60 * 1000).toISOString());

    const second = await serve(folder, database, { RESTGRAPH_EVENT_RETENTION_DAYS: '1' });
    const { events, lastId } = await replayAll(second.base);
    expect(lastId).toBe(6);
    expect(events.map((e) => e.id)).toEqual([4, 5, 6]);
    // A client resuming from a pruned id gets what is left after it.
    expect((await replay(second.base, (e) => e.id === 6, 2)).map((e) => e.id)).toEqual([4, 5, 6]);
    const made = await send(second.base, 'POST', '/users', { name: 'New' });
    expect((await replay(second.base, eventOf('user.created', made.json().id), 0)).map((e) => e.id)).toEqual([4, 5, 6, 7]);
  });

  it('retentionMs: 1000 and a restart: old events are gone, ids never come back, replay from 0 starts at the oldest kept one', async () => {
    const db = await tempDatabase();
    try {
      let server = await listenApp(db.url, { events: { retentionMs: 1000 } });
      const made: Row[] = [];
      for (let i = 0; i < 4; i++) made.push((await send(server.base, 'POST', '/users', { name: `Old ${i}` })).json());
      const old = await replay(server.base, eventOf('user.created', must(made.at(-1)).id));
      expect(old.map((e) => e.id)).toEqual([1, 2, 3, 4]);
      const newest = Date.parse(must(old.at(-1)).body.timestamp);
      await waitUntil(() => Date.now() > newest + 1100, 'the events to be older than the retention');
      await server.close();

      server = await listenApp(db.url, { events: { retentionMs: 1000 } });
      try {
        const fresh = (await send(server.base, 'POST', '/users', { name: 'Fresh' })).json();
        const kept = await replay(server.base, eventOf('user.created', fresh.id));
        // Every old event was pruned; the new one continues the ids (5), it does not reuse 1.
        expect(kept.map((e) => [e.id, e.body.data.object.name])).toEqual([[5, 'Fresh']]);
        expect((await send(server.base, 'GET', '/users')).json<Row[]>().map((u) => u.name)).toEqual(['Old 0', 'Old 1', 'Old 2', 'Old 3', 'Fresh']);
      } finally {
        await server.close();
      }
    } finally {
      await db.cleanup();
    }
  });

  it('retentionMs keeps what is younger: backdated events are pruned at start, the rest replay in order', async () => {
    const db = await tempDatabase();
    try {
      let server = await listenApp(db.url, { events: { retentionMs: 60 * 60 * 1000 } });
      const made: Row[] = [];
      for (let i = 0; i < 6; i++) made.push((await send(server.base, 'POST', '/users', { name: `U${i}` })).json());
      await replay(server.base, eventOf('user.created', must(made.at(-1)).id));
      await server.close();
      await backdate(db.db, [1, 2, 3], new Date(Date.now() - 2 * 60 * 60 * 1000).toISOString());
      await backdate(db.db, [4], new Date(Date.now() - 50 * 60 * 1000).toISOString());
      server = await listenApp(db.url, { events: { retentionMs: 60 * 60 * 1000 } });
      try {
        const { events, lastId } = await replayAll(server.base);
        expect(lastId).toBe(6);
        expect(events.map((e) => [e.id, e.body.data.object.name])).toEqual([
          [4, 'U3'],
          [5, 'U4'],
          [6, 'U5'],
        ]);
      } finally {
        await server.close();
      }
    } finally {
      await db.cleanup();
    }
  });
});

function must<T>(value: T | undefined | null, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`missing ${what}`);
  return value;
}
