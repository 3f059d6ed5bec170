import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { actAsAdmin, captureLogs, discardLogs, json, tempDir, TEST_ADMIN_TOKEN } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from './helpers/test-database.js';

/**
 * Passing trouble in the database (here: a row lock held elsewhere for longer than the lock
 * timeout) is a 503 the client may retry, with Retry-After, never a 500; nothing is changed, and
 * the same request succeeds once the trouble is gone. PostgreSQL only (its lock_timeout).
 */

let dir: ReturnType<typeof tempDir>;
let database: TestDatabase;

beforeEach(async () => {
  dir = tempDir('restgraph-trouble-');
  database = await createTestDatabase(dir.path);
});
afterEach(async () => {
  await database.drop();
  dir.cleanup();
});

describe.skipIf(TEST_DIALECT !== 'postgres')('a row locked elsewhere beyond the lock timeout', () => {
  it('PATCH → 503 service-unavailable with Retry-After: 1 and nothing changed; the same PATCH succeeds once the lock is released', async () => {
    // The URL's options (search_path) get a lock timeout of 200 ms.
    const app = actAsAdmin(
      await buildApp({ databaseUrl: `${database.url}${encodeURIComponent(' -c lock_timeout=200')}`, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN }),
    );
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      const created = await app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } });
      expect(created.statusCode).toBe(201);
      await other.query('begin');
      await other.query('select * from "users" where "id" = 1 for update');

      const refused = await app.inject({ method: 'PATCH', url: '/users/1', payload: { name: 'Grace' } });
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(json<{ code: string }>(refused).code).toBe('service-unavailable');

      await other.query('rollback');
      expect(json<{ name: string }>(await app.inject({ method: 'GET', url: '/users/1' })).name).toBe('Ada');
      const retried = await app.inject({ method: 'PATCH', url: '/users/1', payload: { name: 'Grace' } });
      expect(retried.statusCode).toBe(200);
      expect(json<{ name: string }>(retried).name).toBe('Grace');
    } finally {
      await other.end();
      await app.close();
    }
  });
});

describe('a failure nothing anticipated (a table dropped under the running server)', () => {
  it('REST and GraphQL answer 500 without internals, and the log has the error with the request id', async () => {
    const { logs, logDestination } = captureLogs();
    const app = actAsAdmin(await buildApp({ databaseUrl: database.url, logDestination, adminToken: TEST_ADMIN_TOKEN }));
    try {
      await database.run('ALTER TABLE "products" RENAME TO "products_elsewhere"');

      const rest = await app.inject({ method: 'GET', url: '/products', headers: { 'x-request-id': 'broken-rest' } });
      expect(rest.statusCode).toBe(500);
      expect(rest.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(rest.body).not.toMatch(/products_elsewhere|no such table|does not exist|SELECT/i);

      const graphql = await app.inject({ method: 'POST', url: '/graphql', headers: { 'x-request-id': 'broken-graphql' }, payload: { query: '{ products { id } }' } });
      expect(graphql.body).not.toMatch(/products_elsewhere|no such table|does not exist|SELECT/i);

      await new Promise<void>((resolve) => app.flushLogs(resolve));
      const failure = logs.find((l) => l.msg === 'request failed' && l.requestId === 'broken-rest');
      expect(failure, JSON.stringify(logs.filter((l) => l.level !== 30))).toMatchObject({ level: 50, err: { message: expect.stringMatching(/products/) as unknown } });
    } finally {
      await app.close();
    }
  });
});
