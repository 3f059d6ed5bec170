import { describe, expect } from 'vitest';
import { freePort, type Running } from './helpers/cli-process.js';
import { TEST_DIALECT } from './helpers/test-database.js';
import { webhookCli, type WebhookCli } from './helpers/webhook-cli.js';
import { answer, deliveryIdOf, signed, waitUntil, WebhookReceiver, type DeliveryView, type WebhookBody } from './helpers/webhook-receiver.js';

/**
 * Webhook deliveries over time, with `restgraph serve` as a child process on a real SQLite file:
 * finished deliveries (and their attempt logs) go with the event retention at start-up, pending
 * ones stay; the feeder saves its position lazily (events no endpoint wants cost no write), yet a
 * SIGKILL neither duplicates a delivery nor hands an endpoint events from before its registration.
 */

const HOUR = 60 * 60 * 1000;

// Each test has its own folder, database, servers and receivers: the tests run concurrently.
const it = webhookCli('restgraph-webhooks-retention-', {
  RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  // One immediate retry, then failed: failed deliveries come quickly.
  RESTGRAPH_WEBHOOK_RETRY_SCHEDULE: '0',
  RESTGRAPH_WEBHOOK_TIMEOUT_MS: '1000',
});

/** The test's `cli`, with the helpers below bound to it. */
function helpers(cli: WebhookCli) {
  const { call, deliveries, db } = cli;
  async function register(base: string, url: string, events: string[]): Promise<WebhookBody & { secret: string }> {
    const created = await call(base, 'POST', '/v1/webhooks', { url, events });
    expect(created.status).toBe(201);
    return created.json as WebhookBody & { secret: string };
  }

  async function createUser(base: string, name: string): Promise<number> {
    const response = await call(base, 'POST', '/users', { name });
    expect(response.status).toBe(201);
    return (response.json as { id: number }).id;
  }

  /** Waits until the webhook's deliveries satisfy `condition`; resolves to them. */
  async function deliveriesWhen(base: string, id: number, condition: (ds: DeliveryView[]) => boolean, what: string, timeoutMs = 20_000): Promise<DeliveryView[]> {
    let last: DeliveryView[] = [];
    await waitUntil(
      async () => condition((last = await deliveries(base, id))),
      () => `${what} (last seen: ${JSON.stringify(last.map((d) => [d.id, d.eventId, d.status, d.attempts]))})`,
      timeoutMs,
    );
    return last;
  }

  const count = async (sql: string, parameters: readonly unknown[] = []): Promise<number> => Number((await db().query<{ n: number }>(sql, parameters))[0]?.n);
  const lastEventId = async (): Promise<number> => (await db().query<{ id: number | null }>('select max("id") as "id" from "_restgraph_events"'))[0]?.id ?? 0;
  const savedCursor = async (): Promise<number | undefined> => {
    const row = (await db().query<{ value: string }>('select "value" from "_restgraph_state" where "key" = ?', ['webhooks.cursor']))[0];
    return row === undefined ? undefined : Number(row.value);
  };
  return { ...cli, register, createUser, deliveriesWhen, count, lastEventId, savedCursor };
}

async function stop(running: Running): Promise<void> {
  running.child.kill('SIGTERM');
  expect(await running.exited).toEqual({ code: 0, signal: null });
}

