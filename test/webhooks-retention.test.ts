import { describe, expect } from 'vitest';
import { freePort } from './helpers/cli-process.js';
import { helpers, retentionTest, stop } from './helpers/webhook-retention.js';
import { answer, deliveryIdOf, signed, WebhookReceiver, type DeliveryView } from './helpers/webhook-receiver.js';

/**
 * Retention of webhook deliveries, with `restgraph serve` as a child process: finished deliveries
 * (and their attempt logs) go with the event retention at start-up, pending ones stay. (The feeder
 * position is in webhooks-feeder-position.test.ts, refused settings in webhooks-settings.test.ts.)
 */

const HOUR = 60 * 60 * 1000;

const it = retentionTest;

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
