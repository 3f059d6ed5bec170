import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { createWebhook, waitForDeliveries, WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * An answer that reached the server within timeoutMs counts, even when the server was too busy to
 * read it at once (a long garbage collection, a slow fsync, a loaded machine): the attempt's
 * timeout is judged once what has arrived is read, not taken for a failure and sent again.
 * (test/webhooks-durability-1000-writes.test.ts once saw a second duplicate after kill -9: a
 * delivery answered in under 700 ms, recorded as "no complete response within 1000 ms" after
 * 1,581 ms, and retried.)
 */

let apps: TestApp[] = [];
let receivers: WebhookReceiver[] = [];

afterEach(async () => {
  for (const receiver of receivers) await receiver.close();
  for (const t of apps) await t.close();
  receivers = [];
  apps = [];
});

/** Keeps this process busy (the server and the receiver run in it): nothing else runs meanwhile. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: no timer, no I/O is handled
  }
}

describe('a server too busy to read an answer at once', () => {
  it('the receiver answers 200 at once, then the process is busy for twice timeoutMs: one attempt, succeeded, sent once', async () => {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const timeoutMs = 300;
    const t = await startTestApp({ webhooks: { allowHosts: ['127.0.0.1'], pollIntervalMs: 50, retryScheduleSeconds: [0.1], timeoutMs } });
    apps.push(t);
    const webhook = await createWebhook(t.app, { url: receiver.url('/busy'), events: ['user.created'] });
    receiver.verifyWith('/busy', webhook.secret);
    receiver.respond('/busy', (res, attempt) => {
      res.writeHead(200);
      res.end('ok');
      // The answer is on its way (written once this turn ends); then the whole process stalls
      // past the attempt's deadline before the server can read it.
      if (attempt === 1) setImmediate(() => busyFor(2 * timeoutMs));
    });
    expect((await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Busy' } })).statusCode).toBe(201);

    const [delivery] = await waitForDeliveries(t.app, webhook.id, (ds) => ds.length === 1 && ds[0]?.status !== 'pending', 'the delivery to be settled');
    expect(delivery?.attemptLog.map((a) => ({ responseStatus: a.responseStatus, error: a.error }))).toEqual([{ responseStatus: 200, error: null }]);
    expect(delivery?.status).toBe('succeeded');
    expect(receiver.to('/busy').map((r) => r.answered)).toEqual([200]);
  });
});
