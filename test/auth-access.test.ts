import { createHash, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TokenView } from '../src/core/token-operations.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { insertApiKeyRow } from './helpers/test-database.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * Access control over HTTP on the example schema (issue 3): every operation × every kind of
 * credential, the owner rule on orders (private) and posts (public reads), and /v1/tokens.
 *
 * Example rules: users read [users:read, users:write] write [users:write]; posts read public,
 * write [posts:write], owner userId; products read public, write [products:write]; orders read
 * [orders:read, orders:write], write [orders:write], owner userId.
 */

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
const AUTH_REQUIRED = 'Bearer realm="restgraph"';
const INVALID_TOKEN = /^Bearer realm="restgraph", error="invalid_token", error_description="[^"]*"$/;
const insufficientScope = (scopes: readonly string[]): string => `Bearer realm="restgraph", error="insufficient_scope", scope="${scopes.join(' ')}"`;
/** An owner violation: no scope would help, so the challenge (if any) names none. */
// Owner-rule 403s carry no WWW-Authenticate: no scope short of admin would help.
const KEY_FORMAT = /^rg_[A-Za-z0-9_-]{43}$/;
const ALL_SCOPES = ['users:read', 'users:write', 'posts:write', 'products:write', 'orders:read', 'orders:write'];

interface Reply {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  requestId: string;
  errors?: { pointer?: string; parameter?: string; detail: string }[];
}

/** A token as /v1/tokens shows it, with the key on creation. */
type TokenBody = TokenView & { key?: string };

type Row = Record<string, unknown> & { id: number };
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

function must<T>(value: T | undefined | null, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`missing ${what}`);
  return value;
}

const bearer = (token: string): string => `Bearer ${token}`;

function expectProblem(response: Reply, status: number, code: string, wwwAuthenticate?: string | RegExp): Problem {
  expect({ status: response.statusCode, body: response.body }).toMatchObject({ status });
  expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
  const problem = json<Problem>(response);
  expect(problem).toMatchObject({ type: `urn:restgraph:problem:${code}`, status, code });
  const header = response.headers['www-authenticate'];
  if (wwwAuthenticate === undefined) expect(header).toBeUndefined();
  else if (typeof wwwAuthenticate === 'string') expect(header).toBe(wwwAuthenticate);
  else expect(header).toMatch(wwwAuthenticate);
  return problem;
}

/** A 2xx with the expected status and no authentication challenge. */
function expectSuccess(response: Reply, status: number): void {
  expect({ status: response.statusCode, body: response.body }).toEqual({ status, body: status === 204 ? '' : expect.any(String) as string });
  expect(response.headers['www-authenticate']).toBeUndefined();
}


const newKeyText = (): string => `rg_${randomBytes(32).toString('base64url')}`;

