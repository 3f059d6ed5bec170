import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { AUTHOR_DRAFT_POSTS } from './helpers/author-drafts-schema.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { createWebhook, signed, WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * Webhooks are configured by admins and receive every event whole, whatever the access rules hide
 * from subscribers (issue 35, point 4): a draft's events with the field only its author may read,
 * and the previous values of an update.
 */

const SCHEMA = `resources:${AUTHOR_DRAFT_POSTS}`;

describe('webhooks under access rules', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), jwt: { secret: RULES_JWT_SECRET }, webhooks: { allowHosts: ['127.0.0.1'], pollIntervalMs: 50 } });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('get every event with every field, and previous', async () => {
    const hook = await createWebhook(t.app, { url: receiver.url('/all'), events: ['*'] });
    receiver.verifyWith('/all', hook.secret);
    const alice = await bearerJwt({ sub: 'alice' });
    const created = await t.app.inject({ method: 'POST', url: '/posts', headers: { authorization: alice }, payload: { title: 'draft', authorId: 'alice', notes: 'mine' } });
    expect(created.statusCode, created.body).toBe(201);
    const id = json<{ id: number }>(created).id;
    // By admin (inject's default), to another author: no subscriber but admin would see the notes of both versions.
    expect((await t.app.inject({ method: 'PATCH', url: `/posts/${id}`, payload: { authorId: 'bob', notes: 'his' } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/posts/${id}` })).statusCode).toBe(204);
    await receiver.waitFor((r) => r.to('/all').length >= 3, 'three deliveries');
    const bodies = receiver.to('/all').map(signed);
    expect(bodies.map((b) => b.type)).toEqual(['post.created', 'post.updated', 'post.deleted']);
    expect(bodies[0]?.data.object).toMatchObject({ title: 'draft', published: false, authorId: 'alice', notes: 'mine' });
    expect(bodies[1]?.data.object).toMatchObject({ authorId: 'bob', notes: 'his' });
    expect(bodies[1]?.data.previous).toMatchObject({ authorId: 'alice', notes: 'mine' });
    expect(bodies[2]?.data.object).toMatchObject({ authorId: 'bob', notes: 'his' });
  });
});
