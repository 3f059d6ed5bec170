import { describe, expect } from 'vitest';
import { create, distinct, pool, scaleOutTest, webhookTrio } from './helpers/scale-out.js';
import { must } from './helpers/subscription-clients.js';
import { TEST_DIALECT } from './helpers/test-database.js';
import { signed } from './helpers/webhook-receiver.js';

/**
 * Webhook deliveries are shared between several `restgraph serve` processes on one PostgreSQL
 * database, each made once (row locks with SKIP LOCKED). (An instance killed while they go out:
 * scale-out-webhooks-kill.test.ts; the other scale-out files: scale-out.test.ts,
 * scale-out-commit-order.test.ts.)
 *
 * PostgreSQL only: SQLite serves one machine.
 */

const it = scaleOutTest;

describe.skipIf(TEST_DIALECT !== 'postgres')('three instances on one PostgreSQL database', () => {
  it('1,000 webhook events written through three instances reach the receiver once each', async ({ cluster }) => {
    const { hooks, trio } = await webhookTrio(cluster);
    await pool(1000, 16, async (i) => {
      await create(must(trio[i % 3]).base, `Event #${i}`);
    });
    await hooks.waitFor((r) => distinct(r.to('/hook')).ids.size >= 1000, '1,000 distinct deliveries', 60_000);
    // Long enough for a second delivery of any of them to arrive.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const all = distinct(hooks.to('/hook'));
    expect(all.ids.size).toBe(1000);
    expect(all.duplicates).toBe(0);
    const names = new Set(hooks.to('/hook').map((r) => String(signed(r).data.object.name)));
    expect(names.size).toBe(1000);
  }, 120_000);
});
