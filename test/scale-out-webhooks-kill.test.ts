import { describe, expect } from 'vitest';
import { create, distinct, pool, scaleOutTest, webhookTrio } from './helpers/scale-out.js';
import { must } from './helpers/subscription-clients.js';
import { TEST_DIALECT } from './helpers/test-database.js';
import { signed } from './helpers/webhook-receiver.js';

/**
 * Webhook deliveries shared between several `restgraph serve` processes on one PostgreSQL database
 * survive one of them being killed while they go out: every event arrives, at least once. (Each
 * once while none dies: scale-out-webhooks.test.ts.)
 *
 * PostgreSQL only: SQLite serves one machine.
 */

const it = scaleOutTest;

describe.skipIf(TEST_DIALECT !== 'postgres')('three instances on one PostgreSQL database', () => {
  it('an instance killed while deliveries go out: every event still reaches the receiver, at least once', async ({ cluster }) => {
    const { hooks, trio } = await webhookTrio(cluster);
    const [a, b, c] = trio;
    // 100 through all three, then B is killed while their deliveries are going out, and 200 more
    // go through A and C.
    await pool(100, 8, async (i) => {
      await create(must(trio[i % 3]).base, `Event #${i}`);
    });
    b.running.child.kill('SIGKILL');
    expect(await b.running.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const survivors = [a, c];
    await pool(200, 8, async (i) => {
      await create(must(survivors[i % 2]).base, `Event #${100 + i}`);
    });
    await hooks.waitFor((r) => distinct(r.to('/hook')).ids.size >= 300, 'all 300 events delivered', 90_000);
    const all = distinct(hooks.to('/hook'));
    expect(all.ids.size).toBe(300);
    // At-least-once: an attempt the kill cut short may be made again by another instance.
    console.log(`scale-out webhooks, an instance killed: 300 events, ${hooks.to('/hook').length} requests, ${all.duplicates} duplicate(s)`);
    expect(all.duplicates).toBeLessThanOrEqual(20);
    const names = new Set(hooks.to('/hook').map((r) => String(signed(r).data.object.name)));
    expect(names.size).toBe(300);
  }, 120_000);
});
