import { createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { killAll, type Running } from './helpers/cli-process.js';
import { holdWriteLock } from './helpers/sqlite-lock-holder.js';
import { TcpProxy } from './helpers/tcp-proxy.js';
import { actAsAdmin, discardLogs, json, startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT, TEST_POSTGRES_URL, type TestDatabase } from './helpers/test-database.js';

/**
 * Every wait is bounded: the time a request may take to be answered (503 server-timeout), and on
 * PostgreSQL the time to get a connection, a statement's run time and the wait for an answer from
 * a server gone silent (503 database-unavailable). SQLite's lock wait: sqlite-faults.test.ts;
 * the settings read from the environment: limits.test.ts.
 */

interface Problem {
  code: string;
  detail: string;
}

const cleanups: (() => Promise<void> | void)[] = [];
let children: Running[] = [];
afterEach(async () => {
  await killAll(children);
  children = [];
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Holds a write's lock elsewhere (SQLite: another process's write lock; PostgreSQL: a row lock on users/1) until released. */
async function holdLock(testApp: TestApp): Promise<() => Promise<void>> {
  if (testApp.db.dialect === 'sqlite') {
    const holder = await holdWriteLock(testApp.db.file ?? '', children);
    return () => holder.release();
  }
  const other = new pg.Client({ connectionString: testApp.db.url });
  await other.connect();
  await other.query('begin');
  await other.query('select * from "users" where "id" = 1 for update');
  const release = async (): Promise<void> => {
    await other.query('rollback');
    await other.end();
  };
  cleanups.push(() => release().catch(() => undefined));
  return release;
}

async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a request the server does not answer within RESTGRAPH_RESPONSE_TIMEOUT_MS', () => {
  it('answers 503 server-timeout with Retry-After, on time; the write completes later, and a retry with the same Idempotency-Key replays its outcome', async () => {
    const testApp = await startTestApp({ responseTimeoutMs: 300, database: { sqliteLockTimeoutMs: 30_000 } });
    cleanups.push(() => testApp.close());
    const { app } = testApp;
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } })).statusCode).toBe(201);
    const release = await holdLock(testApp);

    const started = performance.now();
    const patch = { method: 'PATCH' as const, url: '/users/1', headers: { 'idempotency-key': 'slow-1' }, payload: { name: 'Grace' } };
    const timedOut = await app.inject(patch);
    const tookMs = performance.now() - started;
    expect(timedOut.statusCode, timedOut.body).toBe(503);
    expect(tookMs).toBeGreaterThanOrEqual(290);
    // Answered by the deadline, not after the 30 s the write waits for the lock (with room for a busy machine).
    expect(tookMs).toBeLessThan(10_000);
    expect(timedOut.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(timedOut.headers['retry-after']).toBe('5');
    expect(timedOut.headers.etag).toBeUndefined();
    expect(json<Problem>(timedOut)).toMatchObject({ code: 'server-timeout', detail: expect.stringContaining('300 ms') as unknown });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    await release();
    // The handler went on: its write commits once the lock is free.
    await waitUntil(async () => json<{ name: string }>(await app.inject({ method: 'GET', url: '/users/1' })).name === 'Grace', 'the timed-out write to complete');
    const replayed = await app.inject(patch);
    expect(replayed.statusCode).toBe(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(json<{ name: string }>(replayed).name).toBe('Grace');
  });

  it('over a real socket too: each of several slow writes is answered 503 on time, while reads answered meanwhile and afterwards are untouched', async () => {
    const testApp = await startTestApp({ responseTimeoutMs: 300, database: { sqliteLockTimeoutMs: 30_000 } });
    cleanups.push(() => testApp.close());
    const address = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    expect((await fetch(`${address}/users`, { method: 'POST', headers, body: '{"name":"Ada"}' })).status).toBe(201);
    const release = await holdLock(testApp);

    const started = performance.now();
    const slow = [1, 2, 3].map(async (n) => {
      const response = await fetch(`${address}/users/1`, { method: 'PATCH', headers, body: JSON.stringify({ name: `Grace ${n}` }), signal: AbortSignal.timeout(5000) });
      return { status: response.status, body: (await response.json()) as Problem, tookMs: performance.now() - started };
    });
    const reads = await Promise.all([1, 2, 3].map(() => fetch(`${address}/users/1`, { headers })));
    expect(reads.map((read) => read.status)).toEqual([200, 200, 200]);
    for (const answer of await Promise.all(slow)) {
      expect(answer.status).toBe(503);
      expect(answer.body.code).toBe('server-timeout');
      expect(answer.tookMs).toBeGreaterThanOrEqual(290);
      expect(answer.tookMs).toBeLessThan(10_000); // not the 30 s lock wait
    }
    await release();
    // Answered requests leave nothing behind to time out: reads well past the limit are answered normally.
    for (let round = 0; round < 3; round += 1) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(`${address}/users/1`, { headers })));
      expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 10 }, () => 200));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  it('does not cut a stream that has started (GET /v1/events outlives the limit)', async () => {
    const testApp = await startTestApp({ responseTimeoutMs: 100 });
    cleanups.push(() => testApp.close());
    const address = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    const controller = new AbortController();
    const response = await fetch(`${address}/v1/events`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, signal: controller.signal });
    expect(response.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await testApp.app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } })).statusCode).toBe(201);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('user.created')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
  });
});

