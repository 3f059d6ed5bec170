import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { parsePrometheusText, valueOf } from './helpers/prometheus-text.js';
import { json, type TestApp } from './helpers/test-app.js';
import { closedAfterEachTest, waitForDeliveries, type DeliveryBody, type WebhookBody } from './helpers/webhook-receiver.js';

/**
 * Endpoint changes that race each other: 50 concurrent POST, PATCH and DELETE of webhook
 * endpoints, while users are created, make the feeder start and stop reading events many times
 * over. No request fails with a 5xx, the feeder is never subscribed twice (nor left subscribed
 * with no endpoint), no event reaches an endpoint twice, and an endpoint gets every event created
 * after its registration was answered.
 */

const started = closedAfterEachTest();

/** A request made, with what it answered. */
interface Outcome {
  request: string;
  status: number;
  body: string;
}

async function send(t: TestApp, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>): Promise<Outcome & { response: LightMyRequestResponse }> {
  const response = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload }) });
  return { request: `${method} ${url}`, status: response.statusCode, body: response.body, response };
}

/** The consumers the event dispatcher feeds (here only the webhook feeder: one while any endpoint takes deliveries). */
async function feeders(t: TestApp): Promise<number> {
  const response = await t.app.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode).toBe(200);
  return valueOf(parsePrometheusText(response.body), 'restgraph_event_subscribers');
}

describe('endpoint changes racing each other while events flow', () => {
  it('50 concurrent POST/PATCH/DELETE of endpoints, over and over: no 5xx, one feeder at most, no event twice to an endpoint, every later event to each endpoint', async () => {
    const receiver = await started.receiver();
    const t = await started.app({ webhooks: { allowHosts: ['127.0.0.1'], pollIntervalMs: 50 } });
    const outcomes: Outcome[] = [];
    let users = 0;
    /** `count` creates of users, as events that flow while endpoints change. */
    const createUsers = (count: number): Promise<unknown>[] =>
      Array.from({ length: count }, async () => {
        const outcome = await send(t, 'POST', '/users', { name: `User ${users++}` });
        outcomes.push(outcome);
        return outcome.status === 201 ? json<{ id: number }>(outcome.response).id : undefined;
      });
    /** Runs the changes all at once, with 10 creates of users among them; their outcomes are kept. */
    const together = async <T extends Outcome>(changes: (() => Promise<T>)[]): Promise<T[]> => {
      const [made] = await Promise.all([Promise.all(changes.map((change) => change())), ...createUsers(10)]);
      outcomes.push(...made);
      return made;
    };
    let endpoints = 0;
    const register = async (): Promise<Outcome & { webhook?: WebhookBody }> => {
      const outcome = await send(t, 'POST', '/v1/webhooks', { url: receiver.url(`/e${endpoints++}`), events: ['user.created'] });
      return outcome.status === 201 ? { ...outcome, webhook: json<WebhookBody>(outcome.response) } : outcome;
    };
    const fill = async (): Promise<WebhookBody[]> =>
      (await together(Array.from({ length: 50 }, () => register))).flatMap((o) => (o.webhook === undefined ? [] : [o.webhook]));
    const patch = (w: WebhookBody, i: number) => (): Promise<Outcome> =>
      send(t, 'PATCH', `/v1/webhooks/${w.id}`, i % 2 === 0 ? { events: ['*'] } : { description: `changed ${i}` });
    const remove = (w: WebhookBody) => (): Promise<Outcome> => send(t, 'DELETE', `/v1/webhooks/${w.id}`);

    for (let round = 0; round < 3; round++) {
      // From no endpoint to 50: every registration's sync finds the feeder stopped.
      const registered = await fill();
      expect(registered).toHaveLength(50);
      expect(await feeders(t)).toBe(1);
      const [kept, dropped] = [registered.slice(0, 25), registered.slice(25)];
      // 25 changed, 25 deleted.
      await together([...kept.map(patch), ...dropped.map(remove)]);
      // The last 25 deleted while they are changed (a PATCH may find its endpoint gone: 404): from
      // 25 endpoints to none, every deletion's sync finds the feeder reading.
      await together([...kept.map(remove), ...kept.map(patch)]);
      expect(await feeders(t)).toBe(0);
    }
    const final = await fill();
    expect(await feeders(t)).toBe(1);
    const later = (await Promise.all(createUsers(10))) as number[];

    const failed = outcomes.filter((o) => o.status >= 500 || !(o.request.startsWith('PATCH') ? [200, 404] : [200, 201, 204]).includes(o.status));
    expect(failed.map((o) => `${o.request} → ${o.status} ${o.body}`)).toEqual([]);

    // Every endpoint registered last gets the 10 users created after its registration was answered.
    const usersTo = (path: string): number[] => receiver.to(path).map((r) => (JSON.parse(r.body) as DeliveryBody).data.object.id);
    const paths = final.map((w) => new URL(w.url).pathname);
    await receiver.waitFor((r) => paths.every((path) => later.every((id) => usersTo(path).includes(id)) && r.to(path).every((q) => q.answered !== undefined)), 'the users created last, at every endpoint', 45_000);
    // No endpoint got an event twice (every event here is a user's creation: one per user id).
    const seen = new Set<string>();
    const twice = receiver.requests.filter((r) => seen.size === seen.add(`${r.path} ${r.body}`).size);
    expect(twice.map((r) => `${r.path} ${r.headers['webhook-id'] ?? ''} ${r.body}`)).toEqual([]);
    // Each delivery of theirs went out once, at its first attempt.
    for (const webhook of final) {
      const deliveries = await waitForDeliveries(t.app, webhook.id, (ds) => ds.every((d) => d.status === 'succeeded'), `the deliveries to ${webhook.url}`);
      expect(deliveries.filter((d) => d.attempts !== 1)).toEqual([]);
      expect(receiver.to(new URL(webhook.url).pathname)).toHaveLength(deliveries.length);
    }
  }, 90_000);
});