describe('access rules × credentials, on every operation of the example schema', () => {
  let t: TestApp;
  let productId: number;
  const keyCache = new Map<string, string>();
  let revokedKey: string;
  let expiredKey: string;
  let adminKey: string;
  let wrongKey: string;
  const unknownKey = newKeyText();
  let serial = 0;

  /** A key with these scopes (subject '1' unless null), created once over HTTP as admin. */
  async function key(scopes: readonly string[], subject: string | null = '1'): Promise<string> {
    const cacheKey = `${scopes.join(',')}|${subject ?? ''}`;
    const cached = keyCache.get(cacheKey);
    if (cached !== undefined) return cached;
    const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'table', scopes, ...(subject === null ? {} : { subject }) } });
    expect(response.statusCode).toBe(201);
    const created = must(json<TokenBody>(response).key, 'key');
    keyCache.set(cacheKey, created);
    return created;
  }

  async function adminCreate(resource: string, body: Record<string, unknown>): Promise<Row> {
    const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: body });
    expect(response.statusCode, response.body).toBe(201);
    return json<Row>(response);
  }

  interface ResourceSpec {
    name: 'users' | 'posts' | 'products' | 'orders';
    readPublic: boolean;
    readScopes: string[];
    writeScopes: string[];
    body: () => Record<string, unknown>;
    patch: Record<string, unknown>;
    relation: { name: string; public: boolean; denied: string[]; right: string[] };
    include: { name: string; public: boolean; denied: string[]; right: string[] };
  }

  const USERS_READ = ['users:read', 'users:write'];
  const ORDERS_READ = ['orders:read', 'orders:write'];
  const specs: ResourceSpec[] = [
    {
      name: 'users',
      readPublic: false,
      readScopes: USERS_READ,
      writeScopes: ['users:write'],
      body: () => ({ name: `User ${++serial}` }),
      patch: { bio: 'patched' },
      relation: { name: 'posts', public: false, denied: USERS_READ, right: ['users:read'] },
      include: { name: 'orders', public: false, denied: USERS_READ, right: ['users:read', 'orders:read'] },
    },
    {
      name: 'posts',
      readPublic: true,
      readScopes: [],
      writeScopes: ['posts:write'],
      body: () => ({ title: `Post ${++serial}`, userId: 1 }),
      patch: { body: 'patched' },
      relation: { name: 'user', public: false, denied: USERS_READ, right: ['users:read'] },
      include: { name: 'user', public: false, denied: USERS_READ, right: ['users:read'] },
    },
    {
      name: 'products',
      readPublic: true,
      readScopes: [],
      writeScopes: ['products:write'],
      body: () => ({ name: `Product ${++serial}`, sku: `SKU-${++serial}`, price: 9.5 }),
      patch: { stock: 3 },
      relation: { name: 'orders', public: false, denied: ORDERS_READ, right: ['orders:read'] },
      include: { name: 'orders', public: false, denied: ORDERS_READ, right: ['orders:read'] },
    },
    {
      name: 'orders',
      readPublic: false,
      readScopes: ORDERS_READ,
      writeScopes: ['orders:write'],
      body: () => ({ userId: 1, productId, quantity: 2 }),
      patch: { quantity: 3 },
      relation: { name: 'product', public: false, denied: ORDERS_READ, right: ['orders:read'] },
      include: { name: 'user', public: false, denied: ORDERS_READ, right: ['orders:read', 'users:read'] },
    },
  ];

  interface OperationCase {
    op: string;
    method: Method;
    /** Builds the request against fresh rows (as admin). */
    prepare: (prefix: string) => Promise<{ url: string; payload?: Record<string, unknown> }>;
    public: boolean;
    denied: string[];
    right: string[];
    status: number;
  }

  function operations(spec: ResourceSpec): OperationCase[] {
    const base = (prefix: string): string => `${prefix}/${spec.name}`;
    const fresh = async (prefix: string): Promise<string> => `${base(prefix)}/${(await adminCreate(spec.name, spec.body())).id}`;
    const read = { public: spec.readPublic, denied: spec.readScopes, right: spec.readPublic ? [] : [must(spec.readScopes[0])] };
    const write = { public: false, denied: spec.writeScopes, right: spec.writeScopes };
    return [
      { op: 'list', method: 'GET', prepare: (p) => Promise.resolve({ url: base(p) }), ...read, status: 200 },
      { op: 'get', method: 'GET', prepare: async (p) => ({ url: await fresh(p) }), ...read, status: 200 },
      { op: 'create', method: 'POST', prepare: (p) => Promise.resolve({ url: base(p), payload: spec.body() }), ...write, status: 201 },
      { op: 'replace', method: 'PUT', prepare: async (p) => ({ url: await fresh(p), payload: spec.body() }), ...write, status: 200 },
      { op: 'update', method: 'PATCH', prepare: async (p) => ({ url: await fresh(p), payload: spec.patch }), ...write, status: 200 },
      { op: 'delete', method: 'DELETE', prepare: async (p) => ({ url: await fresh(p) }), ...write, status: 204 },
      { op: `relation route /${spec.name}/:id/${spec.relation.name}`, method: 'GET', prepare: async (p) => ({ url: `${await fresh(p)}/${spec.relation.name}` }), ...spec.relation, status: 200 },
      { op: `include=${spec.include.name} embed`, method: 'GET', prepare: (p) => Promise.resolve({ url: `${base(p)}?include=${spec.include.name}` }), ...spec.include, status: 200 },
    ];
  }

  type Outcome = 'anonymous' | 'invalid' | 'wrong' | 'right';
  interface CredentialCase {
    name: string;
    outcome: Outcome;
    /** The Authorization header to send ('' = none); undefined = the test helper's admin token. */
    header: (c: OperationCase) => Promise<string | undefined>;
  }

  const credentials: CredentialCase[] = [
    { name: 'no token', outcome: 'anonymous', header: () => Promise.resolve('') },
    { name: 'Basic scheme', outcome: 'invalid', header: () => Promise.resolve('Basic dXNlcjpwYXNzd29yZA==') },
    { name: '"Bearer" alone', outcome: 'invalid', header: () => Promise.resolve('Bearer') },
    { name: 'Bearer garbage', outcome: 'invalid', header: () => Promise.resolve('Bearer %%not-a-token%%') },
    { name: 'Bearer with two words', outcome: 'invalid', header: () => Promise.resolve('Bearer two words') },
    { name: 'unknown rg_ key', outcome: 'invalid', header: () => Promise.resolve(bearer(unknownKey)) },
    { name: 'revoked key (all scopes)', outcome: 'invalid', header: () => Promise.resolve(bearer(revokedKey)) },
    { name: 'expired key (all scopes)', outcome: 'invalid', header: () => Promise.resolve(bearer(expiredKey)) },
    { name: 'key with a wrong scope', outcome: 'wrong', header: () => Promise.resolve(bearer(wrongKey)) },
    { name: 'key with the right scope', outcome: 'right', header: async (c) => (c.right.length === 0 ? bearer(wrongKey) : bearer(await key(c.right))) },
    { name: 'admin token', outcome: 'right', header: () => Promise.resolve(undefined) },
    { name: 'admin API key', outcome: 'right', header: () => Promise.resolve(bearer(adminKey)) },
  ];

  beforeAll(async () => {
    t = await startTestApp({ apiKeyCacheMs: 0 });
    await adminCreate('users', { name: 'Alice' });
    await adminCreate('users', { name: 'Bob' });
    productId = (await adminCreate('products', { name: 'Widget', sku: 'W-1', price: 5 })).id;
    await adminCreate('posts', { title: 'Hello', userId: 1 });
    await adminCreate('orders', { userId: 1, productId, quantity: 1 });
    revokedKey = await key(ALL_SCOPES, '1');
    keyCache.clear();
    const listed = json<TokenBody[]>(await t.app.inject({ method: 'GET', url: '/v1/tokens' }));
    const revokedId = must(listed.find((k) => revokedKey.startsWith(k.prefix)), 'revoked key row').id;
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/tokens/${revokedId}` })).statusCode).toBe(204);
    expiredKey = newKeyText();
    await insertApiKeyRow(t.db, expiredKey, { scopes: ALL_SCOPES, subject: '1', expiresAt: new Date(Date.now() - 3_600_000).toISOString() });
    adminKey = await key(['admin'], null);
    wrongKey = await key(['other:read'], '1');
  });
  afterAll(async () => t.close());

  for (const prefix of ['', '/v1']) {
    for (const spec of specs) {
      for (const c of operations(spec)) {
        describe(`${c.method} ${prefix}/${spec.name}: ${c.op}`, () => {
          for (const credential of credentials) {
            const expected =
              credential.outcome === 'invalid'
                ? '401 invalid-token'
                : credential.outcome === 'anonymous' && !c.public
                  ? '401 authentication-required'
                  : credential.outcome === 'wrong' && !c.public
                    ? `403 forbidden (${c.denied.join(' ')})`
                    : String(c.status);
            it(`${credential.name} → ${expected}`, async () => {
              const { url, payload } = await c.prepare(prefix);
              const header = await credential.header(c);
              const response = await t.app.inject({
                method: c.method,
                url,
                headers: header === undefined ? {} : { authorization: header },
                ...(payload === undefined ? {} : { payload }),
              });
              if (credential.outcome === 'invalid') {
                const problem = expectProblem(response, 401, 'invalid-token', INVALID_TOKEN);
                expect(problem.instance).toBe(url.split('?')[0]);
              } else if (credential.outcome === 'anonymous' && !c.public) {
                expectProblem(response, 401, 'authentication-required', AUTH_REQUIRED);
              } else if (credential.outcome === 'wrong' && !c.public) {
                expectProblem(response, 403, 'forbidden', insufficientScope(c.denied));
              } else {
                expectSuccess(response, c.status);
              }
            });
          }
        });
      }
    }
  }

  it('a refused write changes nothing', async () => {
    const user = await adminCreate('users', { name: 'Untouched' });
    for (const header of ['', 'Bearer rg_unknown', bearer(wrongKey), bearer(revokedKey), bearer(expiredKey)]) {
      const patched = await t.app.inject({ method: 'PATCH', url: `/users/${user.id}`, headers: { authorization: header }, payload: { name: 'Changed' } });
      expect(patched.statusCode).toBeGreaterThanOrEqual(401);
      const deleted = await t.app.inject({ method: 'DELETE', url: `/users/${user.id}`, headers: { authorization: header } });
      expect(deleted.statusCode).toBeGreaterThanOrEqual(401);
    }
    expect(json(await t.app.inject({ method: 'GET', url: `/users/${user.id}` }))).toMatchObject({ id: user.id, name: 'Untouched' });
  });

  it('any one of the listed scopes suffices: users:write alone reads users', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/users', headers: { authorization: bearer(await key(['users:write'])) } });
    expectSuccess(response, 200);
  });

  it('a read scope does not allow writing: users:read on POST /users → 403 naming users:write', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/users', headers: { authorization: bearer(await key(['users:read'])) }, payload: { name: 'No' } });
    expectProblem(response, 403, 'forbidden', insufficientScope(['users:write']));
  });

  it('an embed needs read access to its target too: users:read alone on /users?include=orders → 403 naming the orders scopes', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/users?include=orders', headers: { authorization: bearer(await key(['users:read'])) } });
    expectProblem(response, 403, 'forbidden', insufficientScope(ORDERS_READ));
    const single = await t.app.inject({ method: 'GET', url: '/users/1?include=orders', headers: { authorization: bearer(await key(['users:read'])) } });
    expectProblem(single, 403, 'forbidden', insufficientScope(ORDERS_READ));
  });

  it('a relation route needs read access to both ends: users:read alone on /users/1/orders → 403', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/users/1/orders', headers: { authorization: bearer(await key(['users:read'])) } });
    expectProblem(response, 403, 'forbidden', insufficientScope(ORDERS_READ));
  });

  it('anonymous: a public list embedding a private relation → 401; a public list alone → 200', async () => {
    const anonymous = await t.app.inject({ method: 'GET', url: '/products?include=orders', headers: { authorization: '' } });
    expectProblem(anonymous, 401, 'authentication-required', AUTH_REQUIRED);
    const posts = await t.app.inject({ method: 'GET', url: '/posts', headers: { authorization: '' } });
    expectSuccess(posts, 200);
    expect(json<Row[]>(posts).length).toBeGreaterThan(0);
  });

  it('the Bearer scheme name is case-insensitive', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/users', headers: { authorization: `bearer ${adminKey}` } });
    expectSuccess(response, 200);
  });

  it('HEAD of a public resource with an invalid credential → 401 invalid_token', async () => {
    const head = await t.app.inject({ method: 'HEAD', url: '/products', headers: { authorization: 'Bearer rg_nope' } });
    expect(head.statusCode).toBe(401);
    expect(head.headers['www-authenticate']).toMatch(INVALID_TOKEN);
  });

  it('an invalid-token problem does not echo the credential', async () => {
    const secret = newKeyText();
    const response = await t.app.inject({ method: 'GET', url: '/users', headers: { authorization: bearer(secret) } });
    expectProblem(response, 401, 'invalid-token', INVALID_TOKEN);
    expect(response.body).not.toContain(secret);
    expect(JSON.stringify(response.headers)).not.toContain(secret);
  });

  it('a key created to expire in 1 s works, then is refused as expired', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { scopes: ['users:read'], expires: '1s' } });
    expect(created.statusCode).toBe(201);
    const short = must(json<TokenBody>(created).key);
    expectSuccess(await t.app.inject({ method: 'GET', url: '/users', headers: { authorization: bearer(short) } }), 200);
    await new Promise((r) => setTimeout(r, 1100));
    const later = await t.app.inject({ method: 'GET', url: '/users', headers: { authorization: bearer(short) } });
    const problem = expectProblem(later, 401, 'invalid-token', INVALID_TOKEN);
    expect(problem.detail).toMatch(/expired/i);
    const listed = json<TokenBody[]>(await t.app.inject({ method: 'GET', url: '/v1/tokens' }));
    expect(listed.find((k) => short.startsWith(k.prefix))?.state).toBe('expired');
  });
});

describe('owner rule (orders: private reads, owner userId; posts: public reads, owner userId)', () => {
  let t: TestApp;
  let alice: string;
  let bob: string;
  let noSubject: string;
  let productId: number;
  let aliceOrders: number[];
  let bobOrder: number;
  let alicePost: number;
  let bobPost: number;

  const as = (token: string) => ({ authorization: bearer(token) });
  async function admin(method: Method, url: string, payload?: Record<string, unknown>): Promise<Reply> {
    return t.app.inject({ method, url, ...(payload === undefined ? {} : { payload }) });
  }
  async function created(url: string, payload: Record<string, unknown>): Promise<number> {
    const response = await admin('POST', url, payload);
    expect(response.statusCode, response.body).toBe(201);
    return json<Row>(response).id;
  }
  async function tokenFor(subject: string | undefined): Promise<string> {
    const scopes = ['users:read', 'orders:read', 'orders:write', 'posts:write'];
    const response = await admin('POST', '/v1/tokens', { name: `owner ${subject ?? 'none'}`, scopes, ...(subject === undefined ? {} : { subject }) });
    expect(response.statusCode).toBe(201);
    return must(json<TokenBody>(response).key);
  }
  const ids = (response: Reply): number[] => json<Row[]>(response).map((r) => r.id);

  beforeAll(async () => {
    t = await startTestApp({ apiKeyCacheMs: 0 });
    await created('/users', { name: 'Alice' });
    await created('/users', { name: 'Bob' });
    productId = await created('/products', { name: 'Widget', sku: 'W-1', price: 5 });
    aliceOrders = [await created('/orders', { userId: 1, productId, quantity: 1 }), await created('/orders', { userId: 1, productId, quantity: 2 })];
    bobOrder = await created('/orders', { userId: 2, productId, quantity: 3 });
    alicePost = await created('/posts', { title: 'Alice writes', userId: 1 });
    bobPost = await created('/posts', { title: 'Bob writes', userId: 2 });
    alice = await tokenFor('1');
    bob = await tokenFor('2');
    noSubject = await tokenFor(undefined);
  });
  afterAll(async () => t.close());

  describe('orders (private reads): other rows are simply not there', () => {
    it('list shows only the token’s own orders, and the count agrees', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/orders?count=true', headers: as(alice) });
      expect(response.statusCode).toBe(200);
      expect(ids(response)).toEqual(aliceOrders);
      expect(response.headers['x-total-count']).toBe('2');
      const bobs = await t.app.inject({ method: 'GET', url: '/v1/orders', headers: as(bob) });
      expect(ids(bobs)).toEqual([bobOrder]);
    });

    it('filtering for another user’s rows finds nothing', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/orders?userId=2&count=true', headers: as(alice) });
      expect(response.statusCode).toBe(200);
      expect(json(response)).toEqual([]);
      expect(response.headers['x-total-count']).toBe('0');
    });

    it('get of another user’s order → 404 not-found (same as a missing one)', async () => {
      const response = await t.app.inject({ method: 'GET', url: `/orders/${bobOrder}`, headers: as(alice) });
      const problem = expectProblem(response, 404, 'not-found');
      const missing = expectProblem(await t.app.inject({ method: 'GET', url: '/orders/999999', headers: as(alice) }), 404, 'not-found');
      expect(problem.detail.replace(String(bobOrder), 'N')).toBe(missing.detail.replace('999999', 'N'));
      expect((await t.app.inject({ method: 'GET', url: `/orders/${must(aliceOrders[0])}`, headers: as(alice) })).statusCode).toBe(200);
    });

    it('embed users?include=orders carries only the token’s own orders', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/users?include=orders', headers: as(alice) });
      expect(response.statusCode).toBe(200);
      const users = json<(Row & { orders: Row[] })[]>(response);
      expect(users.map((u) => [u.id, u.orders.map((o) => o.id)])).toEqual([
        [1, aliceOrders],
        [2, []],
      ]);
      const single = await t.app.inject({ method: 'GET', url: '/v1/users/2?include=orders', headers: as(alice) });
      expect(single.statusCode).toBe(200);
      expect(json<{ orders: Row[] }>(single).orders).toEqual([]);
      const products = await t.app.inject({ method: 'GET', url: `/products/${productId}?include=orders`, headers: as(bob) });
      expect(json<{ orders: Row[] }>(products).orders.map((o) => o.id)).toEqual([bobOrder]);
    });

    it('relation route /users/:id/orders lists only the token’s own orders', async () => {
      for (const base of ['', '/v1']) {
        const own = await t.app.inject({ method: 'GET', url: `${base}/users/1/orders?count=true`, headers: as(alice) });
        expect(own.statusCode).toBe(200);
        expect(ids(own)).toEqual(aliceOrders);
        expect(own.headers['x-total-count']).toBe('2');
        const other = await t.app.inject({ method: 'GET', url: `${base}/users/2/orders?count=true`, headers: as(alice) });
        expect(other.statusCode).toBe(200);
        expect(json(other)).toEqual([]);
        expect(other.headers['x-total-count']).toBe('0');
      }
      const products = await t.app.inject({ method: 'GET', url: `/products/${productId}/orders`, headers: as(alice) });
      expect(ids(products)).toEqual(aliceOrders);
    });

    it('relation route from another user’s order (/orders/:id/user) → 404', async () => {
      expectProblem(await t.app.inject({ method: 'GET', url: `/orders/${bobOrder}/user`, headers: as(alice) }), 404, 'not-found');
      expectProblem(await t.app.inject({ method: 'GET', url: `/orders/${bobOrder}/product`, headers: as(alice) }), 404, 'not-found');
      const own = await t.app.inject({ method: 'GET', url: `/orders/${must(aliceOrders[0])}/user`, headers: as(alice) });
      expect(own.statusCode).toBe(200);
      expect(json(own)).toMatchObject({ id: 1, name: 'Alice' });
    });

    it('update, replace and delete of another user’s order → 404, and the row is unchanged', async () => {
      const before = await admin('GET', `/orders/${bobOrder}`);
      expectProblem(await t.app.inject({ method: 'PATCH', url: `/orders/${bobOrder}`, headers: as(alice), payload: { quantity: 99 } }), 404, 'not-found');
      expectProblem(await t.app.inject({ method: 'PUT', url: `/orders/${bobOrder}`, headers: as(alice), payload: { productId, quantity: 99 } }), 404, 'not-found');
      expectProblem(await t.app.inject({ method: 'DELETE', url: `/orders/${bobOrder}`, headers: as(alice) }), 404, 'not-found');
      expect((await admin('GET', `/orders/${bobOrder}`)).body).toBe(before.body);
    });

    it('update of one’s own order works; moving it to another user → 403 and unchanged', async () => {
      const id = await created('/orders', { userId: 1, productId, quantity: 1 });
      const patched = await t.app.inject({ method: 'PATCH', url: `/orders/${id}`, headers: as(alice), payload: { quantity: 5 } });
      expect(patched.statusCode).toBe(200);
      expect(json(patched)).toMatchObject({ id, userId: 1, quantity: 5 });
      const same = await t.app.inject({ method: 'PATCH', url: `/orders/${id}`, headers: as(alice), payload: { userId: 1, quantity: 6 } });
      expect(same.statusCode).toBe(200);
      const before = await admin('GET', `/orders/${id}`);
      expectProblem(await t.app.inject({ method: 'PATCH', url: `/orders/${id}`, headers: as(alice), payload: { userId: 2 } }), 403, 'forbidden');
      expectProblem(await t.app.inject({ method: 'PUT', url: `/orders/${id}`, headers: as(alice), payload: { userId: 2, productId, quantity: 1 } }), 403, 'forbidden');
      expect((await admin('GET', `/orders/${id}`)).body).toBe(before.body);
    });

    it('replace of one’s own order keeps the owner from the token (userId may be left out)', async () => {
      const id = await created('/orders', { userId: 1, productId, quantity: 1 });
      const replaced = await t.app.inject({ method: 'PUT', url: `/orders/${id}`, headers: as(alice), payload: { productId, quantity: 4 } });
      expect(replaced.statusCode, replaced.body).toBe(200);
      expect(json(replaced)).toMatchObject({ id, userId: 1, productId, quantity: 4 });
    });

    it('delete of one’s own order → 204', async () => {
      const id = await created('/orders', { userId: 1, productId, quantity: 1 });
      const response = await t.app.inject({ method: 'DELETE', url: `/orders/${id}`, headers: as(alice) });
      expect(response.statusCode).toBe(204);
      expect((await admin('GET', `/orders/${id}`)).statusCode).toBe(404);
    });

    it('create sets userId from the token’s subject; sending another userId → 403 and nothing is created', async () => {
      const response = await t.app.inject({ method: 'POST', url: '/orders', headers: as(alice), payload: { productId, quantity: 7 } });
      expect(response.statusCode, response.body).toBe(201);
      const order = json<Row>(response);
      expect(order).toMatchObject({ userId: 1, productId, quantity: 7 });
      const explicit = await t.app.inject({ method: 'POST', url: '/orders', headers: as(bob), payload: { userId: 2, productId, quantity: 1 } });
      expect(explicit.statusCode).toBe(201);
      expect(json(explicit)).toMatchObject({ userId: 2 });
      const countBefore = json<Row[]>(await admin('GET', '/orders')).length;
      const forged = await t.app.inject({ method: 'POST', url: '/orders', headers: as(alice), payload: { userId: 2, productId, quantity: 1 } });
      const problem = expectProblem(forged, 403, 'forbidden');
      expect(problem.detail).toContain('userId');
      expect(json<Row[]>(await admin('GET', '/orders')).length).toBe(countBefore);
    });

    it('a token without a subject owns nothing: empty list, 404 on get, 403 on create', async () => {
      const list = await t.app.inject({ method: 'GET', url: '/orders', headers: as(noSubject) });
      expect(list.statusCode).toBe(200);
      expect(json(list)).toEqual([]);
      expectProblem(await t.app.inject({ method: 'GET', url: `/orders/${must(aliceOrders[0])}`, headers: as(noSubject) }), 404, 'not-found');
      expectProblem(await t.app.inject({ method: 'POST', url: '/orders', headers: as(noSubject), payload: { userId: 1, productId, quantity: 1 } }), 403, 'forbidden');
    });

    it('a subject that cannot be an integer owner id ("abc") owns nothing: create → 403 forbidden, not a 422 about a field the client never sent', async () => {
      const response = await admin('POST', '/v1/tokens', { scopes: ['orders:read', 'orders:write'], subject: 'abc' });
      const abc = must(json<TokenBody>(response).key);
      const list = await t.app.inject({ method: 'GET', url: '/orders', headers: as(abc) });
      expect(list.statusCode).toBe(200);
      expect(json(list)).toEqual([]);
      const create = await t.app.inject({ method: 'POST', url: '/orders', headers: as(abc), payload: { productId, quantity: 1 } });
      expectProblem(create, 403, 'forbidden');
    });

    it('admin sees and changes every row', async () => {
      const list = json<Row[]>(await admin('GET', '/orders'));
      expect(list.map((o) => o.id)).toEqual(expect.arrayContaining([...aliceOrders, bobOrder]));
      expect(new Set(list.map((o) => o.userId))).toEqual(new Set([1, 2]));
      expect((await admin('GET', `/orders/${bobOrder}`)).statusCode).toBe(200);
      const patched = await admin('PATCH', `/orders/${bobOrder}`, { note: 'seen by admin' });
      expect(patched.statusCode).toBe(200);
      const embedded = json<(Row & { orders: Row[] })[]>(await admin('GET', '/users?include=orders'));
      expect(embedded.find((u) => u.id === 2)?.orders.map((o) => o.id)).toContain(bobOrder);
    });

    it('an Idempotency-Key replay never hands one token’s response to another', async () => {
      const payload = { productId, quantity: 1, note: 'idempotent' };
      const first = await t.app.inject({ method: 'POST', url: '/orders', headers: { ...as(alice), 'idempotency-key': 'shared-key-1' }, payload });
      expect(first.statusCode).toBe(201);
      const second = await t.app.inject({ method: 'POST', url: '/orders', headers: { ...as(bob), 'idempotency-key': 'shared-key-1' }, payload });
      expect(second.statusCode).toBe(201);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(json(second)).toMatchObject({ userId: 2 });
      expect(json<Row>(second).id).not.toBe(json<Row>(first).id);
    });
  });

  describe('posts (public reads): every row visible, only one’s own writable', () => {
    it('list and get show every post, to owners, other tokens and anonymous callers', async () => {
      for (const headers of [as(alice), as(bob), { authorization: '' }]) {
        const list = await t.app.inject({ method: 'GET', url: '/posts', headers });
        expect(list.statusCode).toBe(200);
        expect(ids(list)).toEqual(expect.arrayContaining([alicePost, bobPost]));
        expect((await t.app.inject({ method: 'GET', url: `/posts/${bobPost}`, headers })).statusCode).toBe(200);
      }
    });

    it('embed users?include=posts and relation route /users/2/posts show other users’ posts', async () => {
      const embedded = json<(Row & { posts: Row[] })[]>(await t.app.inject({ method: 'GET', url: '/users?include=posts', headers: as(alice) }));
      expect(embedded.find((u) => u.id === 2)?.posts.map((p) => p.id)).toEqual([bobPost]);
      const related = await t.app.inject({ method: 'GET', url: '/users/2/posts', headers: as(alice) });
      expect(ids(related)).toEqual([bobPost]);
    });

    it('update, replace and delete of another user’s post → 403 forbidden, and the post is unchanged', async () => {
      const before = await admin('GET', `/posts/${bobPost}`);
      expectProblem(await t.app.inject({ method: 'PATCH', url: `/posts/${bobPost}`, headers: as(alice), payload: { title: 'Hijacked' } }), 403, 'forbidden');
      expectProblem(await t.app.inject({ method: 'PUT', url: `/posts/${bobPost}`, headers: as(alice), payload: { title: 'Hijacked' } }), 403, 'forbidden');
      expectProblem(await t.app.inject({ method: 'DELETE', url: `/posts/${bobPost}`, headers: as(alice) }), 403, 'forbidden');
      expect((await admin('GET', `/posts/${bobPost}`)).body).toBe(before.body);
    });

    it('a missing post is still 404 for writes', async () => {
      expectProblem(await t.app.inject({ method: 'PATCH', url: '/posts/999999', headers: as(alice), payload: { title: 'x' } }), 404, 'not-found');
      expectProblem(await t.app.inject({ method: 'DELETE', url: '/posts/999999', headers: as(alice) }), 404, 'not-found');
    });

    it('own post: update, replace (owner kept) and delete work', async () => {
      const id = await created('/posts', { title: 'Mine', userId: 1 });
      const patched = await t.app.inject({ method: 'PATCH', url: `/posts/${id}`, headers: as(alice), payload: { title: 'Mine, edited' } });
      expect(patched.statusCode).toBe(200);
      const replaced = await t.app.inject({ method: 'PUT', url: `/posts/${id}`, headers: as(alice), payload: { title: 'Mine, replaced' } });
      expect(replaced.statusCode, replaced.body).toBe(200);
      expect(json(replaced)).toMatchObject({ id, title: 'Mine, replaced', userId: 1 });
      expectProblem(await t.app.inject({ method: 'PATCH', url: `/posts/${id}`, headers: as(alice), payload: { userId: 2 } }), 403, 'forbidden');
      expect((await t.app.inject({ method: 'DELETE', url: `/posts/${id}`, headers: as(alice) })).statusCode).toBe(204);
    });

    it('create sets userId from the token; another userId → 403', async () => {
      const response = await t.app.inject({ method: 'POST', url: '/posts', headers: as(bob), payload: { title: 'By Bob' } });
      expect(response.statusCode, response.body).toBe(201);
      expect(json(response)).toMatchObject({ title: 'By Bob', userId: 2 });
      expectProblem(await t.app.inject({ method: 'POST', url: '/posts', headers: as(bob), payload: { title: 'As Alice', userId: 1 } }), 403, 'forbidden');
    });
  });
});

describe('/v1/tokens over HTTP', () => {
  let t: TestApp;
  let scoped: string;

  beforeAll(async () => {
    t = await startTestApp({ apiKeyCacheMs: 0 });
    const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'writer', scopes: ['users:write'] } });
    scoped = must(json<TokenBody>(response).key);
  });
  afterAll(async () => t.close());

  it('POST creates a key: 201, Location, Cache-Control no-store, the key once, and every field', async () => {
    const before = Date.now();
    const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'ci', scopes: ['users:read', 'orders:read'], subject: '7', expires: '30d' } });
    expect(response.statusCode).toBe(201);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    const token = json<TokenBody>(response);
    expect(response.headers.location).toBe(`/v1/tokens/${token.id}`);
    const key = must(token.key);
    expect(key).toMatch(KEY_FORMAT);
    expect(Object.keys(token).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'key', 'lastUsedAt', 'name', 'prefix', 'revokedAt', 'scopes', 'state', 'subject'].sort());
    expect(token).toMatchObject({ name: 'ci', prefix: key.slice(0, 11), scopes: ['users:read', 'orders:read'], subject: '7', lastUsedAt: null, revokedAt: null, state: 'active' });
    const expires = Date.parse(must(token.expiresAt));
    expect(expires).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
    expect(Math.abs(Date.parse(token.createdAt) - Date.now())).toBeLessThan(60_000);
  });

  it('the created key works at once with its scopes, and its last use is recorded', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'reader', scopes: ['users:read'] } });
    const token = json<TokenBody>(response);
    const key = must(token.key);
    expectSuccess(await t.app.inject({ method: 'GET', url: '/users', headers: { authorization: bearer(key) } }), 200);
    let lastUsedAt: string | null = null;
    for (let i = 0; i < 50 && lastUsedAt === null; i++) {
      lastUsedAt = json<TokenBody>(await t.app.inject({ method: 'GET', url: `/v1/tokens/${token.id}` })).lastUsedAt;
      if (lastUsedAt === null) await new Promise((r) => setTimeout(r, 20));
    }
    expect(Math.abs(Date.parse(must(lastUsedAt)) - Date.now())).toBeLessThan(60_000);
  });

  it('list and get never include the key or its hash', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'secret', scopes: ['users:read'] } });
    const token = json<TokenBody>(response);
    const key = must(token.key);
    const hash = createHash('sha256').update(key).digest('hex');
    const list = await t.app.inject({ method: 'GET', url: '/v1/tokens' });
    expect(list.statusCode).toBe(200);
    expect(list.headers['content-type']).toBe('application/json; charset=utf-8');
    const tokens = json<TokenBody[]>(list);
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    for (const listed of tokens) {
      expect(listed).not.toHaveProperty('key');
      expect(listed).not.toHaveProperty('hash');
    }
    expect(tokens.map((k) => k.id)).toEqual([...tokens.map((k) => k.id)].sort((a, b) => b - a));
    const single = await t.app.inject({ method: 'GET', url: `/v1/tokens/${token.id}` });
    expect(single.statusCode).toBe(200);
    const withoutKey: TokenBody = { ...token };
    delete withoutKey.key;
    expect(json(single)).toEqual(withoutKey);
    for (const body of [list.body, single.body]) {
      expect(body).not.toContain(key);
      expect(body).not.toContain(key.slice(11));
      expect(body).not.toContain(hash);
    }
  });

  it('DELETE revokes: 204, then the key is refused (401 invalid-token) and shows as revoked; revoking again is 204', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'doomed', scopes: ['users:read'] } });
    const token = json<TokenBody>(response);
    const key = must(token.key);
    // Verified keys are remembered by the header that carried them: every spelling of the scheme
    // is remembered apart, and a revocation must reach them all.
    const spellings = [bearer(key), `bearer ${key}`, `Bearer   ${key}  `];
    for (const authorization of spellings) expectSuccess(await t.app.inject({ method: 'GET', url: '/users', headers: { authorization } }), 200);
    const revoked = await t.app.inject({ method: 'DELETE', url: `/v1/tokens/${token.id}` });
    expect(revoked.statusCode).toBe(204);
    expect(revoked.body).toBe('');
    for (const authorization of spellings) {
      const refused = await t.app.inject({ method: 'GET', url: '/users', headers: { authorization } });
      expectProblem(refused, 401, 'invalid-token', INVALID_TOKEN);
    }
    const shown = json<TokenBody>(await t.app.inject({ method: 'GET', url: `/v1/tokens/${token.id}` }));
    expect(shown.state).toBe('revoked');
    expect(Math.abs(Date.parse(must(shown.revokedAt)) - Date.now())).toBeLessThan(60_000);
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/tokens/${token.id}` })).statusCode).toBe(204);
  });

  it('unknown ids → 404 not-found; non-numeric ids → 404', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/v1/tokens/999999' }), 404, 'not-found');
    expectProblem(await t.app.inject({ method: 'DELETE', url: '/v1/tokens/999999' }), 404, 'not-found');
    expectProblem(await t.app.inject({ method: 'GET', url: '/v1/tokens/abc' }), 404, 'not-found');
  });

  it('a key with the admin scope manages tokens', async () => {
    const admin = must(json<TokenBody>(await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'admin', scopes: ['admin'] } })).key);
    const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', headers: { authorization: bearer(admin) }, payload: { scopes: ['users:read'] } });
    expect(response.statusCode).toBe(201);
    expect(json(response)).toMatchObject({ name: 'unnamed', scopes: ['users:read'], subject: null, expiresAt: null });
  });

  describe('non-admin tokens → 403 forbidden (scope="admin") on every token route', () => {
    const routes: { method: Method; url: string; payload?: Record<string, unknown> }[] = [
      { method: 'GET', url: '/v1/tokens' },
      { method: 'POST', url: '/v1/tokens', payload: { scopes: ['admin'] } },
      { method: 'GET', url: '/v1/tokens/1' },
      { method: 'DELETE', url: '/v1/tokens/1' },
    ];
    for (const route of routes) {
      it(`${route.method} ${route.url}`, async () => {
        const count = json<TokenBody[]>(await t.app.inject({ method: 'GET', url: '/v1/tokens' })).length;
        const response = await t.app.inject({ ...route, headers: { authorization: bearer(scoped) } });
        expectProblem(response, 403, 'forbidden', insufficientScope(['admin']));
        const after = json<TokenBody[]>(await t.app.inject({ method: 'GET', url: '/v1/tokens' }));
        expect(after.length).toBe(count);
        expect(after.find((k) => k.id === 1)?.state).toBe('active');
      });
    }
  });

  describe('no credential → 401 authentication-required; a bad one → 401 invalid-token', () => {
    for (const method of ['GET', 'POST'] as const) {
      it(`${method} /v1/tokens anonymous`, async () => {
        const response = await t.app.inject({ method, url: '/v1/tokens', headers: { authorization: '' }, ...(method === 'POST' ? { payload: { scopes: ['admin'] } } : {}) });
        expectProblem(response, 401, 'authentication-required', AUTH_REQUIRED);
      });
      it(`${method} /v1/tokens with an unknown key`, async () => {
        const response = await t.app.inject({ method, url: '/v1/tokens', headers: { authorization: bearer(newKeyText()) }, ...(method === 'POST' ? { payload: { scopes: ['admin'] } } : {}) });
        expectProblem(response, 401, 'invalid-token', INVALID_TOKEN);
      });
    }
  });

  describe('validation: 422 validation-failed naming each bad property', () => {
    const cases: { name: string; payload: unknown; pointers: string[] }[] = [
      { name: 'no scopes', payload: { name: 'x' }, pointers: ['/scopes'] },
      { name: 'empty scopes', payload: { scopes: [] }, pointers: ['/scopes'] },
      { name: 'scopes as a string', payload: { scopes: 'users:read' }, pointers: ['/scopes'] },
      { name: 'a scope with a space', payload: { scopes: ['users read'] }, pointers: ['/scopes'] },
      { name: 'a non-string scope', payload: { scopes: [1] }, pointers: ['/scopes'] },
      { name: 'expires as words', payload: { scopes: ['users:read'], expires: 'tomorrow' }, pointers: ['/expires'] },
      { name: 'expires in the past (RFC 3339)', payload: { scopes: ['users:read'], expires: '2000-01-01T00:00:00Z' }, pointers: ['/expires'] },
      { name: 'expires 0d', payload: { scopes: ['users:read'], expires: '0d' }, pointers: ['/expires'] },
      { name: 'expires as a number', payload: { scopes: ['users:read'], expires: 3600 }, pointers: ['/expires'] },
      { name: 'an unknown property', payload: { scopes: ['users:read'], role: 'admin' }, pointers: ['/role'] },
      { name: 'an empty name', payload: { name: '', scopes: ['users:read'] }, pointers: ['/name'] },
      { name: 'a non-string subject', payload: { scopes: ['users:read'], subject: 1 }, pointers: ['/subject'] },
      { name: 'several at once', payload: { scopes: [], expires: 'soon', extra: true }, pointers: ['/extra', '/scopes', '/expires'] },
      { name: 'an array body', payload: [], pointers: [''] },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const count = json<TokenBody[]>(await t.app.inject({ method: 'GET', url: '/v1/tokens' })).length;
        const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(c.payload) });
        const problem = expectProblem(response, 422, 'validation-failed');
        expect(must(problem.errors).map((e) => e.pointer)).toEqual(c.pointers);
        expect(json<TokenBody[]>(await t.app.inject({ method: 'GET', url: '/v1/tokens' })).length).toBe(count);
      });
    }
  });
});

