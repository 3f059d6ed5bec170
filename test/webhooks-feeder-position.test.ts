import { describe, expect } from 'vitest';
import { helpers, retentionTest } from './helpers/webhook-retention.js';
import { deliveryIdOf, signed, waitUntil, WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * The webhook feeder saves its position lazily (events no endpoint wants cost no write), with
 * `restgraph serve` as a child process: yet a SIGKILL duplicates no delivery. (An endpoint
 * registered after unwanted events: webhooks-feeder-registration.test.ts.)
 */

const it = retentionTest;

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
});
