import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../src/store/event-store.js';
import { openDatabase } from '../src/store/open-database.js';
import { tempDir } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from './helpers/test-database.js';

/**
 * Wake-ups between instances (PostgreSQL LISTEN/NOTIFY) reach the instances of the same
 * restgraph database only. Two deployments may share one PostgreSQL database, each in a schema
 * of its own (search_path): a write in one must not make the other read its outbox.
 */
describe.skipIf(TEST_DIALECT !== 'postgres')('event signals between instances', () => {
  const dir = tempDir();
  let first: TestDatabase;
  let second: TestDatabase;
  beforeAll(async () => {
    first = await createTestDatabase(dir.path, 'first');
    second = await createTestDatabase(dir.path, 'second');
  });
  afterAll(async () => {
    await first.drop();
    await second.drop();
    dir.cleanup();
  });

  /** An instance's event store, with the number of wake-ups it has heard. */
  async function instance(url: string) {
    const { db } = await openDatabase(url);
    const store = new EventStore(db);
    const heard = { count: 0 };
    await store.watch(() => heard.count++);
    return { store, heard, close: () => db.close() };
  }

  it('reach the other instances of the same database, and not those of another schema', async () => {
    const writer = await instance(first.url);
    const sibling = await instance(first.url);
    const stranger = await instance(second.url);
    try {
      writer.store.announce();
      await expect.poll(() => sibling.heard.count, { timeout: 5000 }).toBe(1);
      stranger.store.announce();
      sibling.store.announce();
      await expect.poll(() => writer.heard.count, { timeout: 5000 }).toBe(1);
      // Time for a stray signal to arrive as well (those above took a few milliseconds).
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(stranger.heard.count).toBe(0);
      expect(writer.heard.count).toBe(1);
      expect(sibling.heard.count).toBe(1);
    } finally {
      await writer.close();
      await sibling.close();
      await stranger.close();
    }
  });
});
