import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT, TEST_POSTGRES_URL } from './helpers/test-database.js';

/**
 * A test's PostgreSQL schema is dropped even when a session left behind still works in it — the
 * server side of a connection whose process a test killed runs its transaction until it next
 * talks to its client: a drop that deadlocks with it, or waits on its locks, tries again.
 */

const dir = tempDir('restgraph-drop-');
afterAll(() => dir.cleanup());

/** Whether the schema of a test database's URL is still there. */
async function schemaExists(url: string): Promise<boolean> {
  const schema = /search_path%3D(rg_t_\w+)/.exec(url)?.[1];
  expect(schema).toBeDefined();
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    return (await client.query('select 1 from pg_namespace where nspname = $1', [schema])).rowCount === 1;
  } finally {
    await client.end();
  }
}

describe.skipIf(TEST_DIALECT !== 'postgres')('dropping a test database (PostgreSQL)', () => {
  it('a drop that deadlocks with a transaction left in the schema is tried again, and the schema goes', { timeout: 30_000 }, async () => {
    const db = await createTestDatabase(dir.path);
    await db.run('create table "a" ("id" integer primary key)');
    await db.run('create table "b" ("id" integer primary key, "a" integer references "a" ("id"))');
    const leftover = new pg.Client({ connectionString: db.url });
    leftover.on('error', () => undefined);
    await leftover.connect();
    try {
      // Holds b, then (once the drop waits on it) asks for a, which the drop locks first.
      await leftover.query('begin');
      await leftover.query('lock table "b" in row exclusive mode');
      const dropping = db.drop();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = leftover.query('lock table "a" in access exclusive mode').catch((error: unknown) => error);
      await dropping;
      await second;
      expect(await schemaExists(db.url)).toBe(false);
    } finally {
      await leftover.end().catch(() => undefined);
    }
  });

  it('a session idle in a transaction that holds a table of the schema does not stop the drop', { timeout: 60_000 }, async () => {
    const db = await createTestDatabase(dir.path);
    await db.run('create table "a" ("id" integer primary key)');
    const leftover = new pg.Client({ connectionString: db.url });
    leftover.on('error', () => undefined);
    await leftover.connect();
    try {
      await leftover.query('begin');
      await leftover.query('insert into "a" values (1)');
      await db.drop();
      expect(await schemaExists(db.url)).toBe(false);
    } finally {
      await leftover.end().catch(() => undefined);
    }
  });
});
