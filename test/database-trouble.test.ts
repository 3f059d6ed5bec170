import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { actAsAdmin, discardLogs, json, tempDir, TEST_ADMIN_TOKEN } from './helpers/test-app.js';
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
