import { afterEach, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import type { WebhookOptions } from '../src/webhooks/webhook-service.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import {
  answer,
  createWebhook,
  deliveriesOf,
  deliveryIdOf,
  signed,
  waitForDeliveries,
  WebhookReceiver,
  type ReceivedRequest,
} from './helpers/webhook-receiver.js';

/**
 * What endpoints receive: one signed POST per subscribed event (Standard Webhooks headers,
 * verified with the `standardwebhooks` library), with the object REST returned; only the
 * subscribed types; in event order, one at a time per endpoint, also under 50 concurrent writes;
 * paused endpoints accumulate deliveries and get them after resume.
 */

type Row = Record<string, unknown> & { id: number };

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let apps: TestApp[] = [];
let receivers: WebhookReceiver[] = [];

/** A receiver on 127.0.0.1 and an app allowed to deliver to it (fast polling, short retries). */
async function setup(webhooks: Partial<WebhookOptions> = {}): Promise<{ t: TestApp; receiver: WebhookReceiver }> {
  const receiver = await WebhookReceiver.start();
  receivers.push(receiver);
  const t = await startTestApp({ webhooks: { allowHosts: ['127.0.0.1'], pollIntervalMs: 50, retryScheduleSeconds: [0.1, 0.1, 0.1], ...webhooks } });
  apps.push(t);
  return { t, receiver };
}

/** Registers a webhook to `path` on the receiver, whose signatures the receiver then checks. */
async function hook(t: TestApp, receiver: WebhookReceiver, path: string, events: string[]): Promise<{ id: number; secret: string }> {
  const created = await createWebhook(t.app, { url: receiver.url(path), events });
  receiver.verifyWith(path, created.secret);
  return created;
}

async function write(t: TestApp, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>): Promise<Row | undefined> {
  const response = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload }) });
  expect({ request: `${method} ${url}`, status: response.statusCode }).toEqual({ request: `${method} ${url}`, status: method === 'POST' ? 201 : method === 'PATCH' ? 200 : 204 });
  return method === 'DELETE' ? undefined : json<Row>(response);
}

function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('missing value');
  return value;
}

afterEach(async () => {
  try {
    // Every request any receiver got was checked with its endpoint's secret, and verified.
    for (const receiver of receivers) {
      expect(receiver.requests.filter((r) => r.verified === undefined).map((r) => `${r.path} #${r.index}: ${r.verifyError ?? 'unchecked'}`)).toEqual([]);
    }
  } finally {
    for (const receiver of receivers) await receiver.close();
    for (const t of apps) await t.close();
    receivers = [];
    apps = [];
  }
});

