import { describe, expect, it } from 'vitest';
import type { WebhookOptions } from '../src/webhooks/webhook-service.js';
import type { TestApp } from './helpers/test-app.js';
import { closedAfterEachTest, createWebhook, waitForDeliveries, type WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * A server stalled for a while (a long garbage collection, a slow fsync, a loaded machine) sends
 * no delivery twice: an answer that reached it within timeoutMs counts (the attempt's timeout is
 * judged once what has arrived is read), and a delivery whose lease ended while its attempt was
 * under way is not claimed and sent again by the same process. (Each, under load, made
 * test/webhooks-durability-1000-writes.test.ts see a duplicate beyond the one of the attempt
 * kill -9 cuts short: the first seen was a delivery answered in under 700 ms, recorded as "no
 * complete response within 1000 ms" after 1,581 ms, and retried.)
 */

const started = closedAfterEachTest();

/** Keeps this process busy (the server and the receiver run in it): nothing else runs meanwhile. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: no timer, no I/O is handled
  }
}

/**
 * An app with an endpoint for user.created whose receiver answers 200 at once; after its first
 * answer (on its way: written once this turn ends) the whole process stalls for `stallMs`, before
 * the server can read that answer. Then a user is created.
 */
async function stalledAfterFirstAnswer(webhooks: Partial<WebhookOptions>, stallMs: number): Promise<{ t: TestApp; receiver: WebhookReceiver; id: number }> {
  const receiver = await started.receiver();
  const t = await started.app({ webhooks: { allowHosts: ['127.0.0.1'], retryScheduleSeconds: [0.1], ...webhooks } });
  const webhook = await createWebhook(t.app, { url: receiver.url('/busy'), events: ['user.created'] });
  receiver.verifyWith('/busy', webhook.secret);
  receiver.respond('/busy', (res, attempt) => {
    res.writeHead(200);
    res.end('ok');
    if (attempt === 1) setImmediate(() => busyFor(stallMs));
  });
  expect((await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Busy' } })).statusCode).toBe(201);
  return { t, receiver, id: webhook.id };
}

describe('a server too busy to read an answer at once', () => {
  it('the receiver answers 200 at once, then the process is busy for twice timeoutMs: one attempt, succeeded, sent once', async () => {
    const timeoutMs = 300;
    const { t, receiver, id } = await stalledAfterFirstAnswer({ pollIntervalMs: 50, timeoutMs }, 2 * timeoutMs);
    const [delivery] = await waitForDeliveries(t.app, id, (ds) => ds.length === 1 && ds[0]?.status !== 'pending', 'the delivery to be settled');
    expect(delivery?.attemptLog.map((a) => ({ responseStatus: a.responseStatus, error: a.error }))).toEqual([{ responseStatus: 200, error: null }]);
    expect(delivery?.status).toBe('succeeded');
    expect(receiver.to('/busy').map((r) => r.answered)).toEqual([200]);
  });

  it('the process is busy past the delivery\'s lease while its attempt is under way: the delivery is not claimed and sent again meanwhile', async () => {
    // Past the lease (timeoutMs + leaseMarginMs from the claim), the next look for due deliveries
    // (every pollIntervalMs) finds this one's lease ended before the attempt has recorded its outcome.
    const [timeoutMs, leaseMarginMs] = [300, 100];
    const { t, receiver, id } = await stalledAfterFirstAnswer({ pollIntervalMs: timeoutMs, timeoutMs, leaseMarginMs }, 2 * (timeoutMs + leaseMarginMs));
    await waitForDeliveries(t.app, id, (ds) => ds[0]?.status === 'succeeded', 'the first delivery to succeed');
    // A later event (made after the stall, so that nothing else looks for due deliveries then): once
    // its delivery is settled, the first one's attempts are over too.
    expect((await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'After' } })).statusCode).toBe(201);

    const deliveries = await waitForDeliveries(t.app, id, (ds) => ds.length === 2 && ds.every((d) => d.status !== 'pending'), 'both deliveries to be settled');
    expect(deliveries.map((d) => d.attemptLog.map((a) => a.responseStatus ?? a.error))).toEqual([[200], [200]]);
    expect(receiver.to('/busy').map((r) => r.headers['webhook-id'])).toEqual(deliveries.map((d) => `msg_${d.id}`).reverse());
  });
});
