import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../src/openapi/openapi-types.js';
import type { ResponseConformance } from './helpers/openapi-conformance.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response below is checked against the documents; a non-conforming one fails its test.
checkResponsesAgainstOpenApi();

/**
 * Drives every operation of the OpenAPI documents with good and bad input, so that each success
 * status and each error status the documents name for REST (400, 401, 403, 404, 405, 406, 409,
 * 412, 413, 414, 415, 422, 503) is produced at least once and checked against them. Then checks that
 * every operation of both documents was answered with a success, and the checker itself: it must
 * reject what does not conform.
 */

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface Call {
  method: Method;
  url: string;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

const RESOURCES = ['users', 'posts', 'products', 'orders'] as const;
type ResourceName = (typeof RESOURCES)[number];

let t: TestApp;
let conformance: ResponseConformance;
let reader = '';
let stranger = '';

async function call(c: Call): Promise<Awaited<ReturnType<TestApp['app']['inject']>>> {
  const headers: Record<string, string> = { ...c.headers };
  const request: InjectOptions = { method: c.method, url: c.url, headers };
  if (c.raw !== undefined) request.payload = c.raw;
  else if (c.body !== undefined) request.payload = c.body as InjectOptions['payload'];
  return t.app.inject(request);
}

/** Sends the request and expects this status (the conformance check runs inside inject). */
async function expectStatus(c: Call, status: number): Promise<unknown> {
  const response = await call(c);
  expect(response.statusCode, `${c.method} ${c.url}: ${response.body.slice(0, 300)}`).toBe(status);
  return response.body === '' ? undefined : (JSON.parse(response.body) as unknown);
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const anonymous = { authorization: '' };

/** A valid new row of each resource; posts and orders refer to the user and product given. */
function newRow(resource: ResourceName, n: number, refs: { user: number; product: number }): Record<string, unknown> {
  switch (resource) {
    case 'users':
      return { name: `User ${n}`, email: `user${n}@example.com` };
    case 'posts':
      return { title: `Post ${n}`, userId: refs.user, tags: ['a'], publishedAt: '2026-01-01T00:00:00Z' };
    case 'products':
      return { name: `Product ${n}`, sku: `SKU-${n}`, price: 9.5 };
    case 'orders':
      return { userId: refs.user, productId: refs.product, quantity: 2, placedOn: '2026-11-20' };
  }
}

beforeAll(async () => {
  t = await startTestApp({ webhooks: { allowHosts: ['127.0.0.1'], retryScheduleSeconds: [3600], pollIntervalMs: 50 } });
  if (t.conformance === undefined) throw new Error('conformance checks are off');
  conformance = t.conformance;
  reader = (json<{ key: string }>(await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'reader', scopes: ['users:read'] } }))).key;
  stranger = (json<{ key: string }>(await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'writer', scopes: ['posts:write', 'orders:write'], subject: '2' } }))).key;
});
afterAll(async () => t.close());

