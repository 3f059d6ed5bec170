import { statSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp, EXAMPLE_SCHEMA_PATH, loadSchemaFile } from '../src/index.js';
import { EventDispatcher } from '../src/core/event-dispatcher.js';
import { EventStore } from '../src/store/event-store.js';
import { openDatabase } from '../src/store/open-database.js';
import { actAsAdmin, discardLogs, json, startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from './helpers/test-database.js';

/**
 * What a create costs in statements, and that the cheaper way keeps every guarantee: on PostgreSQL
 * a create that needs nothing else in its transaction (no reference to check, no Idempotency-Key)
 * writes the row and its outbox event in one statement; otherwise, and on SQLite, a transaction
 * (on SQLite one shared by the plain creates of an event-loop turn: group commit).
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

  it('plain creates among writes whose transactions wait (Idempotency-Key, references): every row has its one event', async () => {
    const author = json<Row>(await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Mixed author' } }));
    // Sent together: on SQLite the plain creates of one turn share a transaction (group commit),
    // each in a savepoint of its own; on PostgreSQL each is one statement.
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        if (i === 29) return t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Duplicate', email: 'mixed-2@example.com' } });
        if (i % 3 === 0) return t.app.inject({ method: 'POST', url: '/users', headers: { 'idempotency-key': `mixed-${String(i)}` }, payload: { name: `Keyed ${String(i)}` } });
        if (i % 3 === 1) return t.app.inject({ method: 'POST', url: '/posts', payload: { title: `Post ${String(i)}`, userId: author.id } });
        return t.app.inject({ method: 'POST', url: '/users', payload: { name: `Plain ${String(i)}`, email: `mixed-${String(i)}@example.com` } });
      }),
    );
    // The last one repeats a plain create's email: refused alone, with no row and no event.
    expect(responses.pop()?.statusCode).toBe(409);
    expect(await t.db.query('select "id" from "users" where "name" = ?', ['Duplicate'])).toEqual([]);
    for (const response of responses) {
      expect(response.statusCode).toBe(201);
      const created = json<Row>(response);
      const resource = 'title' in created ? 'posts' : 'users';
      const events = await t.db.query<{ data: string }>('select "data" from "_restgraph_events" where "recordId" = ? and "resource" = ?', [created.id, resource]);
      expect(events.map((e) => JSON.parse(e.data) as unknown)).toEqual([{ object: created }]);
    }
  });

  it.skipIf(TEST_DIALECT !== 'sqlite')('SQLite: the write-ahead log stays bounded under a stream of writes (its checkpoints complete)', async () => {
    // Each create appends several pages to the WAL: 2,000 of them write about 40 MB of frames. A
    // checkpoint that completes lets SQLite write the WAL from its start again (about 4 MB, its
    // 1,000-page autocheckpoint); one that never completes (an INSERT … RETURNING in autocommit
    // mode, a read left open) would leave all 40 MB on disk, and growing.
    const file = t.db.file ?? '';
    for (let i = 0; i < 2000; i++) {
      const response = await t.app.inject({ method: 'POST', url: '/users', payload: { name: `Wal ${String(i)}`, email: `wal-${String(i)}@example.com`, bio: 'x'.repeat(200) } });
      expect(response.statusCode).toBe(201);
    }
    expect(statSync(`${file}-wal`).size).toBeLessThan(8 * 1024 * 1024);
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

describe('the event dispatcher reading the outbox', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('with nobody subscribed, does not read the outbox again for writes of its own committed during a read', async () => {
    // A dispatcher of its own on the app's database, whose reads of the outbox are counted.
    let reads = 0;
    const { db } = await openDatabase(t.db.url, {
      onStatement: (sql) => {
        if (/from "_restgraph_events" where "id" >/.test(sql)) reads++;
      },
    });
    const dispatcher = new EventDispatcher(new EventStore(db), loadSchemaFile(EXAMPLE_SCHEMA_PATH), { pollIntervalMs: 3_600_000 });
    try {
      await dispatcher.start({ failing: () => undefined, recovered: () => undefined });
      const before = reads;
      dispatcher.notify(); // a read begins (a poll, or another process's signal)
      // Meanwhile this process commits writes whose events do not follow the last one read (as
      // commits finish out of order on PostgreSQL): with nobody to feed, they need no read.
      for (let i = 1; i <= 5; i++) {
        dispatcher.committed([{ id: dispatcher.lastId + 2 * i, type: 'user.created', resource: 'users', recordId: i, data: { object: { id: i } }, occurredAt: new Date().toISOString() }]);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(reads - before).toBe(1);
    } finally {
      dispatcher.stop();
      await db.close();
    }
  });

  it('reads wake-ups that keep coming together: at most one read of the outbox per readSpacingMs, every event delivered in order', async () => {
    let reads = 0;
    const { db } = await openDatabase(t.db.url, {
      onStatement: (sql) => {
        if (/from "_restgraph_events" where "id" >/.test(sql)) reads++;
      },
    });
    const spacingMs = 100;
    const dispatcher = new EventDispatcher(new EventStore(db), loadSchemaFile(EXAMPLE_SCHEMA_PATH), { pollIntervalMs: 3_600_000, readSpacingMs: spacingMs });
    const got: number[] = [];
    try {
      await dispatcher.start({ failing: () => undefined, recovered: () => undefined });
      const principal = await t.app.restgraph.authenticator.authenticate(`Bearer ${TEST_ADMIN_TOKEN}`);
      dispatcher.subscribe({ principal, deliver: (event) => got.push(event.id) > 0, close: () => undefined });
      const from = dispatcher.lastId;
      const before = reads;
      // Another process (the app) writes all the time, and says so after each write: a fixed
      // number of writes, however long they take here; the reads are counted against that time.
      const writes = 40;
      const startedAt = Date.now();
      for (let i = 0; i < writes; i++) {
        const response = await t.app.inject({ method: 'POST', url: '/users', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, payload: { name: `Writer ${String(i)}` } });
        expect(response.statusCode).toBe(201);
        dispatcher.notify();
      }
      const elapsed = Date.now() - startedAt;
      await new Promise((resolve) => setTimeout(resolve, 2 * spacingMs));
      expect(reads - before).toBeGreaterThan(0);
      expect(reads - before).toBeLessThanOrEqual(Math.ceil(elapsed / spacingMs) + 2);
      expect(got).toEqual(Array.from({ length: dispatcher.lastId - from }, (_, i) => from + 1 + i));
      expect(got.length).toBeGreaterThanOrEqual(writes);
    } finally {
      dispatcher.stop();
      await db.close();
    }
  });
});

/** The statement that stores `v` in the test table "t" (its values unique). */
const insert = (v: string) => ({ sql: 'insert into "t" ("v") values (?) returning "id"', parameters: [v] });

/** A SQLite database of its own in `dir` with the test table "t". */
async function databaseWithTable(dir: string, name: string) {
  const { db } = await openDatabase(`sqlite:${dir}/${name}.db`);
  await db.exec('create table "t" ("id" integer primary key, "v" text not null unique)');
  return db;
}

describe.skipIf(TEST_DIALECT !== 'sqlite')('SQLite group commit (transactionShared)', () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  async function table(name: string) {
    const db = await databaseWithTable(dir.path, name);
    const shared = db.transactionShared?.bind(db);
    if (shared === undefined) throw new Error('SQLite has transactionShared');
    const values = async () => (await db.all({ sql: 'select "v" from "t" order by "id"', parameters: [] })).map((r) => r.v);
    return { db, shared, values };
  }

  it('work handed in during one turn commits together, in order; work that throws is undone alone and rejects with its error', async () => {
    const { db, shared, values } = await table('together');
    try {
      const outcomes = await Promise.allSettled([
        shared((tx) => Number(tx.one(insert('a'))?.id)),
        shared((tx) => {
          tx.one(insert('half done'));
          throw new Error('refused');
        }),
        shared((tx) => Number(tx.one(insert('a'))?.id)), // a unique violation
        shared((tx) => Number(tx.one(insert('b'))?.id)),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
      expect(outcomes[0]).toEqual({ status: 'fulfilled', value: 1 });
      expect(outcomes[1]).toMatchObject({ reason: { message: 'refused' } });
      expect(outcomes[2]).toMatchObject({ reason: { kind: 'unique' } });
      expect(outcomes[3]).toEqual({ status: 'fulfilled', value: 2 });
      expect(await values()).toEqual(['a', 'b']);
      // Alone, work that throws leaves nothing behind either.
      await expect(shared((tx) => tx.one(insert('a')))).rejects.toMatchObject({ kind: 'unique' });
      expect(await shared((tx) => Number(tx.one(insert('c'))?.id))).toBe(3);
      expect(await values()).toEqual(['a', 'b', 'c']);
    } finally {
      await db.close();
    }
  });

  it('waits for a transaction that holds the writer across an await, then commits after it', async () => {
    const { db, shared, values } = await table('after');
    try {
      let release!: () => void;
      const waiting = db.transaction(async (tx) => {
        await tx.run(insert('first'));
        await new Promise<void>((resolve) => (release = resolve));
        await tx.run(insert('second'));
      });
      await new Promise((resolve) => setTimeout(resolve, 10));
      const later = shared((tx) => tx.one(insert('third')));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await values()).toEqual([]);
      release();
      await waiting;
      await later;
      expect(await values()).toEqual(['first', 'second', 'third']);
    } finally {
      await db.close();
    }
  });

  it('close() commits work handed in during its turn instead of dropping it', async () => {
    const { db, shared } = await table('closing');
    const pending = shared((tx) => tx.one(insert('kept')));
    await db.close();
    await pending;
    const reopened = await openDatabase(`sqlite:${dir.path}/closing.db`);
    try {
      expect(await reopened.db.all({ sql: 'select "v" from "t"', parameters: [] })).toEqual([{ v: 'kept' }]);
    } finally {
      await reopened.db.close();
    }
  });
});

describe.skipIf(TEST_DIALECT !== 'sqlite')('SQLite group commit (transactions that await)', () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  async function table(name: string) {
    const db = await databaseWithTable(dir.path, name);
    // What another connection sees: only what has committed.
    const committed = async () => (await createTestDatabase(dir.path, name).then((t) => t.query<{ v: string }>('select "v" from "t" order by "id"'))).map((r) => r.v);
    return { db, committed };
  }

  it('transactions queued together commit together: each runs alone (in order), one that fails is undone alone, and none is answered before the commit', async () => {
    const { db, committed } = await table('grouped');
    try {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const answered: string[] = [];
      const all = Promise.allSettled([
        db.transaction(async (tx) => {
          await tx.one(insert('a'));
          answered.push('a');
          return 'a';
        }),
        db.transaction(async (tx) => {
          await tx.one(insert('half done'));
          throw new Error('refused');
        }),
        db.transaction(async (tx) => tx.one(insert('a'))), // a unique violation
        db.transaction(async (tx) => {
          await tx.one(insert('b'));
          await gate; // holds the group open: a's answer waits for the group's commit
          return 'b';
        }),
      ]);
      let settled = false;
      void all.then(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      // a's work is done, but it is not answered, nor visible elsewhere, before the commit.
      expect(answered).toEqual(['a']);
      expect(settled).toBe(false);
      expect(await committed()).toEqual([]);
      open();
      const outcomes = await all;
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
      expect(outcomes[1]).toMatchObject({ reason: { message: 'refused' } });
      expect(outcomes[2]).toMatchObject({ reason: { kind: 'unique' } });
      expect(await committed()).toEqual(['a', 'b']);
      // Alone, a transaction commits by itself.
      expect(await db.transaction(async (tx) => Number((await tx.one(insert('c')))?.id))).toBe(3);
      expect(await committed()).toEqual(['a', 'b', 'c']);
    } finally {
      await db.close();
    }
  });
});
