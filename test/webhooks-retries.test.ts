import type { ServerResponse } from 'node:http';
import { describe, expect, test } from 'vitest';
import type { WebhookOptions } from '../src/webhooks/webhook-service.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { answer, createWebhook, deliveriesOf, deliveryIdOf, failing, getWebhook, hang, signed, waitForDeliveries, waitUntil, WebhookReceiver, type Responder } from './helpers/webhook-receiver.js';

/**
 * When receivers fail: retries on the schedule (same webhook-id, same body, every attempt
 * logged), Retry-After on 429/503, exhausted schedules (failed, then manual retry), timeouts,
 * redirects not followed, large responses cut short, endpoints disabled after failing
 * continuously (and resumed), and one slow endpoint not holding up another.
 */

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Setup = (webhooks?: Partial<WebhookOptions>) => Promise<{ t: TestApp; receiver: WebhookReceiver }>;

/**
 * `it` whose tests get `setup`: an app (on a database of its own) and a receiver, closed when the
 * test ends, after checking that every request the receiver got was signed as expected. Tests
 * share nothing: they run concurrently (most of a test is waiting for retries and timeouts).
 */
const it = test.extend<{ setup: Setup }>({
  // eslint-disable-next-line no-empty-pattern -- vitest reads the fixtures a fixture needs from this pattern
  setup: async ({}, use) => {
    const apps: TestApp[] = [];
    const receivers: WebhookReceiver[] = [];
    try {
      await use(async (webhooks = {}) => {
        const receiver = await WebhookReceiver.start();
        receivers.push(receiver);
        const t = await startTestApp({ webhooks: { allowHosts: ['127.0.0.1'], pollIntervalMs: 50, retryScheduleSeconds: [0.1, 0.1], ...webhooks } });
        apps.push(t);
        return { t, receiver };
      });
      for (const receiver of receivers) {
        expect(receiver.requests.filter((r) => r.verified === undefined).map((r) => `${r.path} #${r.index}: ${r.verifyError ?? 'unchecked'}`)).toEqual([]);
      }
    } finally {
      for (const receiver of receivers) await receiver.close();
      for (const t of apps) await t.close();
    }
  },
});

async function hook(t: TestApp, receiver: WebhookReceiver, path: string, events: string[] = ['user.created']): Promise<{ id: number; secret: string }> {
  const created = await createWebhook(t.app, { url: receiver.url(path), events });
  receiver.verifyWith(path, created.secret);
  return created;
}

async function createUser(t: TestApp, name: string): Promise<void> {
  const response = await t.app.inject({ method: 'POST', url: '/users', payload: { name } });
  expect(response.statusCode, response.body).toBe(201);
}

function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('missing value');
  return value;
}

/** Drops the connection without answering. */
const reset: Responder = (res) => res.socket?.destroy();