describe('every resource operation, good input, on both documents', () => {
  for (const prefix of ['', '/v1']) {
    it(`${prefix || '(unversioned)'}: list, create, read, replace, patch, relations, delete`, async () => {
      const ids = {} as Record<ResourceName, number>;
      // users and products first: posts and orders refer to them.
      for (const resource of ['users', 'products', 'posts', 'orders'] as const) {
        const row = newRow(resource, prefix === '' ? 1 : 2, { user: ids.users, product: ids.products });
        ids[resource] = ((await expectStatus({ method: 'POST', url: `${prefix}/${resource}`, body: row }, 201)) as { id: number }).id;
      }
      for (const resource of RESOURCES) {
        const item = `${prefix}/${resource}/${ids[resource]}`;
        await expectStatus({ method: 'GET', url: `${prefix}/${resource}?count=true&limit=1&sort=-id` }, 200);
        await expectStatus({ method: 'HEAD', url: `${prefix}/${resource}` }, 200);
        await expectStatus({ method: 'GET', url: `${item}?fields=id,createdAt` }, 200);
        const current = (await expectStatus({ method: 'GET', url: item }, 200)) as Record<string, unknown>;
        await expectStatus({ method: 'PUT', url: item, body: { ...current } }, 200);
        const patch = resource === 'users' ? { bio: null } : resource === 'posts' ? { body: 'text' } : resource === 'products' ? { stock: 3 } : { note: 'hi' };
        await expectStatus({ method: 'PATCH', url: item, raw: JSON.stringify(patch), headers: { 'content-type': 'application/merge-patch+json' } }, 200);
      }
      for (const [resource, relation] of [['users', 'posts'], ['users', 'orders'], ['posts', 'user'], ['products', 'orders'], ['orders', 'user'], ['orders', 'product']] as const) {
        await expectStatus({ method: 'GET', url: `${prefix}/${resource}/${ids[resource]}/${relation}?fields=id` }, 200);
      }
      await expectStatus({ method: 'GET', url: `${prefix}/users/${ids.users}?include=posts,orders` }, 200);
      for (const resource of ['orders', 'posts', 'products', 'users'] as const) await expectStatus({ method: 'DELETE', url: `${prefix}/${resource}/${ids[resource]}` }, 204);
    });
  }
});

