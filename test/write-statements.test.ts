import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/index.js';
import { actAsAdmin, discardLogs, json, startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from './helpers/test-database.js';

/**
 * What a create costs in statements, and that the cheaper way keeps every guarantee: on PostgreSQL
 * a create that needs nothing else in its transaction (no reference to check, no Idempotency-Key)
 * writes the row and its outbox event in one statement; otherwise, and on SQLite, a transaction.
 */

type Row = Record<string, unknown>;

describe('statements of a create', () => {
  let t: TestApp;
  const statements: string[] = [];
  beforeAll(async () => {
    t = await startTestApp({ onSqlStatement: (sql) => statements.push(sql) });
  });
  afterAll(() => t.close());
  beforeEach(() => {
    statements.length = 0;
  });

  /** The statements that wrote rows (transaction control is not reported). */
  const writes = () => statements.filter((s) => /insert into/i.test(s));
  const combined = (s: string | undefined) => s !== undefined && /^with "r" as \(insert into/.test(s);

  it('a plain create: one statement on PostgreSQL (row and event together), a transaction on SQLite', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Solo', email: 'solo@example.com' } });
    expect(response.statusCode).toBe(201);
    if (TEST_DIALECT === 'postgres') {
      expect(writes()).toHaveLength(1);
      expect(writes()[0]).toMatch(/^with "r" as \(insert into "users"/);
    } else {
      // The row, then its event, in the transaction.
      expect(writes()).toHaveLength(2);
      expect(writes()[1]).toMatch(/insert into "_restgraph_events"/);
    }
    // The event is the row as the response shows it, under the next outbox id.
    const created = json<Row>(response);
    const events = await t.db.query<{ type: string; recordId: number; data: string }>('select "type", "recordId", "data" from "_restgraph_events" where "recordId" = ? and "resource" = ?', [created.id, 'users']);
    expect(events).toHaveLength(1);
    expect(events[0]?.type).toBe('user.created');
    expect(JSON.parse(events[0]?.data ?? '{}')).toEqual({ object: created });
  });

  it('a unique conflict is still a 409, with no row and no event', async () => {
    const before = await t.db.query<{ n: number }>('select count(*) as n from "_restgraph_events"');
    const response = await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Twin', email: 'solo@example.com' } });
    expect(response.statusCode).toBe(409);
    expect(json<{ code: string }>(response).code).toBe('unique-conflict');
    const after = await t.db.query<{ n: number }>('select count(*) as n from "_restgraph_events"');
    expect(Number(after[0]?.n)).toBe(Number(before[0]?.n));
    const twins = await t.app.inject({ method: 'GET', url: '/users?name=Twin' });
    expect(json<Row[]>(twins)).toEqual([]);
  });

  it('a create with a reference, or with an Idempotency-Key, runs in a transaction', async () => {
    const user = json<Row>(await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Author' } }));
    statements.length = 0;
    expect((await t.app.inject({ method: 'POST', url: '/posts', payload: { title: 'x', userId: user.id } })).statusCode).toBe(201);
    // The referenced row is read (locked on PostgreSQL) in the transaction of the insert.
    expect(statements.some((s) => /from "users"/.test(s))).toBe(true);
    expect(writes().some(combined)).toBe(false);
    statements.length = 0;
    expect((await t.app.inject({ method: 'POST', url: '/users', headers: { 'idempotency-key': 'write-statements-1' }, payload: { name: 'Once' } })).statusCode).toBe(201);
    expect(writes().some(combined)).toBe(false);
    expect(writes().some((s) => /"_restgraph_idempotency_keys"/.test(s))).toBe(true);
    // A reference to a row that does not exist is still refused.
    expect((await t.app.inject({ method: 'POST', url: '/posts', payload: { title: 'x', userId: 999999 } })).statusCode).toBe(422);
  });
});

describe.skipIf(TEST_DIALECT !== 'postgres')('connections after a refused statement (PostgreSQL)', () => {
  let app: FastifyInstance;
  let db: TestDatabase;
  const dir = tempDir();
  // The app's connections carry a name of their own, so the server can list them.
  const applicationName = `rg_conn_${String(process.pid)}_${String(Date.now())}`;
  beforeAll(async () => {
    db = await createTestDatabase(dir.path);
    app = actAsAdmin(await buildApp({ databaseUrl: `${db.url}&application_name=${applicationName}`, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN }));
  });
  afterAll(async () => {
    await app.close();
    await db.drop();
    dir.cleanup();
  });

  /** The app's backends, each as pid@start: a replaced connection is a new entry. */
  const backends = async () =>
    (await db.query<{ pid: number; started: string }>('select pid, backend_start::text as started from pg_stat_activity where application_name = ? order by pid', [applicationName])).map(
      (r) => `${String(r.pid)}@${r.started}`,
    );

  it('a unique conflict keeps its connection (and the statements prepared on it)', async () => {
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'First', email: 'first@example.com' } })).statusCode).toBe(201);
    const before = await backends();
    expect(before.length).toBeGreaterThan(0);
    for (let i = 0; i < 10; i++) {
      const conflict = await app.inject({ method: 'POST', url: '/users', payload: { name: `Twin ${String(i)}`, email: 'first@example.com' } });
      expect(conflict.statusCode).toBe(409);
    }
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Second' } })).statusCode).toBe(201);
    expect(await backends()).toEqual(before);
  });
});

describe('reads of the outbox while nobody is subscribed', () => {
  let t: TestApp;
  const statements: string[] = [];
  beforeAll(async () => {
    // A short poll interval, so that polls overlap the writes.
    t = await startTestApp({ onSqlStatement: (sql) => statements.push(sql), events: { pollIntervalMs: 20 } });
  });
  afterAll(() => t.close());

  it('writes do not make the dispatcher read back what they committed, however many come during a poll', async () => {
    const outboxReads = () => statements.filter((s) => /from "_restgraph_events" where "id" >/i.test(s)).length;
    const before = outboxReads();
    const started = Date.now();
    let next = 0;
    const writer = async () => {
      while (next < 300) {
        const n = next++;
        const response = await t.app.inject({ method: 'POST', url: '/users', payload: { name: `Writer ${String(n)}` } });
        expect(response.statusCode).toBe(201);
      }
    };
    await Promise.all(Array.from({ length: 16 }, writer));
    const polls = (Date.now() - started) / 20;
    // About one read per poll. (On PostgreSQL, where commits finish out of order, each write that
    // landed during a read used to ask for another: reads followed each other for as long as writes came.)
    expect(outboxReads() - before).toBeLessThanOrEqual(Math.ceil(polls) + 3);
  });
});
