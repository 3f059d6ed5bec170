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

describe('recording an outcome and claiming the endpoint\'s next delivery in one transaction', () => {
  const attempt = { attemptedAt: NOW, durationMs: 1, responseStatus: 200, error: null };
  const succeeded = { status: 'succeeded' as const, nextAttemptAt: NOW };

  /** An endpoint with a pending delivery for each event, due now unless `dueAt` says when. */
  async function queue(events: number[], dueAt: Record<number, string> = {}): Promise<number> {
    const hook = await store.create({ url: 'https://hooks.example.com/q', events: ['user.created'], description: null, secret: 'whsec_test' }, NOW);
    await db.transaction((tx) =>
      store.addDeliveries(
        tx,
        events.map((eventId) => ({ webhookId: hook.id, eventId, eventType: 'user.created', payload: '{}', status: 'pending' as const, attempts: 0, nextAttemptAt: dueAt[eventId] ?? NOW, createdAt: NOW })),
      ),
    );
    return hook.id;
  }

  it('claims the next pending delivery of the same endpoint, leased, when it is due; another endpoint\'s are left to claimDue', async () => {
    await queue([1, 2, 3]);
    const other = await queue([4]);
    const [first] = await store.claimDue(NOW, `${LATER} a1`, 1);
    expect(first?.eventId).toBe(1);
    const next = await store.recordAttempt(must(first), attempt, succeeded, { now: NOW, leaseUntil: `${LATER} b2` });
    expect(next?.eventId).toBe(2);
    // Leased by that claim: not claimed again, and the other endpoint's head is still there to claim.
    expect((await store.claimDue(NOW, `${LATER} c3`, 10)).map((d) => [d.webhookId, d.eventId])).toEqual([[other, 4]]);
    const third = await store.recordAttempt(must(next), attempt, succeeded, { now: NOW, leaseUntil: `${LATER} d4` });
    expect(third?.eventId).toBe(3);
    expect(await store.recordAttempt(must(third), attempt, succeeded, { now: NOW, leaseUntil: `${LATER} e5` })).toBeUndefined();
    const rows = await db.all(db.builder.selectFrom('_restgraph_webhook_deliveries').select(['eventId', 'status', 'leaseUntil']).orderBy('eventId').compile());
    expect(rows.map((r) => [Number(r.eventId), r.status, r.leaseUntil])).toEqual([
      [1, 'succeeded', null],
      [2, 'succeeded', null],
      [3, 'succeeded', null],
      [4, 'pending', `${LATER} c3`],
    ]);
  });

  it('claims nothing when the next delivery is not due yet, is leased by another claim (unless named as an unconfirmed lease), or its endpoint is paused', async () => {
    await queue([1, 2], { 2: LATER });
    await queue([3, 4]);
    await queue([5, 6]);
    const paused = await queue([7, 8]);
    const heads = new Map((await store.claimDue(NOW, `${LATER} a1`, 10)).map((d) => [d.eventId, d]));
    expect([...heads.keys()].sort()).toEqual([1, 3, 5, 7]);
    const leaseOf = async (eventId: number): Promise<unknown> =>
      (await db.all(db.builder.selectFrom('_restgraph_webhook_deliveries').select('leaseUntil').where('eventId', '=', eventId).compile()))[0]?.leaseUntil;
    const lease = (eventId: number, leaseUntil: string): Promise<number> =>
      db.run(db.builder.updateTable('_restgraph_webhook_deliveries').set({ leaseUntil }).where('eventId', '=', eventId).compile());

    // 2 is not due until LATER.
    expect(await store.recordAttempt(must(heads.get(1)), attempt, succeeded, { now: NOW, leaseUntil: `${LATER} b1` })).toBeUndefined();
    expect(await leaseOf(2)).toBeNull();
    // 4 is leased by another claim.
    await lease(4, `${LATER} other`);
    expect(await store.recordAttempt(must(heads.get(3)), attempt, succeeded, { now: NOW, leaseUntil: `${LATER} b3` })).toBeUndefined();
    expect(await leaseOf(4)).toBe(`${LATER} other`);
    // 6 is leased by a claim of this claimer's that was never confirmed, named: taken back.
    await lease(6, `${LATER} lost`);
    const sixth = await store.recordAttempt(must(heads.get(5)), attempt, succeeded, { now: NOW, leaseUntil: `${LATER} b5`, unconfirmed: [`${LATER} lost`] });
    expect(sixth?.eventId).toBe(6);
    expect(await leaseOf(6)).toBe(`${LATER} b5`);
    // 8's endpoint is paused.
    await store.update(paused, { status: 'paused' }, NOW);
    expect(await store.recordAttempt(must(heads.get(7)), attempt, succeeded, { now: NOW, leaseUntil: `${LATER} b7` })).toBeUndefined();
    expect(await leaseOf(8)).toBeNull();
  });
});

function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('missing value');
  return value;
}