describe.concurrent('retries', () => {
  it('a receiver failing 3 times (500, dropped connection, 503) then answering 200 → one success after 4 attempts, all logged', async ({ setup }) => {
    const { t, receiver } = await setup({ retryScheduleSeconds: [0.1, 0.1, 0.1, 0.1] });
    const webhook = await hook(t, receiver, '/flaky');
    const failures = [answer(500), reset, answer(503)];
    receiver.respond('/flaky', failing(3, (res, attempt, request) => failures[attempt - 1]?.(res, attempt, request)));
    await createUser(t, 'Retried');

    const [delivery] = await waitForDeliveries(t.app, webhook.id, (ds) => ds[0]?.status === 'succeeded', 'the delivery to succeed').catch((error: unknown) => {
      // (Once seen under load: the second attempt not recorded within 15 s. What the receiver saw says where it stopped.)
      const seen = receiver.to('/flaky').map((r) => ({ answered: r.answered ?? null, receivedAt: r.receivedAt, closedAt: r.closedAt ?? null }));
      throw new Error(`${String(error)}; the receiver got ${JSON.stringify(seen)}`);
    });
    const requests = receiver.to('/flaky');
    expect(requests).toHaveLength(4);
    expect(requests.map((r) => r.answered ?? null)).toEqual([500, null, 503, 200]);
    // The same message each time: same webhook-id, same body; each attempt signed anew.
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(requests.map((r) => signed(r).data.object.name)).toEqual(['Retried', 'Retried', 'Retried', 'Retried']);
    expect(deliveryIdOf(must(requests[0]))).toBe(delivery?.id);

    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 4, responseStatus: 200, lastError: null });
    const log = delivery?.attemptLog ?? [];
    expect(log.map((a) => a.responseStatus)).toEqual([500, null, 503, 200]);
    expect(log.map((a) => a.error === null)).toEqual([true, false, true, true]);
    expect(log[1]?.error).toEqual(expect.any(String));
    for (const attempt of log) {
      expect(attempt.attemptedAt).toMatch(ISO);
      expect(Number.isInteger(attempt.durationMs) && attempt.durationMs >= 0).toBe(true);
    }
    const times = log.map((a) => Date.parse(a.attemptedAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(delivery?.lastAttemptAt).toBe(log[3]?.attemptedAt);
  });

  for (const status of [429, 503]) {
    it(`${status} with Retry-After: 1 → the next attempt comes no sooner than about 1 s (not the 0.1 s schedule)`, async ({ setup }) => {
      const { t, receiver } = await setup({ retryScheduleSeconds: [0.1, 0.1] });
      const webhook = await hook(t, receiver, '/busy');
      receiver.respond('/busy', failing(1, answer(status, { 'retry-after': '1' })));
      await createUser(t, 'Patient');
      await waitForDeliveries(t.app, webhook.id, (ds) => ds[0]?.status === 'succeeded', 'the delivery to succeed');
      const [first, second] = receiver.to('/busy');
      expect(receiver.to('/busy')).toHaveLength(2);
      expect([first?.answered, second?.answered]).toEqual([status, 200]);
      expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(900);
    });
  }

  it('an exhausted schedule → failed (later deliveries then go on); a manual retry → 202 and delivered', async ({ setup }) => {
    const { t, receiver } = await setup({ retryScheduleSeconds: [0.1, 0.1] });
    const webhook = await hook(t, receiver, '/exhausted');
    receiver.respond('/exhausted', failing(3, answer(500)));
    await createUser(t, 'First');
    await createUser(t, 'Second');

    const deliveries = await waitForDeliveries(t.app, webhook.id, (ds) => ds.length === 2 && ds[0]?.status === 'succeeded', 'the second delivery to succeed');
    const [second, first] = deliveries;
    expect(first).toMatchObject({ status: 'failed', attempts: 3, responseStatus: 500, lastError: null });
    expect(first?.attemptLog.map((a) => a.responseStatus)).toEqual([500, 500, 500]);
    expect(second).toMatchObject({ status: 'succeeded', attempts: 1, responseStatus: 200 });
    // Oldest first: the first delivery's three attempts, then the second.
    expect(receiver.to('/exhausted').map((r) => [signed(r).data.object.name, r.answered])).toEqual([
      ['First', 500],
      ['First', 500],
      ['First', 500],
      ['Second', 200],
    ]);

    const retried = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${webhook.id}/deliveries/${first?.id ?? 0}/retry` });
    expect(retried.statusCode).toBe(202);
    expect(retried.body).toBe('');
    const after = await waitForDeliveries(t.app, webhook.id, (ds) => ds[1]?.status === 'succeeded', 'the retried delivery to succeed');
    expect(after[1]).toMatchObject({ id: first?.id, status: 'succeeded', attempts: 4, responseStatus: 200, lastError: null });
    expect(after[1]?.attemptLog.map((a) => a.responseStatus)).toEqual([500, 500, 500, 200]);
    const requests = receiver.to('/exhausted');
    expect(requests).toHaveLength(5);
    expect(signed(must(requests[4])).data.object.name).toBe('First');
    expect(requests[4]?.headers['webhook-id']).toBe(requests[0]?.headers['webhook-id']);
  });

  // README: "202: deliver it again now". Asked while an attempt is in flight, the redelivery
  // must still happen once that attempt is over, not be overwritten by its outcome.
  it('a manual retry asked while the delivery is in flight still delivers it again', async ({ setup }) => {
    const { t, receiver } = await setup();
    const webhook = await hook(t, receiver, '/inflight');
    let release: (() => void) | undefined;
    receiver.respond('/inflight', (res, attempt, request) => {
      if (attempt === 1) release = () => answer(200)(res, attempt, request);
      else answer(200)(res, attempt, request);
    });
    await createUser(t, 'Again');
    await receiver.waitFor((r) => r.to('/inflight').length === 1, 'the first attempt');
    const [delivery] = await deliveriesOf(t.app, webhook.id);
    const retried = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${webhook.id}/deliveries/${delivery?.id ?? 0}/retry` });
    expect(retried.statusCode).toBe(202);
    must(release)();
    await receiver.waitFor((r) => r.to('/inflight').length === 2, 'the redelivery asked for');
    const [first, second] = receiver.to('/inflight');
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    await waitForDeliveries(t.app, webhook.id, (ds) => ds[0]?.status === 'succeeded' && ds[0].attempts === 2, 'two attempts, the last succeeded');
  });

  it('a receiver that never answers → each attempt ends at timeoutMs with the error recorded, then failed', async ({ setup }) => {
    const { t, receiver } = await setup({ retryScheduleSeconds: [0.1], timeoutMs: 200 });
    const webhook = await hook(t, receiver, '/silent');
    receiver.respond('/silent', hang);
    await createUser(t, 'Unanswered');
    const [delivery] = await waitForDeliveries(t.app, webhook.id, (ds) => ds[0]?.status === 'failed', 'the delivery to fail');
    expect(delivery).toMatchObject({ status: 'failed', attempts: 2, responseStatus: null, lastError: expect.stringContaining('200 ms') as string });
    expect(delivery?.attemptLog.map((a) => a.responseStatus)).toEqual([null, null]);
    for (const attempt of delivery?.attemptLog ?? []) expect(attempt.error).toMatch(/200 ms/);
    const requests = receiver.to('/silent');
    expect(requests).toHaveLength(2);
    expect(requests.map((r) => r.answered)).toEqual([undefined, undefined]);
    // The client gave up on both: their connections are closed.
    await receiver.waitFor((r) => r.to('/silent').every((q) => q.closedAt !== undefined), 'both connections closed');
  });
});