describe('what is delivered', () => {
  it('a user created, updated and deleted → three signed deliveries in order, with the objects REST returned', async () => {
    const { t, receiver } = await setup();
    const webhook = await hook(t, receiver, '/users', ['*']);
    const created = must(await write(t, 'POST', '/users', { name: 'Ada', email: 'ada@example.com' }));
    const updated = must(await write(t, 'PATCH', `/users/${created.id}`, { name: 'Ada Lovelace', bio: 'Analyst' }));
    await write(t, 'DELETE', `/users/${created.id}`);
    await receiver.waitFor((r) => r.to('/users').length >= 3, 'three deliveries');

    const requests = receiver.to('/users');
    expect(requests).toHaveLength(3);
    const bodies = requests.map(signed);
    expect(bodies).toEqual([
      { type: 'user.created', timestamp: expect.stringMatching(ISO) as string, data: { object: created } },
      { type: 'user.updated', timestamp: expect.stringMatching(ISO) as string, data: { object: updated, previous: { name: 'Ada', bio: null, updatedAt: created.updatedAt } } },
      { type: 'user.deleted', timestamp: expect.stringMatching(ISO) as string, data: { object: updated } },
    ]);
    // The body is exactly these three members, in this order.
    for (const request of requests) expect(Object.keys(JSON.parse(request.body) as object)).toEqual(['type', 'timestamp', 'data']);
    const times = bodies.map((b) => Date.parse(b.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));

    for (const request of requests) {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['webhook-id']).toMatch(/^msg_\d+$/);
      expect(request.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    }

    const deliveries = await waitForDeliveries(t.app, webhook.id, (ds) => ds.length === 3 && ds.every((d) => d.status === 'succeeded'), 'three succeeded deliveries');
    // Newest first; the webhook-id of each request is msg_<its delivery id>.
    expect(deliveries.map((d) => d.eventType)).toEqual(['user.deleted', 'user.updated', 'user.created']);
    expect(requests.map((r) => deliveryIdOf(r))).toEqual(deliveries.map((d) => d.id).reverse());
    const eventIds = deliveries.map((d) => d.eventId).reverse();
    expect(eventIds).toEqual([...eventIds].sort((a, b) => a - b));
    expect(new Set(eventIds).size).toBe(3);
    for (const d of deliveries) {
      expect(d).toMatchObject({ webhookId: webhook.id, status: 'succeeded', attempts: 1, responseStatus: 200, lastError: null });
      expect(d).not.toHaveProperty('payload');
      expect(d.createdAt).toMatch(ISO);
      expect(d.lastAttemptAt).toMatch(ISO);
      expect(d.attemptLog).toHaveLength(1);
      expect(d.attemptLog[0]).toMatchObject({ attemptedAt: d.lastAttemptAt, responseStatus: 200, error: null });
      expect(Number.isInteger(d.attemptLog[0]?.durationMs) && (d.attemptLog[0]?.durationMs ?? -1) >= 0).toBe(true);
    }
  });

  it('each endpoint gets only the types it subscribed to ("*" gets all, cascades included)', async () => {
    const { t, receiver } = await setup();
    const created = await hook(t, receiver, '/created', ['user.created']);
    const all = await hook(t, receiver, '/all', ['*']);
    const mixed = await hook(t, receiver, '/mixed', ['post.created', 'user.deleted']);
    const none = await hook(t, receiver, '/none', ['product.created']);

    const user = must(await write(t, 'POST', '/users', { name: 'Grace' }));
    const post = must(await write(t, 'POST', '/posts', { title: 'Compilers', userId: user.id }));
    await write(t, 'PATCH', `/users/${user.id}`, { name: 'Grace Hopper' });
    // Deleting the user deletes the post first (onDelete: cascade), each with its event.
    await write(t, 'DELETE', `/users/${user.id}`);

    await receiver.waitFor((r) => r.to('/all').length >= 5 && r.to('/created').length >= 1 && r.to('/mixed').length >= 2, 'every subscribed delivery');
    expect(receiver.to('/all').map((r) => signed(r).type)).toEqual(['user.created', 'post.created', 'user.updated', 'post.deleted', 'user.deleted']);
    expect(receiver.to('/created').map((r) => signed(r).data.object)).toEqual([user]);
    expect(receiver.to('/mixed').map((r) => [signed(r).type, signed(r).data.object.id])).toEqual([
      ['post.created', post.id],
      ['user.deleted', user.id],
    ]);
    // The deliveries of one event are written together for every endpoint: the counts are final.
    expect((await deliveriesOf(t.app, all.id)).length).toBe(5);
    expect((await deliveriesOf(t.app, created.id)).map((d) => d.eventType)).toEqual(['user.created']);
    expect((await deliveriesOf(t.app, mixed.id)).map((d) => d.eventType)).toEqual(['user.deleted', 'post.created']);
    expect(await deliveriesOf(t.app, none.id)).toEqual([]);
    expect(receiver.to('/none')).toEqual([]);
    expect(receiver.to('/created')).toHaveLength(1);
    expect(receiver.to('/mixed')).toHaveLength(2);
  });

  it('PATCH events changes what later events are delivered; a deleted endpoint gets nothing more', async () => {
    const { t, receiver } = await setup();
    const changing = await hook(t, receiver, '/changing', ['user.created']);
    const deleted = await hook(t, receiver, '/deleted', ['*']);
    const sentinel = await hook(t, receiver, '/sentinel', ['*']);
    expect((await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${changing.id}`, payload: { events: ['user.updated'] } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${deleted.id}` })).statusCode).toBe(204);
    const user = must(await write(t, 'POST', '/users', { name: 'Barbara' }));
    await write(t, 'PATCH', `/users/${user.id}`, { name: 'Barbara Liskov' });
    await receiver.waitFor((r) => r.to('/sentinel').length >= 2 && r.to('/changing').length >= 1, 'the deliveries');
    expect(receiver.to('/changing').map((r) => signed(r).type)).toEqual(['user.updated']);
    expect(receiver.to('/deleted')).toEqual([]);
    expect((await deliveriesOf(t.app, sentinel.id)).length).toBe(2);
  });

  it('a paused endpoint accumulates its deliveries (not attempted) and gets them in order after resume', async () => {
    const { t, receiver } = await setup();
    const paused = await hook(t, receiver, '/paused', ['user.created']);
    expect((await t.app.inject({ method: 'POST', url: `/v1/webhooks/${paused.id}/pause` })).statusCode).toBe(200);
    const names = ['One', 'Two', 'Three'];
    for (const name of names) await write(t, 'POST', '/users', { name });
    const waiting = await waitForDeliveries(t.app, paused.id, (ds) => ds.length === 3, 'three queued deliveries');
    expect(waiting.map((d) => ({ status: d.status, attempts: d.attempts, attemptLog: d.attemptLog }))).toEqual(Array.from({ length: 3 }, () => ({ status: 'pending', attempts: 0, attemptLog: [] })));
    expect(receiver.to('/paused')).toEqual([]);

    expect((await t.app.inject({ method: 'POST', url: `/v1/webhooks/${paused.id}/resume` })).statusCode).toBe(200);
    await receiver.waitFor((r) => r.to('/paused').length >= 3, 'the queued deliveries');
    expect(receiver.to('/paused').map((r) => signed(r).data.object.name)).toEqual(names);
    await waitForDeliveries(t.app, paused.id, (ds) => ds.every((d) => d.status === 'succeeded' && d.attempts === 1), 'three succeeded deliveries');
  });
});

