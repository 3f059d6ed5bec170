import { describe, expect } from 'vitest';
import { helpers, retentionTest } from './helpers/webhook-retention.js';
import { deliveryIdOf, signed, WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * The webhook feeder saves its position lazily (see webhooks-feeder-position.test.ts), yet an
 * endpoint registered after events it does not want gets none of them, even after a SIGKILL of
 * `restgraph serve` (a child process): registering saves the position reached.
 */

const it = retentionTest;

describe.concurrent('the feeder position, saved lazily', () => {
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
    // else had to save it): after a crash, those are not read again for B. Events reach the feeder
    // after their writes have answered (delivery is off the write path; on PostgreSQL concurrent
    // creates also commit out of id order), so the last few may not have been read yet: then
    // they are read after the crash, and B must still not get them (they occurred before its
    // registration).
    const saved = await savedCursor();
    expect(saved).toBeGreaterThan(0);
    expect(saved).toBeLessThanOrEqual(50);
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