describe.concurrent('timeoutMs bounds the whole attempt', () => {
  // A receiver that keeps the connection busy with a trickle must not hold the attempt (and, with
  // one delivery at a time, the endpoint) for longer than timeoutMs.
  it('a receiver answering 200 and then sending its body one byte every 50 ms is cut off', async ({ setup }) => {
    const { t, receiver } = await setup({ retryScheduleSeconds: [], timeoutMs: 300 });
    const webhook = await hook(t, receiver, '/trickle');
    const bytes = 400; // under the 1 KiB read limit: only the timeout can end it early
    let sent = 0;
    let cutShort: boolean | undefined;
    receiver.respond('/trickle', (res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(bytes) });
      const timer = setInterval(() => {
        if (res.destroyed) return;
        res.write('x');
        sent += 1;
        if (sent === bytes) {
          clearInterval(timer);
          res.end();
        }
      }, 50);
      res.on('close', () => {
        clearInterval(timer);
        cutShort = sent < bytes;
      });
    });
    await createUser(t, 'Trickled');
    const [delivery] = await waitForDeliveries(t.app, webhook.id, (ds) => ds[0]?.attempts === 1, 'the attempt to end', 30_000);
    expect(delivery?.attemptLog).toHaveLength(1);
    await waitUntil(() => cutShort !== undefined, 'the response to end');
    expect({ cutShort, sentAll: sent === bytes }).toEqual({ cutShort: true, sentAll: false });
  }, 40_000);
});

