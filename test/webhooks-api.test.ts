import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';
import { createWebhook, deliveriesOf, getWebhook, signed, WebhookReceiver, type WebhookBody } from './helpers/webhook-receiver.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * /v1/webhooks, the management API (admins only): create, list, get, patch, delete, pause,
 * resume, rotate-secret, deliveries and retry; the secret shown only on create and rotate;
 * validation with a pointer per problem; private targets refused unless allowed.
 */

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const AUTH_REQUIRED = 'Bearer realm="restgraph"';
const ADMIN_REQUIRED = 'Bearer realm="restgraph", error="insufficient_scope", scope="admin"';
const SECRET_FORMAT = /^whsec_[A-Za-z0-9+/]{43}=$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const WEBHOOK_FIELDS = ['createdAt', 'description', 'disabledReason', 'events', 'failingSince', 'id', 'status', 'updatedAt', 'url'];

interface Reply {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

interface Problem {
  type: string;
  status: number;
  code: string;
  detail: string;
  errors?: { pointer: string; detail: string }[];
}

function expectProblem(response: Reply, status: number, code: string): Problem {
  expect({ status: response.statusCode, body: response.body }).toMatchObject({ status });
  expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
  const problem = json<Problem>(response);
  expect(problem).toMatchObject({ type: `urn:restgraph:problem:${code}`, status, code });
  return problem;
}

/** A webhook as reads show it: everything but the secret. */
function withoutSecret(webhook: WebhookBody): WebhookBody {
  const copy = { ...webhook };
  delete copy.secret;
  return copy;
}

let t: TestApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  t = await startTestApp({ webhooks: { allowHosts: ['127.0.0.1'], retryScheduleSeconds: [0.1], pollIntervalMs: 50 } });
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const listed = async (): Promise<WebhookBody[]> => json<WebhookBody[]>(await t.app.inject({ method: 'GET', url: '/v1/webhooks' }));

describe('create, read, change and delete', () => {
  it('POST → 201, Location, Cache-Control no-store, every field and a whsec_ secret', async () => {
    const before = Date.now();
    const response = await t.app.inject({ method: 'POST', url: '/v1/webhooks', payload: { url: receiver.url('/crm'), events: ['user.created', 'user.updated'], description: 'CRM sync' } });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    expect(response.headers['cache-control']).toBe('no-store');
    const created = json<WebhookBody>(response);
    expect(response.headers.location).toBe(`/v1/webhooks/${created.id}`);
    expect(Object.keys(created).sort()).toEqual([...WEBHOOK_FIELDS, 'secret'].sort());
    expect(created).toMatchObject({ url: receiver.url('/crm'), events: ['user.created', 'user.updated'], description: 'CRM sync', status: 'active', disabledReason: null, failingSince: null });
    expect(created.secret).toMatch(SECRET_FORMAT);
    expect(created.createdAt).toMatch(ISO);
    expect(created.updatedAt).toBe(created.createdAt);
    expect(Date.parse(created.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    // The secret is 32 random bytes, as Standard Webhooks' libraries take it.
    expect(Buffer.from((created.secret ?? '').slice('whsec_'.length), 'base64')).toHaveLength(32);
  });

  it('description is optional (null), events are de-duplicated, and "*" subscribes to everything', async () => {
    const created = await createWebhook(t.app, { url: receiver.url('/all'), events: ['*', '*'] });
    expect(created).toMatchObject({ events: ['*'], description: null, status: 'active' });
    const twice = await createWebhook(t.app, { url: receiver.url('/twice'), events: ['user.deleted', 'post.created', 'user.deleted'] });
    expect(twice.events).toEqual(['user.deleted', 'post.created']);
  });

  it('two endpoints get different secrets', async () => {
    const a = await createWebhook(t.app, { url: receiver.url('/a'), events: ['*'] });
    const b = await createWebhook(t.app, { url: receiver.url('/a'), events: ['*'] });
    expect(a.secret).not.toBe(b.secret);
    expect(b.id).toBeGreaterThan(a.id);
  });

  it('GET list and GET one show every field but never the secret', async () => {
    const created = await createWebhook(t.app, { url: receiver.url('/listed'), events: ['order.created'], description: 'orders' });
    const list = await t.app.inject({ method: 'GET', url: '/v1/webhooks' });
    expect(list.statusCode).toBe(200);
    expect(list.headers['content-type']).toBe(JSON_TYPE);
    const webhooks = json<WebhookBody[]>(list);
    expect(webhooks.length).toBeGreaterThanOrEqual(1);
    for (const webhook of webhooks) expect(Object.keys(webhook).sort()).toEqual(WEBHOOK_FIELDS);
    const { secret, ...withoutSecret } = created;
    expect(webhooks.find((w) => w.id === created.id)).toEqual(withoutSecret);
    const one = await t.app.inject({ method: 'GET', url: `/v1/webhooks/${created.id}` });
    expect(one.statusCode).toBe(200);
    expect(json(one)).toEqual(withoutSecret);
    for (const body of [list.body, one.body]) {
      expect(body).not.toContain(secret);
      expect(body).not.toContain(secret.slice('whsec_'.length));
      expect(body).not.toContain('"secret"');
    }
  });

  it('PATCH changes only the given fields (null clears the description), never shows the secret', async () => {
    const created = await createWebhook(t.app, { url: receiver.url('/patch'), events: ['user.created'], description: 'first' });
    const response = await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${created.id}`, payload: { events: ['user.deleted', '*'] } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    const patched = json<WebhookBody>(response);
    expect(Object.keys(patched).sort()).toEqual(WEBHOOK_FIELDS);
    expect(patched).toMatchObject({ id: created.id, url: created.url, events: ['user.deleted', '*'], description: 'first', status: 'active', createdAt: created.createdAt });
    expect(Date.parse(patched.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
    expect(response.body).not.toContain(created.secret);

    const moved = json<WebhookBody>(await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${created.id}`, payload: { url: receiver.url('/patched'), description: null } }));
    expect(moved).toMatchObject({ url: receiver.url('/patched'), events: ['user.deleted', '*'], description: null });
    expect(await getWebhook(t.app, created.id)).toEqual(moved);

    const described = json<WebhookBody>(await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${created.id}`, payload: { description: 'again' } }));
    expect(described).toMatchObject({ url: receiver.url('/patched'), events: ['user.deleted', '*'], description: 'again' });
  });

  it('PATCH with {} changes nothing', async () => {
    const created = await createWebhook(t.app, { url: receiver.url('/same'), events: ['user.created'], description: 'same' });
    const response = await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${created.id}`, payload: {} });
    expect(response.statusCode).toBe(200);
    expect(json(response)).toMatchObject({ url: created.url, events: created.events, description: created.description, status: 'active' });
  });

