import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/store/open-database.js';
import { upgradeSystemTables } from '../src/store/system-migrations.js';
import { WebhookStore } from '../src/store/webhook-store.js';
import type { SqlDatabase } from '../src/store/sql-database.js';
import { tempDir } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

/**
 * Claiming due deliveries when the database's answer is lost: the claim may have committed (the
 * deliveries are leased) though the process saw an error, as when the connection drops during
 * COMMIT. The process claims them again at once by naming the leases it could not confirm, instead
 * of leaving them leased, and their endpoints' queues stuck, until the leases end; other leases
 * (another instance's) are left alone.
 */

let testDb: TestDatabase;
let dir: ReturnType<typeof tempDir>;
let db: SqlDatabase;
let store: WebhookStore;

beforeEach(async () => {
  dir = tempDir();
  testDb = await createTestDatabase(dir.path);
  db = (await openDatabase(testDb.url)).db;
  await upgradeSystemTables(db);
  store = new WebhookStore(db);
});
afterEach(async () => {
  await db.close();
  await testDb.drop();
  dir.cleanup();
});

const NOW = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-01T00:00:15.000Z';

async function pendingDeliveries(count: number): Promise<void> {
  for (let n = 1; n <= count; n++) {
    const hook = await store.create({ url: `https://hooks.example.com/${n}`, events: ['user.created'], description: null, secret: 'whsec_test' }, NOW);
    await db.transaction((tx) =>
      store.addDeliveries(tx, [{ webhookId: hook.id, eventId: n, eventType: 'user.created', payload: '{}', status: 'pending', attempts: 0, nextAttemptAt: NOW, createdAt: NOW }]),
    );
  }
}

describe('a claim whose outcome was lost', () => {
  it('is claimed again at once by naming its lease; a lease not named stays until it ends', async () => {
    await pendingDeliveries(2);
    const lost = `${LATER} a1`;
    const othersLease = `${LATER} b2`;
    // The first claim committed, but its answer never arrived; another instance holds the second delivery.
    const first = await store.claimDue(NOW, lost, 1);
    expect(first.map((d) => d.eventId)).toEqual([1]);
    expect((await store.claimDue(NOW, othersLease, 1)).map((d) => d.eventId)).toEqual([2]);
    // Leased: not due again before the lease ends, unless named.
    expect(await store.claimDue(NOW, `${LATER} c3`, 10)).toEqual([]);
    const again = await store.claimDue(NOW, `${LATER} d4`, 10, [lost]);
    expect(again.map((d) => d.eventId)).toEqual([1]);
    // Once the leases end, every delivery is due again.
    expect((await store.claimDue('2026-01-01T00:00:16.000Z', '2026-01-01T00:00:31.000Z e5', 10)).map((d) => d.eventId).sort()).toEqual([1, 2]);
  });
});