describe.concurrent('the lease of an attempt in flight', () => {
  // An attempt cut short (a crash) is made again once its delivery's lease ends: timeoutMs +
  // leaseMarginMs (RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS, 5 s by default) after the claim.
  for (const [margin, leaseMs] of [[undefined, 2000 + 5000], [300, 2000 + 300]] as const) {
    it(`leaseMarginMs ${margin ?? 'by default (5000)'} → the delivery is leased until ${leaseMs} ms after its claim`, async ({ setup }) => {
      const { t, receiver } = await setup({ timeoutMs: 2000, retryScheduleSeconds: [], ...(margin === undefined ? {} : { leaseMarginMs: margin }) });
      const webhook = await hook(t, receiver, '/held');
      let release: (() => void) | undefined;
      receiver.respond('/held', (res, attempt, request) => (release = () => answer(204)(res, attempt, request)));
      // The claim comes after the write and before the request reaches the receiver.
      const before = Date.now();
      await createUser(t, 'Leased');
      await receiver.waitFor((r) => r.to('/held').length === 1, 'the attempt');
      const after = Date.now();
      const [row] = await t.db.query<{ leaseUntil: string | null }>('select "leaseUntil" from "_restgraph_webhook_deliveries"');
      const leaseEnds = Date.parse(must(row?.leaseUntil ?? undefined).split(' ')[0] ?? '');
      expect(leaseEnds).toBeGreaterThanOrEqual(before + leaseMs);
      expect(leaseEnds).toBeLessThanOrEqual(after + leaseMs);
      must(release)();
      await waitForDeliveries(t.app, webhook.id, (ds) => ds[0]?.status === 'succeeded', 'the delivery to succeed');
    });
  }
});

describe.concurrent('responses that are not plain answers', () => {
  for (const status of [302, 307]) {
    it(`a ${status} redirect is not followed: a failure naming it; the redirect target is never hit`, async ({ setup }) => {
      const { t, receiver } = await setup({ retryScheduleSeconds: [0.1] });
      const webhook = await hook(t, receiver, '/moved');
      receiver.verifyWith('/elsewhere', webhook.secret);
      receiver.respond('/moved', answer(status, { location: receiver.url('/elsewhere') }));
      await createUser(t, 'Redirected');
      const [delivery] = await waitForDeliveries(t.app, webhook.id, (ds) => ds[0]?.status === 'failed', 'the delivery to fail');
      expect(delivery).toMatchObject({ status: 'failed', attempts: 2, responseStatus: status });
      expect(delivery?.attemptLog.map((a) => a.responseStatus)).toEqual([status, status]);
      for (const attempt of delivery?.attemptLog ?? []) expect(attempt.error).toMatch(/not followed/);
      expect(receiver.to('/moved')).toHaveLength(2);
      expect(receiver.to('/elsewhere')).toEqual([]);
    });
  }

  it('a 64 MiB response body is not read to the end, and the 200 counts as success', async ({ setup }) => {
    const { t, receiver } = await setup();
    const webhook = await hook(t, receiver, '/big');
    const total = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let written = 0;
    let finished = false;
    let cut = false;
    receiver.respond('/big', (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(total) });
      res.on('close', () => (cut = !finished));
      const pump = (): void => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (written >= total && !res.destroyed) res.end(() => (finished = true));
      };
      pump();
    });
    await createUser(t, 'Talkative');
    const [delivery] = await waitForDeliveries(t.app, webhook.id, (ds) => ds[0]?.status === 'succeeded', 'the delivery to succeed');
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1, responseStatus: 200, lastError: null });
    await waitUntil(() => cut || finished, 'the response to end');
    expect({ cut, finished }).toEqual({ cut: true, finished: false });
    expect(written).toBeLessThan(total);
  });
});

