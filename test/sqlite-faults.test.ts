import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/store/open-database.js';
import { killAll, type Running } from './helpers/cli-process.js';
import { holdWriteLock } from './helpers/sqlite-lock-holder.js';
import { json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { onlyOnSqlite } from './helpers/test-database.js';

/**
 * What a SQLite file can do to a running server: another process holds its write lock (a CLI
 * command, a backup), or it cannot be written (read-only, full, failing). The event loop never
 * waits on the lock; writes answer 503 database-unavailable once their bound is past; reads,
 * /healthz and the rest go on; everything works again once the trouble is gone.
 */

interface Problem {
  code: string;
  status: number;
}

let children: Running[] = [];
let testApp: TestApp | undefined;
const cleanups: (() => void)[] = [];

afterEach(async () => {
  await killAll(children);
  children = [];
  for (const cleanup of cleanups.splice(0)) cleanup();
  await testApp?.close();
  testApp = undefined;
});

describe.skipIf(onlyOnSqlite)('another process holds the SQLite write lock', () => {
  it('/healthz, reads and /readyz answer while a write waits for the lock; the write answers 503 database-unavailable after the bound (1 s), and writes succeed once the lock is free', async () => {
    testApp = await startTestApp({ database: { sqliteLockTimeoutMs: 1000 } });
    const { app, db } = testApp;
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } })).statusCode).toBe(201);
    const holder = await holdWriteLock(db.file ?? '', children);

    let writeSettled = false;
    const started = performance.now();
    const create = app.inject({ method: 'POST', url: '/users', payload: { name: 'Grace' } }).finally(() => (writeSettled = true));
    const patch = app.inject({ method: 'PATCH', url: '/users/1', payload: { name: 'Ada L.' } });
    // Structural: were the event loop waiting on the lock, nothing else would be answered before the write.
    const health = await app.inject({ method: 'GET', url: '/healthz' });
    const read = await app.inject({ method: 'GET', url: '/users/1' });
    const graphqlRead = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ user(id: "1") { name } }' } });
    expect(writeSettled).toBe(false);
    expect(health.statusCode).toBe(200);
    expect(json<{ name: string }>(read).name).toBe('Ada');
    expect(graphqlRead.json()).toEqual({ data: { user: { name: 'Ada' } } });

    const refused = await create;
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(refused.headers['retry-after']).toBe('5');
    expect(json<Problem>(refused).code).toBe('database-unavailable');
    expect(json<Problem>(await patch).code).toBe('database-unavailable');
    const graphqlWrite = await app.inject({ method: 'POST', url: '/graphql', payload: { query: 'mutation { createUser(input: { name: "Lin" }) { id } }' } });
    expect(graphqlWrite.json()).toMatchObject({ errors: [{ extensions: { code: 'database-unavailable', status: 503, retryAfter: 5 } }] });
    // Writes have failed and the lock is still held: not ready, and the probe does not wait for the lock.
    const notReady = await app.inject({ method: 'GET', url: '/readyz' });
    expect(notReady.statusCode).toBe(503);
    expect(json<Problem>(notReady).code).toBe('database-unavailable');

    await holder.release();
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Grace' } })).statusCode).toBe(201);
    expect(json<{ name: string }>(await app.inject({ method: 'PATCH', url: '/users/1', payload: { name: 'Ada L.' } })).name).toBe('Ada L.');
    const names = json<{ name: string }[]>(await app.inject({ method: 'GET', url: '/users?sort=id' })).map((u) => u.name);
    expect(names).toEqual(['Ada L.', 'Grace']);
  });

  it('/readyz does not queue behind writes waiting for the lock: once writes have failed, it answers 503 while the next write still waits', async () => {
    testApp = await startTestApp({ database: { sqliteLockTimeoutMs: 1000 } });
    const { app, db } = testApp;
    const holder = await holdWriteLock(db.file ?? '', children);
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } })).statusCode).toBe(503);
    // Another write now waits for the lock (up to the bound), holding this process's writer.
    let writeSettled = false;
    const waiting = app.inject({ method: 'POST', url: '/users', payload: { name: 'Grace' } }).finally(() => (writeSettled = true));
    await new Promise((resolve) => setTimeout(resolve, 200)); // (it is waiting then: the bound is 1 s)
    const probe = await app.inject({ method: 'GET', url: '/readyz' });
    expect(writeSettled).toBe(false);
    expect(probe.statusCode).toBe(503);
    expect(json<Problem>(probe).code).toBe('database-unavailable');
    expect((await waiting).statusCode).toBe(503);
    await holder.release();
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('a write that finds the lock taken succeeds as soon as it is released within the bound', async () => {
    testApp = await startTestApp({ database: { sqliteLockTimeoutMs: 10_000 } });
    const { app, db } = testApp;
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } })).statusCode).toBe(201);
    const holder = await holdWriteLock(db.file ?? '', children);
    const create = app.inject({ method: 'POST', url: '/users', payload: { name: 'Grace' } });
    const patch = app.inject({ method: 'PATCH', url: '/users/1', payload: { name: 'Ada L.' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await holder.release();
    expect((await create).statusCode).toBe(201);
    expect((await patch).statusCode).toBe(200);
  });
});