describe.concurrent('retention of deliveries', () => {
  it('at start-up, finished deliveries older than the retention go with their attempts; pending and recent ones stay', async ({ cli }) => {
    const { receivers, spawn, serve, call, deliveries, db, register, createUser, deliveriesWhen, count, lastEventId } = helpers(cli);
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    receiver.respond('/fail', answer(500));
    const first = await serve();
    const ok = await register(first.base, receiver.url('/ok'), ['user.created']);
    const failing = await register(first.base, receiver.url('/fail'), ['user.created']);
    const paused = await register(first.base, receiver.url('/paused'), ['user.created']);
    expect((await call(first.base, 'POST', `/v1/webhooks/${paused.id}/pause`)).status).toBe(200);
    for (let i = 1; i <= 6; i++) await createUser(first.base, `User ${i}`);
    const okBefore = await deliveriesWhen(first.base, ok.id, (ds) => ds.length === 6 && ds.every((d) => d.status === 'succeeded'), 'six succeeded deliveries');
    const failBefore = await deliveriesWhen(first.base, failing.id, (ds) => ds.length === 6 && ds.every((d) => d.status === 'failed'), 'six failed deliveries');
    const pausedBefore = await deliveriesWhen(first.base, paused.id, (ds) => ds.length === 6, 'six queued deliveries');
    expect(pausedBefore.every((d) => d.status === 'pending' && d.attempts === 0)).toBe(true);
    expect(failBefore.every((d) => d.attemptLog.length === 2)).toBe(true);
    await stop(first.running);

    // Backdate a prefix of the deliveries (those of events 1-3 by 25 h, of event 4 by 23 h), so that
    // createdAt still grows with the id; the events themselves stay recent.
    const events = (await db().query<{ id: number }>('select "id" from "_restgraph_events" order by "id"')).map((e) => e.id);
    expect(events).toEqual([1, 2, 3, 4, 5, 6]);
    const all = await db().query<{ id: number; eventId: number; webhookId: number; status: string }>('select "id", "eventId", "webhookId", "status" from "_restgraph_webhook_deliveries" order by "id"');
    expect(all).toHaveLength(18);
    expect(all.map((d) => d.eventId)).toEqual([...all.map((d) => d.eventId)].sort((a, b) => a - b));
    const old = new Date(Date.now() - 25 * HOUR).toISOString();
    const younger = new Date(Date.now() - 23 * HOUR).toISOString();
    const update = 'update "_restgraph_webhook_deliveries" set "createdAt" = ? where "eventId" = ?';
    for (const eventId of [1, 2, 3]) expect(await db().run(update, [old, eventId])).toBe(3);
    expect(await db().run(update, [younger, 4])).toBe(3);
    const doomed = all.filter((d) => d.eventId <= 3 && d.webhookId !== paused.id).map((d) => d.id);
    expect(doomed).toHaveLength(6);
    const attemptsOf = (ids: readonly number[]): Promise<number> =>
      count(`select count(*) as "n" from "_restgraph_webhook_attempts" where "deliveryId" in (${ids.map(() => '?').join(',')})`, ids);
    expect(await attemptsOf(doomed)).toBe(3 + 3 * 2);

    // A refused retention does not start the server (nor prune anything).
    const refused = spawn(await freePort(), { RESTGRAPH_EVENT_RETENTION_DAYS: '0' });
    expect((await refused.exited).code).toBe(1);
    expect(refused.stderr()).toContain('RESTGRAPH_EVENT_RETENTION_DAYS');
    expect(await count('select count(*) as "n" from "_restgraph_webhook_deliveries"')).toBe(18);

    const second = await serve({ RESTGRAPH_EVENT_RETENTION_DAYS: '1' });
    // The prune runs right after start-up, in one transaction for this few rows.
    const okAfter = await deliveriesWhen(second.base, ok.id, (ds) => ds.length === 3, 'the old succeeded deliveries to be pruned');
    expect(okAfter.map((d) => d.eventId)).toEqual([6, 5, 4]);
    // What is left is as it was (attempt logs included), but for the createdAt backdated above.
    const backdated = (ds: readonly DeliveryView[]): DeliveryView[] =>
      ds.map((d) => ({ ...d, createdAt: d.eventId <= 3 ? old : d.eventId === 4 ? younger : d.createdAt }));
    expect(okAfter).toEqual(backdated(okBefore.slice(0, 3)));
    const failAfter = await deliveries(second.base, failing.id);
    expect(failAfter.map((d) => d.eventId)).toEqual([6, 5, 4]);
    expect(failAfter).toEqual(backdated(failBefore.slice(0, 3)));
    // Pending deliveries stay however old, untouched.
    const pausedAfter = await deliveries(second.base, paused.id);
    expect(pausedAfter.map((d) => [d.eventId, d.status])).toEqual([6, 5, 4, 3, 2, 1].map((e) => [e, 'pending']));
    expect(pausedAfter).toEqual(backdated(pausedBefore));
    // The events are younger than the retention: all kept.
    expect(await lastEventId()).toBe(6);

    // The kept pending ones are still delivered, in order, once the endpoint resumes.
    receiver.verifyWith('/paused', paused.secret);
    expect((await call(second.base, 'POST', `/v1/webhooks/${paused.id}/resume`)).status).toBe(200);
    await receiver.waitFor((r) => r.to('/paused').filter((q) => q.answered === 200).length === 6, 'the six queued deliveries');
    expect(receiver.to('/paused').map((q) => deliveryIdOf(q))).toEqual(pausedBefore.map((d) => d.id).reverse());
    for (const request of receiver.to('/paused')) expect(signed(request).type).toBe('user.created');
    await stop(second.running);

    // The pruned deliveries' attempts went with them; no attempt is left without its delivery.
    expect(await attemptsOf(doomed)).toBe(0);
    const orphans = await count('select count(*) as "n" from "_restgraph_webhook_attempts" a where not exists (select 1 from "_restgraph_webhook_deliveries" d where d."id" = a."deliveryId")');
    expect(orphans).toBe(0);
    expect(await count('select count(*) as "n" from "_restgraph_webhook_deliveries"')).toBe(12);
  }, 90_000);
});