describe('bad input on the resource paths', () => {
  let etag = '';
  let user = '';
  let post = '';
  let refs = { user: 0, product: 0 };
  beforeAll(async () => {
    const id = async (url: string, body: Record<string, unknown>): Promise<number> => ((await expectStatus({ method: 'POST', url, body }, 201)) as { id: number }).id;
    const userId = await id('/users', { name: 'Alice', email: 'alice@example.com' });
    refs = { user: userId, product: await id('/products', newRow('products', 9, refs)) };
    await id('/orders', newRow('orders', 9, refs));
    user = `/users/${userId}`;
    post = `/posts/${await id('/posts', newRow('posts', 9, refs))}`;
    etag = String((await call({ method: 'GET', url: user })).headers.etag);
  });

  it('400: malformed JSON, invalid query, bad Idempotency-Key', async () => {
    await expectStatus({ method: 'POST', url: '/users', raw: '{"name":', headers: { 'content-type': 'application/json' } }, 400);
    await expectStatus({ method: 'GET', url: '/users?nmae=x&limit=0' }, 400);
    await expectStatus({ method: 'GET', url: `${user}?sort=name` }, 400);
    await expectStatus({ method: 'GET', url: `${user}/posts?zzz=1` }, 400);
    await expectStatus({ method: 'POST', url: '/users', body: { name: 'K' }, headers: { 'idempotency-key': 'has space' } }, 400);
  });

  it('401 and 403: no token, a bad token (even on public paths), too few scopes, the owner rule', async () => {
    await expectStatus({ method: 'GET', url: '/users', headers: anonymous }, 401);
    await expectStatus({ method: 'GET', url: '/posts', headers: bearer('rg_not-a-key') }, 401);
    await expectStatus({ method: 'GET', url: '/', headers: bearer('rg_not-a-key') }, 401);
    await expectStatus({ method: 'GET', url: '/posts?include=user', headers: anonymous }, 401);
    await expectStatus({ method: 'GET', url: '/posts', headers: anonymous }, 200);
    await expectStatus({ method: 'POST', url: '/users', body: { name: 'No' }, headers: bearer(reader) }, 403);
    await expectStatus({ method: 'GET', url: `${user}/orders`, headers: bearer(reader) }, 403);
    await expectStatus({ method: 'POST', url: '/orders', body: newRow('orders', 3, refs), headers: bearer(stranger) }, 403);
    await expectStatus({ method: 'PATCH', url: post, body: { title: 'Mine' }, headers: bearer(stranger) }, 403);
  });

  it('404, 405, 406, 414 and 415', async () => {
    await expectStatus({ method: 'GET', url: '/users/999' }, 404);
    await expectStatus({ method: 'GET', url: '/users/abc' }, 404);
    await expectStatus({ method: 'GET', url: '/users/999/posts' }, 404);
    await expectStatus({ method: 'DELETE', url: '/users/999' }, 404);
    await expectStatus({ method: 'GET', url: '/nothing/here' }, 404);
    await expectStatus({ method: 'DELETE', url: '/users' }, 405);
    await expectStatus({ method: 'GET', url: '/users', headers: { accept: 'text/html' } }, 406);
    await expectStatus({ method: 'GET', url: '/docs', headers: { accept: 'application/json' } }, 406);
    await expectStatus({ method: 'GET', url: `/users/${'1'.repeat(201)}` }, 414);
    await expectStatus({ method: 'POST', url: '/users', raw: 'name=x', headers: { 'content-type': 'text/plain' } }, 415);
    await expectStatus({ method: 'PUT', url: user, body: { name: 'x' }, headers: { 'content-type': 'application/merge-patch+json' } }, 415);
  });

  it('409, 412, 413 and 422', async () => {
    await expectStatus({ method: 'POST', url: '/users', body: { name: 'Twin', email: 'alice@example.com' } }, 409);
    await expectStatus({ method: 'DELETE', url: user }, 409);
    await expectStatus({ method: 'PUT', url: user, body: { name: 'Stale' }, headers: { 'if-match': '"stale"' } }, 412);
    await expectStatus({ method: 'PATCH', url: user, body: { bio: 'Stale' }, headers: { 'if-match': '"stale"' } }, 412);
    await expectStatus({ method: 'DELETE', url: user, headers: { 'if-match': '"stale"' } }, 412);
    await expectStatus({ method: 'PATCH', url: user, body: { bio: 'Fresh' }, headers: { 'if-match': etag } }, 200);
    await expectStatus({ method: 'GET', url: user, headers: { 'if-none-match': String((await call({ method: 'GET', url: user })).headers.etag) } }, 304);
    await expectStatus({ method: 'GET', url: `${post}/user`, headers: { 'if-none-match': '*' } }, 304);
    await expectStatus({ method: 'POST', url: '/users', raw: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } }, 413);
    await expectStatus({ method: 'POST', url: '/users', body: { name: '', email: 'nope', age: 3 } }, 422);
    await expectStatus({ method: 'PUT', url: user, body: { bio: 'no name' } }, 422);
    await expectStatus({ method: 'POST', url: '/posts', body: { title: 'Orphan', userId: 999 } }, 422);
  });

  it('Idempotency-Key: a replay, and the same key with another body (422)', async () => {
    const key = { 'idempotency-key': 'openapi-test-1' };
    await expectStatus({ method: 'POST', url: '/users', body: { name: 'Once' }, headers: key }, 201);
    const replay = await call({ method: 'POST', url: '/users', body: { name: 'Once' }, headers: key });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    await expectStatus({ method: 'POST', url: '/users', body: { name: 'Twice' }, headers: key }, 422);
    await expectStatus({ method: 'PATCH', url: user, body: { bio: 'p' }, headers: { 'idempotency-key': 'openapi-test-2' } }, 200);
    await expectStatus({ method: 'PATCH', url: user, body: { bio: 'q' }, headers: { 'idempotency-key': 'openapi-test-2' } }, 422);
  });

  it('aggregates of every resource, in both documents, and their refusal', async () => {
    for (const prefix of ['', '/v1']) for (const resource of ['users', 'posts', 'products', 'orders']) await expectStatus({ method: 'GET', url: `${prefix}/${resource}/aggregate?count=true` }, 200);
    await expectStatus({ method: 'GET', url: '/orders/aggregate?groupBy=status&sum=quantity&min=placedOn&max=note&countDistinct=userId&sort=-sum.quantity' }, 200);
    await expectStatus({ method: 'GET', url: '/orders/aggregate?sum=note' }, 400);
  });

  it('paging with Link and X-Total-Count', async () => {
    const first = await call({ method: 'GET', url: '/users?limit=1&count=true' });
    const link = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
    expect(link).toBeDefined();
    await expectStatus({ method: 'GET', url: new URL(link ?? '').pathname + new URL(link ?? '').search }, 200);
    await expectStatus({ method: 'GET', url: '/users?after=garbage' }, 400);
  });
});