describe('revocation bound with the default 10 s key cache', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a key revoked elsewhere (CLI, another instance) keeps working until its cache entry is 10 s old, then is refused', async () => {
    const token = json<TokenBody>(await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { scopes: ['users:read'] } }));
    const key = must(token.key);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now());
    const get = () => t.app.inject({ method: 'GET', url: '/users', headers: { authorization: bearer(key) } });
    expect((await get()).statusCode).toBe(200);
    await t.db.run('update "_restgraph_api_keys" set "revokedAt" = ? where "id" = ?', [new Date().toISOString(), token.id]);
    vi.setSystemTime(Date.now() + 9_000);
    expect((await get()).statusCode).toBe(200);
    vi.setSystemTime(Date.now() + 1_100);
    expectProblem(await get(), 401, 'invalid-token', INVALID_TOKEN);
  });

  it('a key revoked through this server is refused by it at once', async () => {
    const token = json<TokenBody>(await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { scopes: ['users:read'] } }));
    const get = () => t.app.inject({ method: 'GET', url: '/users', headers: { authorization: bearer(must(token.key)) } });
    expect((await get()).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/tokens/${token.id}` })).statusCode).toBe(204);
    expectProblem(await get(), 401, 'invalid-token', INVALID_TOKEN);
  });

  it('a cached key is refused from its expiry on', async () => {
    const token = json<TokenBody>(await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { scopes: ['users:read'], expires: '1h' } }));
    const key = must(token.key);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse(must(token.expiresAt)) - 1_000);
    const get = () => t.app.inject({ method: 'GET', url: '/users', headers: { authorization: bearer(key) } });
    expect((await get()).statusCode).toBe(200);
    vi.setSystemTime(Date.parse(must(token.expiresAt)) + 1);
    expectProblem(await get(), 401, 'invalid-token', INVALID_TOKEN);
  });
});

describe('the admin token', () => {
  it('passes every rule, including owner rules and token management', async () => {
    const t = await startTestApp();
    try {
      const response = await t.app.inject({ method: 'GET', url: '/orders', headers: { authorization: bearer(TEST_ADMIN_TOKEN) } });
      expectSuccess(response, 200);
      const near = await t.app.inject({ method: 'GET', url: '/orders', headers: { authorization: bearer(`${TEST_ADMIN_TOKEN}x`) } });
      expectProblem(near, 401, 'invalid-token', INVALID_TOKEN);
    } finally {
      await t.close();
    }
  });
});

describe('health probes', () => {
  it('answer 200 whatever credential they carry, while the API refuses a bad one', async () => {
    const t = await startTestApp();
    try {
      // With a query string or a trailing slash too (they answered 401: the check compared the whole URL).
      for (const url of ['/healthz', '/readyz', '/healthz?probe=1', '/readyz?full=true&x=1', '/healthz/', '/readyz/?probe=1']) {
        for (const authorization of ['', 'Bearer rg_unknownunknownunknownunknownunknownunknownun', 'Basic abc']) {
          const response = await t.app.inject({ method: 'GET', url, headers: { authorization } });
          expect(response.statusCode, `${url} with "${authorization}"`).toBe(200);
        }
      }
      for (const url of ['/products', '/products?u=/healthz']) {
        const api = await t.app.inject({ method: 'GET', url, headers: { authorization: 'Basic abc' } });
        expectProblem(api, 401, 'invalid-token', INVALID_TOKEN);
      }
    } finally {
      await t.close();
    }
  });
});

describe('Idempotency-Key without a credential', () => {
  it('is kept per client address: another anonymous client with the same key and body gets its own create, not the first one’s response', async () => {
    const schema = parseSchemaText('resources:\n  notes:\n    access: { read: public, write: public }\n    fields:\n      text: { type: string, required: true }\n');
    const t = await startTestApp({ schema, rateLimits: { anonymous: 'off' } });
    try {
      const send = (remoteAddress: string) =>
        t.app.inject({ method: 'POST', url: '/notes', remoteAddress, headers: { authorization: '', 'idempotency-key': 'anonymous-key-1' }, payload: { text: 'hello' } });
      const first = await send('203.0.113.7');
      expect(first.statusCode).toBe(201);
      const replay = await send('203.0.113.7');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(json<Row>(replay).id).toBe(json<Row>(first).id);
      const other = await send('198.51.100.9');
      expect(other.statusCode).toBe(201);
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect(json<Row>(other).id).not.toBe(json<Row>(first).id);
    } finally {
      await t.close();
    }
  });
});
