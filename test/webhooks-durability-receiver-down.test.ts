import { describe, expect } from 'vitest';
import { freePort } from './helpers/cli-process.js';
import { CRASH_TEST_ENV, webhookCli } from './helpers/webhook-cli.js';
import { deliveryIdOf, signed, waitUntil, WebhookReceiver, type WebhookBody } from './helpers/webhook-receiver.js';

/**
 * Webhook deliveries survive what a server lives through: `restgraph serve` (a child process)
 * killed with SIGKILL while its receiver is down, with deliveries pending, being retried, and
 * events not yet turned into deliveries; once restarted (and the receiver up) every event is
 * delivered at least once, signed, in order, with exactly one delivery per event. (The other
 * crash tests: webhooks-durability-cut-short.test.ts, webhooks-durability-1000-writes.test.ts.)
 */

// Each test has its own folder, database, servers and receivers.
const it = webhookCli('restgraph-webhooks-cli-', CRASH_TEST_ENV);

describe.concurrent('kill -9 with the receiver down, then a restart with it up', () => {
  it('every event is delivered at least once, signed and in order, with one delivery per event', async ({ cli }) => {
    const { receivers, serve, call, deliveries, outbox, kill, allSucceeded } = cli;
    const receiverPort = await freePort(); // nothing listens there yet: the receiver is down
    const first = await serve();
    const created = await call(first.base, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:${receiverPort}/hook`, events: ['*'] });
    expect(created.status).toBe(201);
    const webhook = created.json as WebhookBody & { secret: string };

    // Batch A: writes whose deliveries are attempted (and fail) before the crash.
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await call(first.base, 'POST', '/users', { name: `Before ${i}` });
      expect(response.status).toBe(201);
      ids.push((response.json as { id: number }).id);
    }
    expect((await call(first.base, 'PATCH', `/users/${ids[0] ?? 0}`, { name: 'Renamed' })).status).toBe(200);
    expect((await call(first.base, 'DELETE', `/users/${ids[1] ?? 0}`)).status).toBe(204);
    await waitUntil(async () => {
      const ds = await deliveries(first.base, webhook.id);
      return ds.length === 7 && (ds[ds.length - 1]?.attempts ?? 0) >= 1;
    }, 'the oldest delivery to have failed once');
    const before = await deliveries(first.base, webhook.id);
    const oldest = before[before.length - 1];
    expect(oldest?.status).toBe('pending');
    expect(oldest?.attemptLog[0]).toMatchObject({ responseStatus: null, error: expect.any(String) as string });

    // Batch B: writes acknowledged just before the crash (their deliveries may not exist yet).
    for (let i = 0; i < 5; i++) expect((await call(first.base, 'POST', '/users', { name: `Last ${i}` })).status).toBe(201);
    await kill(first.running);

    const receiver = await WebhookReceiver.start(receiverPort);
    receivers.push(receiver);
    receiver.verifyWith('/hook', webhook.secret);
    const events = await outbox();
    expect(events).toHaveLength(12);

    const second = await serve();
    const last = await allSucceeded(second.base, webhook.id, events.length);

    // Exactly one delivery per event, for every event in the outbox.
    expect(last.map((d) => d.eventId).sort((a, b) => a - b)).toEqual(events.map((e) => e.id));
    expect(last.map((d) => d.eventType).reverse()).toEqual(events.map((e) => e.type));
    const eventOf = new Map(last.map((d) => [d.id, d.eventId]));

    // Each event reached the receiver (at least once), every request verified, in event order.
    const requests = receiver.to('/hook');
    for (const request of requests) signed(request);
    const seen = requests.map((r) => eventOf.get(deliveryIdOf(r)) ?? -1);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect([...new Set(requests.filter((r) => r.answered === 200).map((r) => eventOf.get(deliveryIdOf(r))))]).toEqual(events.map((e) => e.id));
    // What was delivered is what happened: the type and the record of each event.
    const byEvent = new Map(requests.map((r) => [eventOf.get(deliveryIdOf(r)), signed(r)]));
    for (const event of events) expect([event.id, byEvent.get(event.id)?.type, byEvent.get(event.id)?.data.object.id]).toEqual([event.id, event.type, event.recordId]);
  }, 90_000);
});