describe('order', () => {
  /** Answers 200 after a few milliseconds, so that overlapping requests would show. */
  const slowly = (status = 200) => answerLater(status, 3);

  it('50 concurrent writes → the receiver gets every event once, in increasing event id, one at a time', async () => {
    const { t, receiver } = await setup();
    const webhook = await hook(t, receiver, '/order', ['*']);
    receiver.respond('/order', slowly());
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => t.app.inject({ method: 'POST', url: '/users', payload: { name: `User ${i}` } })));
    expect(responses.map((r) => r.statusCode)).toEqual(Array.from({ length: 50 }, () => 201));
    const userIds = responses.map((r) => json<Row>(r).id).sort((a, b) => a - b);

    await receiver.waitFor((r) => r.to('/order').length >= 50, '50 deliveries');
    const deliveries = await waitForDeliveries(t.app, webhook.id, (ds) => ds.length === 50 && ds.every((d) => d.status === 'succeeded'), '50 succeeded deliveries');
    const eventOf = new Map(deliveries.map((d) => [d.id, d.eventId]));
    const seen = receiver.to('/order').map((r) => must(eventOf.get(deliveryIdOf(r))));
    expect(seen).toEqual([...new Set(deliveries.map((d) => d.eventId))].sort((a, b) => a - b));
    expect(seen).toHaveLength(50);
    // Every create arrives once (in event order, that is commit order, which concurrent creates on
    // PostgreSQL need not take in the order of their row ids).
    expect(receiver.to('/order').map((r) => signed(r).data.object.id).sort((a, b) => a - b)).toEqual(userIds);
    expect(receiver.maxInFlight.get('/order')).toBe(1);
  });

  it('events of nearly 1 MiB each (several per batch of at most 4 MiB) → every one delivered once, in order, whole', async () => {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const schema = parseSchemaText('resources:\n  notes:\n    fields:\n      text: { type: string, required: true }\n');
    const t = await startTestApp({ schema, webhooks: { allowHosts: ['127.0.0.1'], pollIntervalMs: 50, retryScheduleSeconds: [0.1] } });
    apps.push(t);
    const webhook = await hook(t, receiver, '/large', ['*']);
    const texts = Array.from({ length: 12 }, (_, i) => String.fromCharCode(97 + i).repeat(900_000));
    for (const text of texts) await write(t, 'POST', '/notes', { text });
    await receiver.waitFor((r) => r.to('/large').length >= texts.length, `${texts.length} deliveries`);
    await waitForDeliveries(t.app, webhook.id, (ds) => ds.length === texts.length && ds.every((d) => d.status === 'succeeded'), 'all succeeded');
    expect(receiver.to('/large').map((r) => signed(r).data.object.text)).toEqual(texts);
  });

  it('with failures and retries in between, nothing overtakes a delivery being retried', async () => {
    const { t, receiver } = await setup({ retryScheduleSeconds: [0.05, 0.05, 0.05, 0.05] });
    const webhook = await hook(t, receiver, '/flaky', ['user.created', 'user.updated']);
    // Every third request fails (500), so some deliveries need two attempts.
    receiver.respond('/flaky', (res, attempt, request) => (attempt % 3 === 0 ? answer(500) : slowly())(res, attempt, request));
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => t.app.inject({ method: 'POST', url: '/users', payload: { name: `Flaky ${i}` } })));
    expect(responses.map((r) => r.statusCode)).toEqual(Array.from({ length: 30 }, () => 201));

    const deliveries = await waitForDeliveries(t.app, webhook.id, (ds) => ds.length === 30 && ds.every((d) => d.status === 'succeeded'), '30 succeeded deliveries', 30_000);
    const eventOf = new Map(deliveries.map((d) => [d.id, d.eventId]));
    const requests = receiver.to('/flaky');
    const events = requests.map((r) => must(eventOf.get(deliveryIdOf(r))));
    expect(events).toEqual([...events].sort((a, b) => a - b));
    const succeeded = requests.filter((r) => r.answered === 200).map((r) => must(eventOf.get(deliveryIdOf(r))));
    expect(succeeded).toEqual([...eventOf.values()].sort((a, b) => a - b));
    expect(requests.filter((r) => r.answered === 500).length).toBeGreaterThan(0);
    // Each delivery's attempt log matches what the receiver answered it.
    for (const d of deliveries) {
      const answered = requests.filter((r) => deliveryIdOf(r) === d.id).map((r) => r.answered ?? null);
      expect({ id: d.id, log: d.attemptLog.map((a) => a.responseStatus) }).toEqual({ id: d.id, log: answered });
    }
    expect(receiver.maxInFlight.get('/flaky')).toBe(1);
  }, 40_000);
});

/** Answers `status` after `ms` milliseconds. */
function answerLater(status: number, ms: number) {
  return (res: Parameters<ReturnType<typeof answer>>[0], attempt: number, request: ReceivedRequest): void => {
    setTimeout(() => answer(status)(res, attempt, request), ms);
  };
}
