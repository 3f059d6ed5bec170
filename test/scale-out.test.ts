import { afterAll, describe, expect } from 'vitest';
import { freePort, waitReady } from './helpers/cli-process.js';
import { ADMIN, eventsUrl, send, SseReader } from './helpers/event-stream.js';
import { create, newCluster, pool, scaleOutTest, type Cluster, type Instance } from './helpers/scale-out.js';
import { must, wsClient } from './helpers/subscription-clients.js';
import { TEST_DIALECT } from './helpers/test-database.js';
import { waitUntil } from './helpers/webhook-receiver.js';

/**
 * Several `restgraph serve` processes on one PostgreSQL database behave as one service: they start
 * together on an empty database, a stream or subscription on one instance gets the changes made
 * through any other (LISTEN/NOTIFY wakes it, the outbox is the source of truth), and an
 * Idempotency-Key holds across instances. (Webhook deliveries shared between instances:
 * scale-out-webhooks.test.ts and, with one killed, scale-out-webhooks-kill.test.ts; events
 * committed out of id order: scale-out-commit-order.test.ts.)
 *
 * PostgreSQL only: SQLite serves one machine.
 */

// The tests run concurrently. The first has its own folder and database; the others share three
// instances on another (each writes and checks rows of its own: users named for the test).
const it = scaleOutTest;

let shared: Promise<{ cluster: Cluster; close: () => Promise<void>; trio: Instance[] }> | undefined;
/** Three instances on a database of their own, started once for the tests that share them. */
async function sharedTrio(): Promise<{ trio: Instance[]; database: Cluster['database'] }> {
  shared ??= newCluster().then(async ({ cluster, close }) => ({ cluster, close, trio: await cluster.instances(3) }));
  const { trio, cluster } = await shared;
  return { trio, database: cluster.database };
}
afterAll(async () => {
  await (await shared)?.close();
  shared = undefined;
});

describe.skipIf(TEST_DIALECT !== 'postgres').concurrent('three instances on one PostgreSQL database', () => {
  it('instances start together on an empty database: one migrates, all serve the same data', async ({ cluster }) => {
    const { database, spawn } = cluster;
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const running = ports.map((port) => spawn(port, {}));
    await Promise.all(running.map((r, i) => waitReady(r, must(ports[i]))));
    const bases = ports.map((port) => `http://127.0.0.1:${port}`);
    const made = await create(must(bases[0]), 'Ada');
    for (const base of bases) expect((await send(base, 'GET', `/users/${made.id}`)).json()).toEqual(made);
    expect(await database.query<{ n: number }>('select count(*) as "n" from "_restgraph_migrations"')).toEqual([{ n: 1 }]);
  });

  it('a /v1/events stream on A and a subscription on B get every write made through A, B and C, exactly once and in order', async () => {
    const [a, b, c] = (await sharedTrio()).trio;
    if (a === undefined || b === undefined || c === undefined) throw new Error('three instances');
    const stream = await SseReader.open(eventsUrl(a.base, { types: 'user.created' }));
    await stream.waitFor((r) => r.comments.length > 0, 'the connected comment');
    const client = wsClient(b.base, { connectionParams: { Authorization: ADMIN } });
    const subscription = client.run<{ userCreated: { id: string; name: string } }>('subscription { userCreated { id name } }');
    try {
      // Wait until the subscription is live: a write through C reaches it.
      for (let i = 0; subscription.results.length === 0; i++) {
        if (i === 100) throw new Error(`the subscription on B never got a write through C: ${subscription.describe()}`);
        await create(c.base, `warm-up ${i}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const writers = [a, b, c];
      const names: string[] = [];
      await pool(150, 12, async (i) => {
        const name = `User ${i}`;
        names.push(name);
        await create(must(writers[i % 3]).base, name);
      });
      const ofRun = (name: unknown): boolean => typeof name === 'string' && name.startsWith('User ');
      const streamed = (): string[] => stream.events.map((e) => e.body.data.object.name).filter(ofRun) as string[];
      const subscribed = (): string[] => subscription.data.map((d) => d.userCreated.name).filter(ofRun);
      await waitUntil(
        () => streamed().length >= 150,
        () => `150 events on the stream (have ${streamed().length}; missing ${JSON.stringify(names.filter((n) => !streamed().includes(n)))}; ids ${JSON.stringify(stream.events.map((e) => e.id))}; subscription has ${subscribed().length})`,
      );
      await waitUntil(() => subscribed().length >= 150, () => `150 results of the subscription (have ${subscribed().length})`);

      // In increasing event id, each once, and every write is there.
      const ids = stream.events.map((e) => e.id);
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      expect(new Set(ids).size).toBe(ids.length);
      expect(new Set(streamed())).toEqual(new Set(names));
      // The subscription on B saw the same events, in the same order.
      expect(subscribed()).toEqual(streamed());
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(streamed()).toHaveLength(150);
      expect(subscribed()).toHaveLength(150);
    } finally {
      stream.close();
      await client.dispose();
    }
  }, 60_000);

  it('one Idempotency-Key sent to all three instances at once: one request runs, the others are 409 or replays; a later retry anywhere replays it', async () => {
    const { trio: all, database } = await sharedTrio();
    for (let round = 0; round < 5; round++) {
      const name = `Once ${round}`;
      const headers = { 'idempotency-key': `shared-${round}`, authorization: ADMIN, 'content-type': 'application/json' };
      const responses = await Promise.all(
        all.map(async (instance) => {
          const response = await fetch(`${instance.base}/users`, { method: 'POST', headers, body: JSON.stringify({ name }) });
          return { status: response.status, replayed: response.headers.get('idempotent-replayed'), body: await response.text() };
        }),
      );
      const fresh = responses.filter((r) => r.status === 201 && r.replayed === null);
      expect(fresh, JSON.stringify(responses)).toHaveLength(1);
      for (const r of responses) {
        if (r === fresh[0]) continue;
        if (r.status === 201) expect([r.replayed, r.body]).toEqual(['true', fresh[0]?.body]);
        else expect(r.status, r.body).toBe(409);
      }
      for (const instance of all) {
        const retry = await fetch(`${instance.base}/users`, { method: 'POST', headers, body: JSON.stringify({ name }) });
        expect([retry.status, retry.headers.get('idempotent-replayed'), await retry.text()]).toEqual([201, 'true', fresh[0]?.body]);
      }
      const named = await database.query<{ n: number }>('select count(*) as "n" from "users" where "name" = ?', [name]);
      expect(named).toEqual([{ n: 1 }]);
    }
  });
});