describe.concurrent('disabling', () => {
  it('an endpoint failing for disableAfterMs is disabled with a reason; resume → active and its pending delivery goes out', async ({ setup }) => {
    const { t, receiver } = await setup({ disableAfterMs: 300, retryScheduleSeconds: Array.from({ length: 30 }, () => 0.1) });
    const webhook = await hook(t, receiver, '/down');
    receiver.respond('/down', answer(500));
    await createUser(t, 'Waiting');

    await waitUntil(async () => (await getWebhook(t.app, webhook.id)).status === 'disabled', 'the endpoint to be disabled');
    const disabled = await getWebhook(t.app, webhook.id);
    expect(disabled).toMatchObject({ status: 'disabled', disabledReason: expect.any(String) as string, failingSince: expect.stringMatching(ISO) as string });
    expect(disabled.disabledReason).not.toBe('');
    const [pending] = await waitForDeliveries(t.app, webhook.id, (ds) => ds.length === 1, 'the delivery');
    expect(pending?.status).toBe('pending');
    expect(pending?.attemptLog.every((a) => a.responseStatus === 500)).toBe(true);
    // It failed for at least disableAfterMs before it was disabled.
    const log = pending?.attemptLog ?? [];
    expect(Date.parse(log[log.length - 1]?.attemptedAt ?? '') - Date.parse(disabled.failingSince ?? '')).toBeGreaterThanOrEqual(300 - (log[log.length - 1]?.durationMs ?? 0) - 1);

    receiver.respond('/down', answer(200));
    const resumed = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${webhook.id}/resume` });
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json()).toMatchObject({ id: webhook.id, status: 'active', disabledReason: null, failingSince: null });
    const [delivered] = await waitForDeliveries(t.app, webhook.id, (ds) => ds[0]?.status === 'succeeded', 'the pending delivery to go out');
    expect(delivered?.attemptLog.map((a) => a.responseStatus)).toEqual([...log.map(() => 500), 200]);
    const requests = receiver.to('/down');
    expect(requests.map((r) => r.answered)).toEqual(delivered?.attemptLog.map((a) => a.responseStatus));
    expect(signed(must(requests[requests.length - 1])).data.object.name).toBe('Waiting');
    expect(await getWebhook(t.app, webhook.id)).toMatchObject({ status: 'active', disabledReason: null, failingSince: null });
  });
});

describe.concurrent('endpoints are independent', () => {
  // "One delivery in flight per endpoint" — per endpoint: an endpoint that takes long to answer
  // must not hold up the deliveries of another.
  it('a delivery to a fast endpoint goes out while another endpoint is still not answering', async ({ setup }) => {
    const { t, receiver } = await setup({ timeoutMs: 8000, retryScheduleSeconds: [] });
    const slow = await hook(t, receiver, '/slow', ['user.created']);
    const fast = await hook(t, receiver, '/fast', ['user.updated']);
    receiver.respond('/slow', hang);
    let slowStillOpen: boolean | undefined;
    receiver.respond('/fast', (res, attempt, request) => {
      slowStillOpen = receiver.to('/slow')[0]?.closedAt === undefined;
      answer(200)(res, attempt, request);
    });
    await createUser(t, 'Slowpoke');
    await receiver.waitFor((r) => r.to('/slow').length === 1, 'the slow endpoint to be called');
    const response = await t.app.inject({ method: 'PATCH', url: '/users/1', payload: { name: 'Speedy' } });
    expect(response.statusCode).toBe(200);
    await receiver.waitFor((r) => r.to('/fast').length === 1, 'the fast endpoint to be called', 20_000);
    expect(slowStillOpen).toBe(true);
    expect(signed(must(receiver.to('/fast')[0])).data.object.name).toBe('Speedy');
    expect(slow.id).not.toBe(fast.id);
  }, 30_000);
});