/** A TCP server on 127.0.0.1 that accepts connections and never says a word. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(TEST_DIALECT !== 'postgres')('PostgreSQL time bounds', () => {
  const withPort = (url: string, port: number): string => {
    const parsed = new URL(url);
    parsed.host = `127.0.0.1:${port}`;
    return parsed.href;
  };
  let database: TestDatabase;
  const start = async (options: Parameters<typeof buildApp>[0]) => {
    const dir = tempDir('restgraph-bounds-');
    database = await createTestDatabase(dir.path);
    cleanups.push(async () => {
      await database.drop();
      dir.cleanup();
    });
    const app = actAsAdmin(await buildApp({ databaseUrl: database.url, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN, ...options }));
    cleanups.push(() => app.close());
    return app;
  };

  it('a server that accepts and never answers: start-up fails within RESTGRAPH_DB_CONNECT_TIMEOUT_MS, naming DATABASE_URL', async () => {
    const silent = await silentServer();
    cleanups.push(() => silent.close());
    const started = performance.now();
    const building = buildApp({ databaseUrl: withPort(TEST_POSTGRES_URL, silent.port), logDestination: discardLogs(), database: { connectTimeoutMs: 300 } });
    await expect(building).rejects.toThrow(/DATABASE_URL/);
    // (Without the bound it would wait for ever; 10 s leaves room for a busy machine.)
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('a statement running past RESTGRAPH_DB_STATEMENT_TIMEOUT_MS (waiting for a row lock) → 503 database-unavailable, nothing changed', async () => {
    const app = await start({ database: { statementTimeoutMs: 300 } });
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } })).statusCode).toBe(201);
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    cleanups.push(() => other.end());
    await other.query('begin');
    await other.query('select * from "users" where "id" = 1 for update');
    const refused = await app.inject({ method: 'PATCH', url: '/users/1', payload: { name: 'Grace' } });
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(json<Problem>(refused).code).toBe('database-unavailable');
    await other.query('rollback');
    expect(json<{ name: string }>(await app.inject({ method: 'GET', url: '/users/1' })).name).toBe('Ada');
    expect((await app.inject({ method: 'PATCH', url: '/users/1', payload: { name: 'Grace' } })).statusCode).toBe(200);
  });

  it('the database goes silent (no answer, connections kept open): 503 database-unavailable within RESTGRAPH_DB_QUERY_TIMEOUT_MS, /readyz 503, /healthz 200; all well again when it answers', async () => {
    const upstream = new URL(TEST_POSTGRES_URL);
    const proxy = await TcpProxy.start(upstream.hostname, Number(upstream.port || 5432));
    cleanups.push(() => proxy.close());
    const dir = tempDir('restgraph-bounds-');
    database = await createTestDatabase(dir.path);
    cleanups.push(async () => {
      await database.drop();
      dir.cleanup();
    });
    const app = actAsAdmin(
      await buildApp({ databaseUrl: withPort(database.url, proxy.port), logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN, database: { connectTimeoutMs: 500, queryTimeoutMs: 500 } }),
    );
    cleanups.push(() => app.close());
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } })).statusCode).toBe(201);

    proxy.freeze();
    const started = performance.now();
    const read = await app.inject({ method: 'GET', url: '/users/1' });
    expect(performance.now() - started).toBeLessThan(10_000); // (for ever without the bound)
    expect(read.statusCode, read.body).toBe(503);
    expect(json<Problem>(read).code).toBe('database-unavailable');
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect(json<Problem>(await app.inject({ method: 'GET', url: '/readyz' })).code).toBe('database-unavailable');

    proxy.thaw();
    await waitUntil(async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200, '/readyz 200 again');
    expect(json<{ name: string }>(await app.inject({ method: 'GET', url: '/users/1' })).name).toBe('Ada');
  });
});