  // PATCH is a merge patch in meaning ({url?, events?, description?}, null clears): a client that
  // says so with the RFC 7396 media type, as it does for resources, should be understood.
  it('PATCH accepts application/merge-patch+json as well as application/json', async () => {
    const created = await createWebhook(t.app, { url: receiver.url('/merge'), events: ['user.created'], description: 'merge' });
    const response = await t.app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/${created.id}`,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ description: null }),
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toMatchObject({ id: created.id, description: null, events: ['user.created'] });
  });

  it('DELETE → 204 with no body; then GET, PATCH, DELETE, pause and deliveries are 404, and the list no longer has it', async () => {
    const created = await createWebhook(t.app, { url: receiver.url('/gone'), events: ['*'] });
    const deleted = await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${created.id}` });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await listed()).some((w) => w.id === created.id)).toBe(false);
    expectProblem(await t.app.inject({ method: 'GET', url: `/v1/webhooks/${created.id}` }), 404, 'not-found');
    expectProblem(await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${created.id}`, payload: { description: 'x' } }), 404, 'not-found');
    expectProblem(await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${created.id}` }), 404, 'not-found');
    expectProblem(await t.app.inject({ method: 'POST', url: `/v1/webhooks/${created.id}/pause` }), 404, 'not-found');
    expectProblem(await t.app.inject({ method: 'GET', url: `/v1/webhooks/${created.id}/deliveries` }), 404, 'not-found');
  });

  it('unknown and non-numeric ids → 404 not-found on every route', async () => {
    for (const id of ['999999', 'abc', '0', '-1', '1.5']) {
      for (const [method, url] of [
        ['GET', `/v1/webhooks/${id}`],
        ['DELETE', `/v1/webhooks/${id}`],
        ['POST', `/v1/webhooks/${id}/pause`],
        ['POST', `/v1/webhooks/${id}/resume`],
        ['POST', `/v1/webhooks/${id}/rotate-secret`],
        ['GET', `/v1/webhooks/${id}/deliveries`],
        ['POST', `/v1/webhooks/${id}/deliveries/1/retry`],
      ] as const) {
        const response = await t.app.inject({ method, url });
        expect({ method, url, status: response.statusCode }).toEqual({ method, url, status: 404 });
        expectProblem(response, 404, 'not-found');
      }
    }
  });

  it('a delivery id that does not exist, or belongs to another webhook, → 404 on retry', async () => {
    const a = await createWebhook(t.app, { url: receiver.url('/retry-a'), events: ['user.created'] });
    const b = await createWebhook(t.app, { url: receiver.url('/retry-b'), events: ['user.created'] });
    receiver.verifyWith('/retry-a', a.secret);
    receiver.verifyWith('/retry-b', b.secret);
    expect((await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Retry' } })).statusCode).toBe(201);
    await receiver.waitFor((r) => r.to('/retry-a').length >= 1 && r.to('/retry-b').length >= 1, 'both deliveries');
    const [ofA] = await deliveriesOf(t.app, a.id);
    expectProblem(await t.app.inject({ method: 'POST', url: `/v1/webhooks/${b.id}/deliveries/${ofA?.id ?? 0}/retry` }), 404, 'not-found');
    expectProblem(await t.app.inject({ method: 'POST', url: `/v1/webhooks/${a.id}/deliveries/999999/retry` }), 404, 'not-found');
    expectProblem(await t.app.inject({ method: 'POST', url: `/v1/webhooks/${a.id}/deliveries/abc/retry` }), 404, 'not-found');
    const retried = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${a.id}/deliveries/${ofA?.id ?? 0}/retry` });
    expect(retried.statusCode).toBe(202);
    expect(retried.body).toBe('');
    await receiver.waitFor((r) => r.to('/retry-a').length === 2, 'the redelivery');
    const [first, second] = receiver.to('/retry-a');
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(second?.body).toBe(first?.body);
    for (const request of [...receiver.to('/retry-a'), ...receiver.to('/retry-b')]) expect(signed(request).type).toBe('user.created');
  });

  it('other methods → 405 method-not-allowed with Allow', async () => {
    const created = await createWebhook(t.app, { url: receiver.url('/methods'), events: ['*'] });
    for (const [method, url, allow] of [
      ['DELETE', '/v1/webhooks', 'GET, POST, HEAD, OPTIONS'],
      ['PUT', `/v1/webhooks/${created.id}`, 'GET, PATCH, DELETE, HEAD, OPTIONS'],
      ['GET', `/v1/webhooks/${created.id}/pause`, 'POST, OPTIONS'],
      ['DELETE', `/v1/webhooks/${created.id}/rotate-secret`, 'POST, OPTIONS'],
      ['POST', `/v1/webhooks/${created.id}/deliveries`, 'GET, HEAD, OPTIONS'],
      ['GET', `/v1/webhooks/${created.id}/deliveries/1/retry`, 'POST, OPTIONS'],
    ] as const) {
      const response = await t.app.inject({ method, url });
      expectProblem(response, 405, 'method-not-allowed');
      expect({ url, allow: response.headers.allow }).toEqual({ url, allow });
    }
    expect((await getWebhook(t.app, created.id)).status).toBe('active');
  });

  it('a new endpoint has no deliveries: []', async () => {
    const created = await createWebhook(t.app, { url: receiver.url('/none'), events: ['product.deleted'] });
    const response = await t.app.inject({ method: 'GET', url: `/v1/webhooks/${created.id}/deliveries` });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    expect(json(response)).toEqual([]);
  });
});

describe('pause, resume and rotate-secret', () => {
  it('pause → 200 paused; pausing again stays paused; resume → 200 active; neither shows the secret', async () => {
    const created = await createWebhook(t.app, { url: receiver.url('/pause'), events: ['*'] });
    for (let i = 0; i < 2; i++) {
      const paused = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${created.id}/pause` });
      expect(paused.statusCode).toBe(200);
      expect(paused.headers['content-type']).toBe(JSON_TYPE);
      expect(Object.keys(json<WebhookBody>(paused)).sort()).toEqual(WEBHOOK_FIELDS);
      expect(json(paused)).toMatchObject({ id: created.id, status: 'paused', disabledReason: null });
      expect((await getWebhook(t.app, created.id)).status).toBe('paused');
    }
    const resumed = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${created.id}/resume` });
    expect(resumed.statusCode).toBe(200);
    expect(json(resumed)).toMatchObject({ id: created.id, status: 'active', disabledReason: null, failingSince: null });
    expect((await getWebhook(t.app, created.id)).status).toBe('active');
    expect(resumed.body).not.toContain(created.secret);
  });

  it('rotate-secret → 200 with a new secret and no-store; later deliveries verify with the new secret only', async () => {
    const created = await createWebhook(t.app, { url: receiver.url('/rotate'), events: ['user.created'] });
    receiver.verifyWith('/rotate', created.secret);
    expect((await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Before rotation' } })).statusCode).toBe(201);
    await receiver.waitFor((r) => r.to('/rotate').length === 1, 'the delivery before rotation');
    const before = receiver.to('/rotate')[0];
    expect(before === undefined ? undefined : signed(before).data.object.name).toBe('Before rotation');

    const rotated = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${created.id}/rotate-secret` });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.headers['content-type']).toBe(JSON_TYPE);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const body = json<WebhookBody>(rotated);
    expect(Object.keys(body).sort()).toEqual([...WEBHOOK_FIELDS, 'secret'].sort());
    expect(body).toMatchObject({ id: created.id, url: created.url, events: created.events, status: 'active' });
    const secret = body.secret ?? '';
    expect(secret).toMatch(SECRET_FORMAT);
    expect(secret).not.toBe(created.secret);
    expect(JSON.stringify(await getWebhook(t.app, created.id))).not.toContain(secret);

    receiver.verifyWith('/rotate', secret);
    expect((await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'After rotation' } })).statusCode).toBe(201);
    await receiver.waitFor((r) => r.to('/rotate').length === 2, 'the delivery after rotation');
    const after = receiver.to('/rotate')[1];
    if (after === undefined) throw new Error('no second delivery');
    expect(signed(after).data.object.name).toBe('After rotation');
    expect(() => new Webhook(created.secret).verify(after.body, after.headers)).toThrow(WebhookVerificationError);
  });
});