/** Whether this machine can make a file immutable (root, chattr, a file system with the attribute). */
function canMakeImmutable(): boolean {
  if (process.getuid?.() !== 0) return false;
  const dir = tempDir('restgraph-chattr-');
  const probe = join(dir.path, 'probe');
  writeFileSync(probe, 'x');
  try {
    execFileSync('chattr', ['+i', probe], { stdio: 'ignore' });
    execFileSync('chattr', ['-i', probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    dir.cleanup();
  }
}

// A read-only file for a process that already has it open: chmod changes nothing then (permissions
// are checked at open), but an immutable file refuses every write, which is what a file system
// remounted read-only does. Making a file immutable needs root (and chattr): elsewhere this is skipped.
// The -shm file stays writable: SQLite maps it in memory, and a write to an immutable mapping is a
// SIGBUS that no program survives.
describe.skipIf(onlyOnSqlite || !canMakeImmutable())('the SQLite file cannot be written (made immutable, as a read-only remount would)', () => {
  it('writes answer 503 database-unavailable and /readyz 503, reads and /healthz 200; all is well again once it can be written', async () => {
    testApp = await startTestApp();
    const { app, db } = testApp;
    const file = db.file ?? '';
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } })).statusCode).toBe(201);
    const files = [file, `${file}-wal`];
    execFileSync('chattr', ['+i', ...files]);
    cleanups.push(() => execFileSync('chattr', ['-i', ...files]));

    const refused = await app.inject({ method: 'POST', url: '/users', payload: { name: 'Grace' } });
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(json<Problem>(refused).code).toBe('database-unavailable');
    expect(json<Problem>(await app.inject({ method: 'PATCH', url: '/users/1', payload: { name: 'Ada L.' } })).code).toBe('database-unavailable');
    expect(json<Problem>(await app.inject({ method: 'GET', url: '/readyz' })).code).toBe('database-unavailable');
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect(json<{ name: string }[]>(await app.inject({ method: 'GET', url: '/users' })).map((u) => u.name)).toEqual(['Ada']);

    execFileSync('chattr', ['-i', ...files]);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Grace' } })).statusCode).toBe(201);
    expect(json<{ name: string }[]>(await app.inject({ method: 'GET', url: '/users?sort=id' })).map((u) => u.name)).toEqual(['Ada', 'Grace']);
  });
});

describe.skipIf(onlyOnSqlite)('durability of SQLite commits (PRAGMA synchronous, read back from the connection that writes)', () => {
  const synchronousOf = async (options: Parameters<typeof openDatabase>[1]): Promise<number> => {
    const dir = tempDir('restgraph-sync-');
    cleanups.push(() => dir.cleanup());
    const { db } = await openDatabase(`sqlite:${join(dir.path, 'sync.db')}`, options);
    try {
      const rows = await db.transaction((tx) => tx.all({ sql: 'pragma synchronous', parameters: [] }));
      return Number(rows[0]?.synchronous);
    } finally {
      await db.close();
    }
  };

  it('FULL (2) by default; NORMAL (1) when asked', async () => {
    expect(await synchronousOf({})).toBe(2);
    expect(await synchronousOf({ sqlite: { synchronous: 'FULL' } })).toBe(2);
    expect(await synchronousOf({ sqlite: { synchronous: 'NORMAL' } })).toBe(1);
  });
});
