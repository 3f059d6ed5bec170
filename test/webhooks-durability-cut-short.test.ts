import { describe, expect } from 'vitest';
import { CRASH_TEST_ENV, webhookCli } from './helpers/webhook-cli.js';
import { deliveryIdOf, signed, WebhookReceiver, type WebhookBody } from './helpers/webhook-receiver.js';

/**
 * Webhook deliveries survive a SIGKILL of `restgraph serve` (a child process) in the middle of an
 * attempt and of a burst of writes: after the restart the attempt cut short is made again once its
 * lease ends (attempt timeout + lease margin: 2 s here), with the same webhook-id, and every committed event is delivered.
 */

// Each test has its own folder, database, servers and receivers.
const it = webhookCli('restgraph-webhooks-cli-', CRASH_TEST_ENV);

describe.concurrent('kill -9 in the middle of an attempt and of a burst of writes', () => {
  it('the attempt cut short is made again after the restart (same webhook-id), and every committed event is delivered', async ({ cli }) => {
    const { receivers, serve, call, outbox, kill, allSucceeded } = cli;
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    // The first request is never answered: the server dies while it is in flight.
    receiver.respond('/hook', (res, attempt) => {
      if (attempt > 1) {
        res.writeHead(204);
        res.end();
      }
    });
    const first = await serve();
    const created = await call(first.base, 'POST', '/v1/webhooks', { url: receiver.url('/hook'), events: ['user.created'] });
    expect(created.status).toBe(201);
    const webhook = created.json as WebhookBody & { secret: string };
    receiver.verifyWith('/hook', webhook.secret);

    // 20 writes at once; the server is killed as soon as the first delivery reaches the receiver,
    // whichever writes have been acknowledged by then.
    const burst = Array.from({ length: 20 }, (_, i) => call(first.base, 'POST', '/users', { name: `Burst ${i}` }).catch(() => undefined));
    await receiver.waitFor((r) => r.to('/hook').length >= 1, 'the first delivery to arrive');
    await kill(first.running);
    await Promise.all(burst);
    const events = await outbox();
    expect(events.length).toBeGreaterThanOrEqual(1);

    const second = await serve();
    const last = await allSucceeded(second.base, webhook.id, events.length);
    expect(last.map((d) => d.eventId).sort((a, b) => a - b)).toEqual(events.map((e) => e.id));
    const eventOf = new Map(last.map((d) => [d.id, d.eventId]));
    const requests = receiver.to('/hook');
    for (const request of requests) signed(request);
    const seen = requests.map((r) => eventOf.get(deliveryIdOf(r)) ?? -1);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    // The interrupted delivery came again with the same webhook-id, and this time was answered.
    expect(requests[0]?.answered).toBeUndefined();
    expect(requests[1]?.headers['webhook-id']).toBe(requests[0]?.headers['webhook-id']);
    expect(requests[1]?.answered).toBe(204);
    expect([...new Set(requests.filter((r) => r.answered === 204).map((r) => eventOf.get(deliveryIdOf(r))))]).toEqual(events.map((e) => e.id));
  }, 90_000);
});