describe.concurrent('the feeder position, saved lazily', () => {
  it('events no endpoint wants make no delivery, before or after a SIGKILL; the post event arrives exactly once', async ({ cli }) => {
    const { receivers, serve, call, deliveries, kill, register, createUser, deliveriesWhen, lastEventId, savedCursor } = helpers(cli);
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const first = await serve();
    const webhook = await register(first.base, receiver.url('/posts'), ['post.created']);
    receiver.verifyWith('/posts', webhook.secret);
    const author = await createUser(first.base, 'Author');
    for (let i = 0; i < 299; i++) await createUser(first.base, `Quiet ${i}`);
    // The position moves past events that made no delivery, and is saved without any delivery.
    expect(await lastEventId()).toBe(300);
    let saved: number | undefined;
    await waitUntil(async () => (saved = await savedCursor()) === 300, () => `the saved cursor to reach 300 (it is ${String(saved)})`, 10_000);
    expect(await deliveries(first.base, webhook.id)).toEqual([]);

    const post = await call(first.base, 'POST', '/posts', { title: 'First', userId: author });
    expect(post.status).toBe(201);
    const postId = (post.json as { id: number }).id;
    await deliveriesWhen(first.base, webhook.id, (ds) => ds.length === 1 && ds[0]?.status === 'succeeded', 'the post delivery to succeed');
    expect(receiver.to('/posts').map((r) => [signed(r).type, signed(r).data.object.id])).toEqual([['post.created', postId]]);

    // A burst of user creates, then SIGKILL at once: no graceful stop saves the position.
    await Promise.all(Array.from({ length: 100 }, (_, i) => createUser(first.base, `Burst ${i}`)));
    await kill(first.running);
    expect(await lastEventId()).toBe(401);
    const cursor = (await savedCursor()) ?? 0;
    expect(cursor).toBeGreaterThanOrEqual(301);

    const second = await serve();
    const next = await call(second.base, 'POST', '/posts', { title: 'Second', userId: author });
    expect(next.status).toBe(201);
    const nextId = (next.json as { id: number }).id;
    // Deliveries go out in event order: once the new post's has succeeded, any delivery the
    // restart made for earlier events (a duplicate of the first post) would already exist.
    const final = await deliveriesWhen(second.base, webhook.id, (ds) => ds.some((d) => d.eventId === 402 && d.status === 'succeeded'), 'the new post delivery to succeed');
    expect(final.map((d) => [d.eventId, d.eventType, d.status])).toEqual([
      [402, 'post.created', 'succeeded'],
      [301, 'post.created', 'succeeded'],
    ]);
    const requests = receiver.to('/posts');
    expect(requests.map((r) => [signed(r).type, signed(r).data.object.id, r.answered])).toEqual([
      ['post.created', postId, 200],
      ['post.created', nextId, 200],
    ]);
    expect(requests.map((r) => deliveryIdOf(r))).toEqual(final.map((d) => d.id).reverse());
    expect(await savedCursor()).toBe(402);
  }, 90_000);

  it('an endpoint registered after unrelated events, then a SIGKILL: it gets only the events after its registration', async ({ cli }) => {

    const { receivers, serve, deliveries, kill, register, createUser, deliveriesWhen, lastEventId, savedCursor } = helpers(cli);
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const first = await serve();
    const a = await register(first.base, receiver.url('/a'), ['post.created']);
    // Concurrent creates, so that they (and the registration below) most likely fall within one
    // flush interval: the registration itself must save the position reached.
    await Promise.all(Array.from({ length: 50 }, (_, i) => createUser(first.base, `Before ${i}`)));
    const b = await register(first.base, receiver.url('/b'), ['user.created']);
    // Registering saved the position reached first (the 50 events made no delivery, so nothing
    // else had to save it): after a crash, none of them is read again for B. On PostgreSQL the
    // concurrent creates commit out of id order and reach the feeder a little later, so some may
    // not have been read yet: then they are read after the crash, and B must still not get them
    // (they occurred before its registration).
    const saved = await savedCursor();
    if (TEST_DIALECT === 'sqlite') expect(saved).toBe(50);
    else expect(saved).toBeLessThanOrEqual(50);
    receiver.verifyWith('/b', b.secret);
    const after = await createUser(first.base, 'After B');
    await kill(first.running);
    expect(await lastEventId()).toBe(51);

    const second = await serve();
    const once = await deliveriesWhen(second.base, b.id, (ds) => ds.some((d) => d.eventId === 51 && d.status === 'succeeded'), "B's delivery of event 51 to succeed");
    expect(once.map((d) => [d.eventId, d.eventType])).toEqual([[51, 'user.created']]);
    // One more event after the restart: once it is delivered, every earlier event has been read.
    const later = await createUser(second.base, 'Later');
    const final = await deliveriesWhen(second.base, b.id, (ds) => ds.some((d) => d.eventId === 52 && d.status === 'succeeded'), "B's delivery of event 52 to succeed");
    expect(final.map((d) => d.eventId)).toEqual([52, 51]);
    // Every request B got verifies and names a user created after its registration (event 51
    // possibly twice, when the kill cut its first attempt short: at least once, same webhook-id).
    const got = receiver.to('/b').map((r) => [deliveryIdOf(r), signed(r).data.object.id]);
    expect([...new Map(got.map(([delivery, user]) => [delivery, user]))]).toEqual([
      [once[0]?.id, after],
      [final[0]?.id, later],
    ]);
    expect(await deliveries(second.base, a.id)).toEqual([]);
    expect(receiver.to('/a')).toEqual([]);
  }, 90_000);
});

describe.concurrent('webhook settings refused at start-up', () => {
  for (const [name, value] of [
    ['RESTGRAPH_WEBHOOK_RETRY_SCHEDULE', '5,soon'],
    ['RESTGRAPH_WEBHOOK_RETRY_SCHEDULE', '1.5'],
    ['RESTGRAPH_WEBHOOK_TIMEOUT_MS', '50'],
    ['RESTGRAPH_WEBHOOK_DISABLE_AFTER_HOURS', '0'],
    ['RESTGRAPH_EVENT_RETENTION_DAYS', '3651'],
  ] as const) {
    it(`${name}=${value} stops serve with RG_CONFIG_INVALID naming the variable`, async ({ cli }) => {
      const { spawn } = helpers(cli);
      const running = spawn(await freePort(), { [name]: value });
      const exit = await running.exited;
      expect(exit.code).toBe(1);
      expect(running.stderr()).toContain('[RG_CONFIG_INVALID]');
      expect(running.stderr()).toContain(name);
    });
  }
});