describe('the service paths', () => {
  it('API keys: create, list, get, revoke, and their refusals', async () => {
    const created = (await expectStatus({ method: 'POST', url: '/v1/tokens', body: { name: 'ci', scopes: ['products:write'], expires: '30d' } }, 201)) as { id: number };
    await expectStatus({ method: 'GET', url: '/v1/tokens' }, 200);
    await expectStatus({ method: 'GET', url: `/v1/tokens/${created.id}` }, 200);
    await expectStatus({ method: 'DELETE', url: `/v1/tokens/${created.id}` }, 204);
    await expectStatus({ method: 'GET', url: '/v1/tokens/999' }, 404);
    await expectStatus({ method: 'POST', url: '/v1/tokens', body: { scopes: [] } }, 422);
    await expectStatus({ method: 'GET', url: '/v1/tokens', headers: bearer(reader) }, 403);
    await expectStatus({ method: 'GET', url: '/v1/tokens', headers: anonymous }, 401);
  });

  it('GET /v1/auth/me: admin, a scoped key, anonymous, and an invalid token', async () => {
    await expectStatus({ method: 'GET', url: '/v1/auth/me' }, 200);
    await expectStatus({ method: 'GET', url: '/v1/auth/me', headers: bearer(reader) }, 200);
    await expectStatus({ method: 'GET', url: '/v1/auth/me', headers: anonymous }, 200);
    await expectStatus({ method: 'GET', url: '/v1/auth/me', headers: bearer('rg_not-a-key') }, 401);
  });

  it('webhooks: every operation, a delivery retried, and refusals', async () => {
    const hook = (await expectStatus({ method: 'POST', url: '/v1/webhooks', body: { url: 'http://127.0.0.1:9/hook', events: ['user.created'] } }, 201)) as { id: number };
    const base = `/v1/webhooks/${hook.id}`;
    await expectStatus({ method: 'GET', url: '/v1/webhooks' }, 200);
    await expectStatus({ method: 'GET', url: base }, 200);
    await expectStatus({ method: 'PATCH', url: base, body: { description: 'test' } }, 200);
    await expectStatus({ method: 'POST', url: `${base}/pause` }, 200);
    await expectStatus({ method: 'POST', url: `${base}/resume` }, 200);
    await expectStatus({ method: 'POST', url: `${base}/rotate-secret` }, 200);
    await expectStatus({ method: 'POST', url: '/users', body: { name: 'Hooked' } }, 201);
    let deliveries: { id: number }[] = [];
    for (let i = 0; i < 100 && deliveries.length === 0; i++) {
      deliveries = (await expectStatus({ method: 'GET', url: `${base}/deliveries` }, 200)) as { id: number }[];
      if (deliveries.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(deliveries.length).toBeGreaterThan(0);
    await expectStatus({ method: 'POST', url: `${base}/deliveries/${deliveries[0]?.id ?? 0}/retry` }, 202);
    await expectStatus({ method: 'POST', url: `${base}/deliveries/999/retry` }, 404);
    await expectStatus({ method: 'POST', url: '/v1/webhooks', body: { url: 'ftp://x', events: ['nope'] } }, 422);
    await expectStatus({ method: 'DELETE', url: base }, 204);
    await expectStatus({ method: 'GET', url: base }, 404);
  });

  it('the event stream: its headers, and its refusals', async () => {
    await expectStatus({ method: 'HEAD', url: '/v1/events?types=user.created' }, 200);
    await expectStatus({ method: 'GET', url: '/v1/events?types=nope' }, 400);
    await expectStatus({ method: 'GET', url: '/v1/events?types=user.created', headers: anonymous }, 401);
    await expectStatus({ method: 'GET', url: '/v1/events?types=order.created', headers: bearer(reader) }, 403);
    await expectStatus({ method: 'GET', url: '/v1/events', headers: { accept: 'application/json' } }, 406);
  });

  it('/, health, the documents, /docs and /admin; 503 from /readyz while draining', async () => {
    for (const url of ['/', '/healthz', '/readyz', '/openapi.json', '/v1/openapi.json']) await expectStatus({ method: 'GET', url }, 200);
    const page = await call({ method: 'GET', url: '/docs', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const admin = await call({ method: 'GET', url: '/admin', headers: { accept: 'text/html' } });
    expect(admin.statusCode).toBe(200);
    expect(admin.headers['content-security-policy']).toContain("style-src 'self';");
    await expectStatus({ method: 'GET', url: '/admin', headers: { accept: 'application/json' } }, 406);
    const etag = String((await call({ method: 'GET', url: '/openapi.json' })).headers.etag);
    await expectStatus({ method: 'GET', url: '/openapi.json', headers: { 'if-none-match': etag } }, 304);
    await expectStatus({ method: 'GET', url: '/healthz', headers: bearer('rg_not-a-key') }, 200);
    const metrics = await call({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    await expectStatus({ method: 'GET', url: '/metrics', headers: anonymous }, 401);
    t.app.startDraining();
    await expectStatus({ method: 'GET', url: '/readyz' }, 503);
  });
});

describe('coverage and the checker itself', () => {
  it('every operation of both documents answered with a success, and every error status above was produced', async () => {
    const documents = { '': json<OpenApiDocument>(await call({ method: 'GET', url: '/openapi.json' })), '/v1': json<OpenApiDocument>(await call({ method: 'GET', url: '/v1/openapi.json' })) };
    const covered = [...conformance.covered];
    for (const document of Object.values(documents)) {
      for (const [path, item] of Object.entries(document.paths)) {
        // A response is matched to the document of its path's version: /v1/… to /v1/openapi.json.
        const prefix = path.startsWith('/v1/') ? '/v1' : '';
        for (const op of [item.get, item.put, item.post, item.delete, item.patch]) {
          if (op === undefined) continue;
          expect(covered.some((c) => c.startsWith(`${prefix} ${op.operationId} 2`) || c.startsWith(`${prefix} ${op.operationId} 3`)), `${path} ${op.operationId}`).toBe(true);
        }
      }
    }
    const statuses = new Set(covered.map((c) => Number(c.split(' ').pop())));
    for (const status of [200, 201, 202, 204, 304, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 503]) expect(statuses.has(status), String(status)).toBe(true);
  });

  it('rejects a status, body, content type, header or problem code the document does not allow', () => {
    const ok = { method: 'GET', url: '/users/1', status: 200, headers: { 'content-type': 'application/json; charset=utf-8', etag: '"x"' }, body: JSON.stringify({ id: 1, name: 'A', email: null, bio: null, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' }) };
    expect(conformance.check(ok)).toEqual([]);
    const problem = (status: number, code: string) => ({ ...ok, status, headers: { 'content-type': 'application/problem+json' }, body: JSON.stringify({ type: `urn:restgraph:problem:${code}`, title: 'T', status, detail: 'D', code }) });
    expect(conformance.check(problem(404, 'not-found'))).toEqual([]);
    const wrong = [
      { ...ok, status: 418 },
      { ...ok, headers: { ...ok.headers, etag: undefined } },
      { ...ok, headers: { ...ok.headers, 'content-type': 'text/plain' } },
      { ...ok, body: JSON.stringify({ id: 'one' }) },
      { ...ok, body: '' },
      problem(404, 'unique-conflict'),
      problem(409, 'unique-conflict'),
      { ...problem(404, 'not-found'), headers: { 'content-type': 'application/json' } },
      { ...ok, method: 'POST', url: '/users', status: 201 },
      { ...ok, url: '/users', body: '[{"id":1}]' },
      { ...ok, url: '/users?fields=id,name', body: '[{"id":1}]' },
      { ...ok, method: 'HEAD', status: 200, body: 'x' },
    ];
    for (const exchange of wrong) expect(conformance.check(exchange), JSON.stringify(exchange).slice(0, 200)).not.toEqual([]);
    expect(conformance.check({ ...ok, url: '/users?fields=id,name', body: '[{"id":1,"name":"A"}]' })).toEqual([]);
  });
});