describe('validation: 422 validation-failed with a pointer per problem, nothing stored', () => {
  const cases: { name: string; payload: unknown; pointers: string[] }[] = [
    { name: 'no url', payload: { events: ['*'] }, pointers: ['/url'] },
    { name: 'not a URL', payload: { url: 'not a url', events: ['*'] }, pointers: ['/url'] },
    { name: 'a relative URL', payload: { url: '/hook', events: ['*'] }, pointers: ['/url'] },
    { name: 'an ftp URL', payload: { url: 'ftp://127.0.0.1/hook', events: ['*'] }, pointers: ['/url'] },
    { name: 'a javascript: URL', payload: { url: 'javascript:alert(1)', events: ['*'] }, pointers: ['/url'] },
    { name: 'a URL that is a number', payload: { url: 42, events: ['*'] }, pointers: ['/url'] },
    { name: 'a URL over 2048 characters', payload: { url: `http://127.0.0.1/${'a'.repeat(2048)}`, events: ['*'] }, pointers: ['/url'] },
    { name: 'a private 10/8 address', payload: { url: 'http://10.0.0.1/hook', events: ['*'] }, pointers: ['/url'] },
    { name: 'a private 192.168/16 address', payload: { url: 'https://192.168.1.20/hook', events: ['*'] }, pointers: ['/url'] },
    { name: 'the cloud metadata address 169.254.169.254', payload: { url: 'http://169.254.169.254/latest/meta-data/', events: ['*'] }, pointers: ['/url'] },
    { name: 'IPv6 loopback [::1]', payload: { url: 'http://[::1]:8080/hook', events: ['*'] }, pointers: ['/url'] },
    { name: 'IPv4-mapped IPv6 of 10.0.0.1', payload: { url: 'http://[::ffff:10.0.0.1]/hook', events: ['*'] }, pointers: ['/url'] },
    { name: '0.0.0.0', payload: { url: 'http://0.0.0.0:8080/hook', events: ['*'] }, pointers: ['/url'] },
    { name: 'another loopback address than the allowed one', payload: { url: 'http://127.0.0.2/hook', events: ['*'] }, pointers: ['/url'] },
    { name: 'no events', payload: { url: 'http://127.0.0.1/hook' }, pointers: ['/events'] },
    { name: 'empty events', payload: { url: 'http://127.0.0.1/hook', events: [] }, pointers: ['/events'] },
    { name: 'events as a string', payload: { url: 'http://127.0.0.1/hook', events: 'user.created' }, pointers: ['/events'] },
    { name: 'an unknown event type', payload: { url: 'http://127.0.0.1/hook', events: ['user.exploded'] }, pointers: ['/events/0'] },
    { name: 'a resource that does not exist', payload: { url: 'http://127.0.0.1/hook', events: ['user.created', 'invoice.created'] }, pointers: ['/events/1'] },
    { name: 'a plural resource name', payload: { url: 'http://127.0.0.1/hook', events: ['users.created'] }, pointers: ['/events/0'] },
    { name: 'a non-string event', payload: { url: 'http://127.0.0.1/hook', events: ['*', 5, null] }, pointers: ['/events/1', '/events/2'] },
    { name: 'a description that is a number', payload: { url: 'http://127.0.0.1/hook', events: ['*'], description: 5 }, pointers: ['/description'] },
    { name: 'a description over 500 characters', payload: { url: 'http://127.0.0.1/hook', events: ['*'], description: 'd'.repeat(501) }, pointers: ['/description'] },
    { name: 'an unknown field', payload: { url: 'http://127.0.0.1/hook', events: ['*'], secret: 'whsec_AAAA' }, pointers: ['/secret'] },
    { name: 'a read-only field', payload: { url: 'http://127.0.0.1/hook', events: ['*'], status: 'paused' }, pointers: ['/status'] },
    { name: 'several at once', payload: { url: 'ftp://x', events: [], extra: true }, pointers: ['/extra', '/url', '/events'] },
    { name: 'an array body', payload: [], pointers: [''] },
  ];
  for (const c of cases) {
    it(`POST: ${c.name} → ${c.pointers.join(', ') || "''"}`, async () => {
      const count = (await listed()).length;
      const response = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(c.payload) });
      const problem = expectProblem(response, 422, 'validation-failed');
      expect((problem.errors ?? []).map((e) => e.pointer)).toEqual(c.pointers);
      for (const error of problem.errors ?? []) expect(error.detail).toEqual(expect.any(String));
      expect((await listed()).length).toBe(count);
    });
  }

  it('a refused target says why, naming the address', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/webhooks', payload: { url: 'http://169.254.169.254/', events: ['*'] } });
    const problem = expectProblem(response, 422, 'validation-failed');
    expect(problem.errors).toEqual([{ pointer: '/url', detail: expect.stringContaining('169.254.169.254') as string }]);
  });

  const patches: { name: string; payload: unknown; pointers: string[] }[] = [
    { name: 'a private url', payload: { url: 'http://10.0.0.1/' }, pointers: ['/url'] },
    { name: 'an ftp url', payload: { url: 'ftp://127.0.0.1/' }, pointers: ['/url'] },
    { name: 'url null', payload: { url: null }, pointers: ['/url'] },
    { name: 'empty events', payload: { events: [] }, pointers: ['/events'] },
    { name: 'events null', payload: { events: null }, pointers: ['/events'] },
    { name: 'an unknown event type', payload: { events: ['*', 'user.renamed'] }, pointers: ['/events/1'] },
    { name: 'a description that is an object', payload: { description: {} }, pointers: ['/description'] },
    { name: 'the secret', payload: { secret: 'whsec_AAAA' }, pointers: ['/secret'] },
    { name: 'the status', payload: { status: 'active' }, pointers: ['/status'] },
    { name: 'a string body', payload: 'x', pointers: [''] },
  ];
  for (const c of patches) {
    it(`PATCH: ${c.name} → ${c.pointers.join(', ') || "''"}, and the endpoint is unchanged`, async () => {
      const created = await createWebhook(t.app, { url: receiver.url('/unchanged'), events: ['user.created'], description: 'kept' });
      const stored = withoutSecret(created);
      const response = await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${created.id}`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(c.payload) });
      const problem = expectProblem(response, 422, 'validation-failed');
      expect((problem.errors ?? []).map((e) => e.pointer)).toEqual(c.pointers);
      expect(await getWebhook(t.app, created.id)).toEqual(stored);
    });
  }

  it('malformed JSON → 400, no Content-Type → 415', async () => {
    const count = (await listed()).length;
    expectProblem(await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'content-type': 'application/json' }, payload: '{"url":' }), 400, 'malformed-json');
    expectProblem(await t.app.inject({ method: 'POST', url: '/v1/webhooks' }), 415, 'unsupported-media-type');
    expect((await listed()).length).toBe(count);
  });
});

describe('private targets with no allow list', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp();
  });
  afterAll(async () => strict.close());

  for (const url of ['http://localhost:8080/hook', 'http://127.0.0.1:8080/hook', 'http://[::1]/hook', 'http://10.0.0.1/hook', 'http://169.254.169.254/', 'http://172.16.5.4/', 'http://[fd00::1]/', 'http://[fe80::1]/']) {
    it(`${url} → 422 /url`, async () => {
      const response = await strict.app.inject({ method: 'POST', url: '/v1/webhooks', payload: { url, events: ['*'] } });
      const problem = expectProblem(response, 422, 'validation-failed');
      expect(problem.errors?.map((e) => e.pointer)).toEqual(['/url']);
      expect(json<WebhookBody[]>(await strict.app.inject({ method: 'GET', url: '/v1/webhooks' }))).toEqual([]);
    });
  }

  it('a public address literal is accepted', async () => {
    const created = await createWebhook(strict.app, { url: 'https://93.184.215.14/hook', events: ['product.created'] });
    expect(created.url).toBe('https://93.184.215.14/hook');
    expect((await strict.app.inject({ method: 'DELETE', url: `/v1/webhooks/${created.id}` })).statusCode).toBe(204);
  });

  it('an allowed CIDR range lets its addresses through, and only those', async () => {
    const ranged = await startTestApp({ webhooks: { allowHosts: ['127.0.0.0/8'] } });
    try {
      expect((await ranged.app.inject({ method: 'POST', url: '/v1/webhooks', payload: { url: 'http://127.0.0.5:9/hook', events: ['*'] } })).statusCode).toBe(201);
      const refused = await ranged.app.inject({ method: 'POST', url: '/v1/webhooks', payload: { url: 'http://10.0.0.1/hook', events: ['*'] } });
      expect(expectProblem(refused, 422, 'validation-failed').errors?.map((e) => e.pointer)).toEqual(['/url']);
    } finally {
      await ranged.close();
    }
  });
});

describe('admins only', () => {
  let userKey: string;
  let adminKey: string;
  let webhook: WebhookBody & { secret: string };

  beforeAll(async () => {
    const key = async (scopes: string[]): Promise<string> => {
      const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { scopes } });
      expect(response.statusCode).toBe(201);
      return json<{ key: string }>(response).key;
    };
    userKey = await key(['users:read', 'users:write', 'posts:write', 'products:write', 'orders:read', 'orders:write']);
    adminKey = await key(['admin']);
    webhook = await createWebhook(t.app, { url: receiver.url('/guarded'), events: ['user.created'], description: 'guarded' });
  });

  const routes = (): { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; payload?: Record<string, unknown> }[] => [
    { method: 'GET', url: '/v1/webhooks' },
    { method: 'POST', url: '/v1/webhooks', payload: { url: receiver.url('/intruder'), events: ['*'] } },
    { method: 'GET', url: `/v1/webhooks/${webhook.id}` },
    { method: 'PATCH', url: `/v1/webhooks/${webhook.id}`, payload: { url: receiver.url('/intruder') } },
    { method: 'DELETE', url: `/v1/webhooks/${webhook.id}` },
    { method: 'POST', url: `/v1/webhooks/${webhook.id}/pause` },
    { method: 'POST', url: `/v1/webhooks/${webhook.id}/resume` },
    { method: 'POST', url: `/v1/webhooks/${webhook.id}/rotate-secret` },
    { method: 'GET', url: `/v1/webhooks/${webhook.id}/deliveries` },
    { method: 'POST', url: `/v1/webhooks/${webhook.id}/deliveries/1/retry` },
  ];

  const expectUntouched = async (count: number): Promise<void> => {
    const stored = withoutSecret(webhook);
    expect(await getWebhook(t.app, webhook.id)).toEqual(stored);
    expect((await listed()).length).toBe(count);
  };

  it('anonymous → 401 authentication-required with WWW-Authenticate on every route, nothing changed', async () => {
    const count = (await listed()).length;
    for (const route of routes()) {
      const response = await t.app.inject({ ...route, headers: { authorization: '' } });
      expect({ route: `${route.method} ${route.url}`, status: response.statusCode }).toEqual({ route: `${route.method} ${route.url}`, status: 401 });
      const problem = expectProblem(response, 401, 'authentication-required');
      expect(response.headers['www-authenticate']).toBe(AUTH_REQUIRED);
      expect(response.body).not.toContain(webhook.secret);
      expect(problem.detail).toEqual(expect.any(String));
    }
    await expectUntouched(count);
  });

  it('a key with every resource scope but not admin → 403 forbidden (scope="admin") on every route, nothing changed', async () => {
    const count = (await listed()).length;
    for (const route of routes()) {
      const response = await t.app.inject({ ...route, headers: { authorization: `Bearer ${userKey}` } });
      expect({ route: `${route.method} ${route.url}`, status: response.statusCode }).toEqual({ route: `${route.method} ${route.url}`, status: 403 });
      expectProblem(response, 403, 'forbidden');
      expect(response.headers['www-authenticate']).toBe(ADMIN_REQUIRED);
      expect(response.body).not.toContain(webhook.secret);
    }
    await expectUntouched(count);
  });

  it('an unknown key → 401 invalid-token', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: { authorization: 'Bearer rg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
    expectProblem(response, 401, 'invalid-token');
  });

  it('a key with the admin scope manages webhooks', async () => {
    const headers = { authorization: `Bearer ${adminKey}` };
    const created = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers, payload: { url: receiver.url('/by-key'), events: ['*'] } });
    expect(created.statusCode).toBe(201);
    const id = json<WebhookBody>(created).id;
    expect((await t.app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${id}`, headers })).statusCode).toBe(204);
  });

  // The messages are shared with /v1/tokens; on /v1/webhooks they should not talk about tokens.
  it('the 401 and 403 details speak of webhooks, not tokens', async () => {
    const anonymous = expectProblem(await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: { authorization: '' } }), 401, 'authentication-required');
    const forbidden = expectProblem(await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: { authorization: `Bearer ${userKey}` } }), 403, 'forbidden');
    for (const detail of [anonymous.detail, forbidden.detail]) expect(detail).not.toMatch(/managing tokens/i);
  });
});

afterEach(() => {
  // Every request the receiver checked must have verified with the secret of its endpoint.
  const bad = receiver.requests.filter((r) => r.checkedWith !== undefined && r.verifyError !== undefined);
  expect(bad.map((r) => `${r.path} ${r.verifyError ?? ''}`)).toEqual([]);
});
