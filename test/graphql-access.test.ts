import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenView } from '../src/core/token-operations.js';
import { dataOf, graphql, onlyError } from './helpers/graphql-request.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { insertApiKeyRow } from './helpers/test-database.js';

/**
 * Access control through GraphQL on the example schema: every case of the REST access suite
 * (test/auth-access.test.ts) — each resource × query one, list, connection, create, update,
 * replace, delete and relation fields × every kind of credential — with the same allow/deny
 * outcome as the REST request of the same meaning, the GraphQL error code, and no data leak;
 * then the owner rule (orders: private reads; posts: public reads) and relation fields that need
 * read access to their target.
 *
 * Example rules: users read [users:read, users:write] write [users:write]; posts read public,
 * write [posts:write], owner userId; products read public, write [products:write]; orders read
 * [orders:read, orders:write], write [orders:write], owner userId.
 */

const INVALID_TOKEN = /^Bearer realm="restgraph", error="invalid_token", error_description="[^"]*"$/;
const ALL_SCOPES = ['users:read', 'users:write', 'posts:write', 'products:write', 'orders:read', 'orders:write'];
const USERS_READ = ['users:read', 'users:write'];
const ORDERS_READ = ['orders:read', 'orders:write'];

type TokenBody = TokenView & { key?: string };
type Row = Record<string, unknown> & { id: number };
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Path = (string | number)[];

function must<T>(value: T | undefined | null, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`missing ${what}`);
  return value;
}

const bearer = (token: string): string => `Bearer ${token}`;
const newKeyText = (): string => `rg_${randomBytes(32).toString('base64url')}`;


/**
 * A request refused by the HTTP layer before GraphQL runs (an invalid credential): HTTP 401 with
 * the invalid_token challenge and a GraphQL-shaped body with only `errors` (no `data`).
 */
function expectInvalidToken(response: LightMyRequestResponse, credential: string): void {
  expect({ status: response.statusCode, body: response.body }).toMatchObject({ status: 401 });
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(response.headers['www-authenticate']).toMatch(INVALID_TOKEN);
  const body = json<{ errors: { message: string; extensions: Record<string, unknown> }[] }>(response);
  expect(Object.keys(body)).toEqual(['errors']);
  expect(body.errors).toHaveLength(1);
  expect(body.errors[0]).toEqual({ message: expect.any(String) as string, extensions: { code: 'invalid-token', status: 401 } });
  const secret = credential.replace(/^\S+\s*/, '');
  if (secret.length > 8) {
    expect(response.body).not.toContain(secret);
    expect(String(response.headers['www-authenticate'])).not.toContain(secret);
  }
}

/** How a request came out, in terms both APIs share. */
type Outcome = 'allowed' | 'authentication-required' | 'forbidden' | 'invalid-token' | 'not-found' | 'other';

function restOutcome(response: LightMyRequestResponse): Outcome {
  if (response.statusCode >= 200 && response.statusCode < 300) return 'allowed';
  const code = (json<{ code?: string }>(response).code ?? 'other') as Outcome;
  return ['authentication-required', 'forbidden', 'invalid-token', 'not-found'].includes(code) ? code : 'other';
}

function graphqlOutcome(reply: LightMyRequestResponse): Outcome {
  if (reply.statusCode === 401) return 'invalid-token';
  const body = json<{ errors?: { extensions: { code: string } }[] }>(reply);
  const code = body.errors?.[0]?.extensions.code;
  if (code === undefined) return 'allowed';
  return (['authentication-required', 'forbidden', 'invalid-token', 'not-found'].includes(code) ? code : 'other') as Outcome;
}

describe('access rules × credentials, on every GraphQL operation of the example schema (as REST)', () => {
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
    const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'graphql table', scopes, ...(subject === null ? {} : { subject }) } });
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

  /** Everything stored in a resource, as the admin sees it through REST. */
  async function stored(resource: string): Promise<string> {
    const response = await t.app.inject({ method: 'GET', url: `/${resource}?limit=1000` });
    expect(response.statusCode).toBe(200);
    return response.body;
  }

  interface ResourceSpec {
    name: 'users' | 'posts' | 'products' | 'orders';
    type: string;
    singular: string;
    readPublic: boolean;
    readScopes: string[];
    writeScopes: string[];
    /** A REST body of a fresh row (the marker field makes its values unique). */
    body: () => Record<string, unknown>;
    /** The same as GraphQL input (references as IDs). */
    input: () => Record<string, unknown>;
    patch: Record<string, unknown>;
    /** A field whose value is unique per row: must not appear in a refused response. */
    marker: string;
  }

  const specs: ResourceSpec[] = [
    {
      name: 'users',
      type: 'User',
      singular: 'user',
      readPublic: false,
      readScopes: USERS_READ,
      writeScopes: ['users:write'],
      body: () => ({ name: `User ${++serial}` }),
      input: () => ({ name: `User ${++serial}` }),
      patch: { bio: 'patched' },
      marker: 'name',
    },
    {
      name: 'posts',
      type: 'Post',
      singular: 'post',
      readPublic: true,
      readScopes: [],
      writeScopes: ['posts:write'],
      body: () => ({ title: `Post ${++serial}`, userId: 1 }),
      input: () => ({ title: `Post ${++serial}`, userId: '1' }),
      patch: { body: 'patched' },
      marker: 'title',
    },
    {
      name: 'products',
      type: 'Product',
      singular: 'product',
      readPublic: true,
      readScopes: [],
      writeScopes: ['products:write'],
      body: () => ({ name: `Product ${++serial}`, sku: `SKU-${++serial}`, price: 9.5 }),
      input: () => ({ name: `Product ${++serial}`, sku: `SKU-${++serial}`, price: 9.5 }),
      patch: { stock: 3 },
      marker: 'name',
    },
    {
      name: 'orders',
      type: 'Order',
      singular: 'order',
      readPublic: false,
      readScopes: ORDERS_READ,
      writeScopes: ['orders:write'],
      body: () => ({ userId: 1, productId, quantity: 2, note: `Order ${++serial}` }),
      input: () => ({ userId: '1', productId: String(productId), quantity: 2, note: `Order ${++serial}` }),
      patch: { quantity: 3 },
      marker: 'note',
    },
  ];

  /** What a case sends, built against fresh rows (as admin). */
  interface Prepared {
    query: string;
    variables: Record<string, unknown>;
    /** The REST request of the same meaning. */
    rest: { method: Method; url: string; payload?: Record<string, unknown> };
    /** The row the case works on, when there is one. */
    row?: Row;
  }

  interface OperationCase {
    op: string;
    prepare: () => Promise<Prepared>;
    public: boolean;
    denied: string[];
    right: string[];
    /** Where the refusal shows, and the data that remains (nothing of the row). */
    refused: (p: Prepared) => { path: Path; data: unknown };
    /** The data of an allowed request. */
    allowed: (data: Record<string, unknown>, p: Prepared) => void;
    /** A refused write changes nothing. */
    writes: boolean;
  }

  function operations(spec: ResourceSpec): OperationCase[] {
    const plural = spec.name;
    const { singular, type, marker } = spec;
    const fresh = (): Promise<Row> => adminCreate(spec.name, spec.body());
    const read = { public: spec.readPublic, denied: spec.readScopes, right: spec.readPublic ? [] : [must(spec.readScopes[0])], writes: false };
    const write = { public: false, denied: spec.writeScopes, right: spec.writeScopes, writes: true };
    const cases: OperationCase[] = [
      {
        op: `query ${singular}(id)`,
        prepare: async () => {
          const row = await fresh();
          return { query: `query($id: ID!) { ${singular}(id: $id) { id ${marker} } }`, variables: { id: String(row.id) }, rest: { method: 'GET', url: `/${plural}/${row.id}` }, row };
        },
        ...read,
        refused: () => ({ path: [singular], data: { [singular]: null } }),
        allowed: (data, p) => expect(data).toEqual({ [singular]: { id: String(must(p.row).id), [marker]: must(p.row)[marker] } }),
      },
      {
        op: `query ${plural}`,
        prepare: async () => {
          const row = await fresh();
          return { query: `{ ${plural}(first: 1000) { id ${marker} } }`, variables: {}, rest: { method: 'GET', url: `/${plural}?limit=1000` }, row };
        },
        ...read,
        refused: () => ({ path: [plural], data: { [plural]: null } }),
        allowed: (data, p) => expect(data[plural]).toContainEqual({ id: String(must(p.row).id), [marker]: must(p.row)[marker] }),
      },
      {
        op: `query ${plural}Connection`,
        prepare: async () => {
          const row = await fresh();
          return { query: `{ ${plural}Connection(first: 1000) { totalCount nodes { id ${marker} } } }`, variables: {}, rest: { method: 'GET', url: `/${plural}?limit=1000&count=true` }, row };
        },
        ...read,
        refused: () => ({ path: [`${plural}Connection`], data: { [`${plural}Connection`]: null } }),
        allowed: (data, p) => {
          const connection = data[`${plural}Connection`] as { totalCount: number; nodes: unknown[] };
          expect(connection.nodes).toContainEqual({ id: String(must(p.row).id), [marker]: must(p.row)[marker] });
          expect(connection.totalCount).toBe(connection.nodes.length);
        },
      },
      {
        op: `mutation create${type}`,
        prepare: () => {
          const input = spec.input();
          const payload = spec.body();
          return Promise.resolve({ query: `mutation($input: ${type}CreateInput!) { create${type}(input: $input) { id ${marker} } }`, variables: { input }, rest: { method: 'POST', url: `/${plural}`, payload } });
        },
        ...write,
        refused: () => ({ path: [`create${type}`], data: { [`create${type}`]: null } }),
        allowed: (data, p) => expect(data).toEqual({ [`create${type}`]: { id: expect.stringMatching(/^\d+$/) as string, [marker]: (p.variables.input as Record<string, unknown>)[marker] } }),
      },
      {
        op: `mutation update${type}`,
        prepare: async () => {
          const row = await fresh();
          const restRow = await fresh();
          return {
            query: `mutation($id: ID!, $input: ${type}UpdateInput!) { update${type}(id: $id, input: $input) { id ${Object.keys(spec.patch).join(' ')} } }`,
            variables: { id: String(row.id), input: spec.patch },
            rest: { method: 'PATCH', url: `/${plural}/${restRow.id}`, payload: spec.patch },
            row,
          };
        },
        ...write,
        refused: () => ({ path: [`update${type}`], data: { [`update${type}`]: null } }),
        allowed: (data, p) => expect(data).toEqual({ [`update${type}`]: { id: String(must(p.row).id), ...spec.patch } }),
      },
      {
        op: `mutation replace${type}`,
        prepare: async () => {
          const row = await fresh();
          const restRow = await fresh();
          return {
            query: `mutation($id: ID!, $input: ${type}CreateInput!) { replace${type}(id: $id, input: $input) { id ${marker} } }`,
            variables: { id: String(row.id), input: spec.input() },
            rest: { method: 'PUT', url: `/${plural}/${restRow.id}`, payload: spec.body() },
            row,
          };
        },
        ...write,
        refused: () => ({ path: [`replace${type}`], data: { [`replace${type}`]: null } }),
        allowed: (data, p) => expect(data).toEqual({ [`replace${type}`]: { id: String(must(p.row).id), [marker]: (p.variables.input as Record<string, unknown>)[marker] } }),
      },
      {
        op: `mutation delete${type}`,
        prepare: async () => {
          const row = await fresh();
          const restRow = await fresh();
          return { query: `mutation($id: ID!) { delete${type}(id: $id) }`, variables: { id: String(row.id) }, rest: { method: 'DELETE', url: `/${plural}/${restRow.id}` }, row };
        },
        ...write,
        refused: () => ({ path: [`delete${type}`], data: { [`delete${type}`]: null } }),
        allowed: (data, p) => expect(data).toEqual({ [`delete${type}`]: String(must(p.row).id) }),
      },
    ];
    return [...cases, ...relationCases(spec, fresh)];
  }

  /**
   * Relation fields: as REST's relation route (/users/1/posts) and embed (?include=orders), they
   * need read access to both ends. Where the parent may be read, the refusal is on the relation.
   */
  function relationCases(spec: ResourceSpec, fresh: () => Promise<Row>): OperationCase[] {
    const { singular, name: plural } = spec;
    const one = async (selection: string, restUrl: (id: number) => string): Promise<Prepared> => {
      const row = await fresh();
      return { query: `query($id: ID!) { ${singular}(id: $id) { id ${selection} } }`, variables: { id: String(row.id) }, rest: { method: 'GET', url: restUrl(row.id) }, row };
    };
    const list = async (selection: string, restUrl: string): Promise<Prepared> => {
      const row = await fresh();
      return { query: `{ ${plural}(first: 1, sort: [ID_DESC]) { id ${selection} } }`, variables: {}, rest: { method: 'GET', url: restUrl }, row };
    };
    const base = { writes: false };
    switch (spec.name) {
      case 'users':
        return [
          {
            op: 'relation field user { posts }',
            prepare: () => one('posts { id }', (id) => `/users/${id}/posts`),
            public: false,
            denied: USERS_READ,
            right: ['users:read'],
            refused: () => ({ path: ['user'], data: { user: null } }),
            allowed: (data, p) => expect(data).toEqual({ user: { id: String(must(p.row).id), posts: [] } }),
            ...base,
          },
          {
            op: 'relation field users { orders } (as include=orders)',
            prepare: () => list('orders { id }', '/users?include=orders'),
            public: false,
            denied: USERS_READ,
            right: ['users:read', 'orders:read'],
            refused: () => ({ path: ['users'], data: { users: null } }),
            allowed: (data, p) => expect(data).toEqual({ users: [{ id: String(must(p.row).id), orders: [] }] }),
            ...base,
          },
        ];
      case 'posts':
        return [
          {
            op: 'relation field post { user }',
            prepare: () => one('user { id name }', (id) => `/posts/${id}/user`),
            public: false,
            denied: USERS_READ,
            right: ['users:read'],
            // The post is public: it stays, its user is null.
            refused: (p) => ({ path: ['post', 'user'], data: { post: { id: String(must(p.row).id), user: null } } }),
            allowed: (data, p) => expect(data).toEqual({ post: { id: String(must(p.row).id), user: { id: '1', name: 'Alice' } } }),
            ...base,
          },
          {
            op: 'relation field posts { user } (as include=user)',
            prepare: () => list('user { id }', '/posts?include=user'),
            public: false,
            denied: USERS_READ,
            right: ['users:read'],
            refused: (p) => ({ path: ['posts', 0, 'user'], data: { posts: [{ id: String(must(p.row).id), user: null }] } }),
            allowed: (data, p) => expect(data).toEqual({ posts: [{ id: String(must(p.row).id), user: { id: '1' } }] }),
            ...base,
          },
        ];
      case 'products':
        return [
          {
            op: 'relation field product { orders }',
            prepare: () => one('orders { id }', (id) => `/products/${id}/orders`),
            public: false,
            denied: ORDERS_READ,
            right: ['orders:read'],
            // The product is public: it stays, its orders (a nullable list) are null.
            refused: (p) => ({ path: ['product', 'orders'], data: { product: { id: String(must(p.row).id), orders: null } } }),
            allowed: (data, p) => expect(data).toEqual({ product: { id: String(must(p.row).id), orders: [] } }),
            ...base,
          },
          {
            op: 'relation field products { orders } (as include=orders)',
            prepare: () => list('orders { id }', '/products?include=orders'),
            public: false,
            denied: ORDERS_READ,
            right: ['orders:read'],
            refused: (p) => ({ path: ['products', 0, 'orders'], data: { products: [{ id: String(must(p.row).id), orders: null }] } }),
            allowed: (data, p) => expect(data).toEqual({ products: [{ id: String(must(p.row).id), orders: [] }] }),
            ...base,
          },
        ];
      case 'orders':
        return [
          {
            op: 'relation field order { product }',
            prepare: () => one('product { id }', (id) => `/orders/${id}/product`),
            public: false,
            denied: ORDERS_READ,
            right: ['orders:read'],
            refused: () => ({ path: ['order'], data: { order: null } }),
            allowed: (data, p) => expect(data).toEqual({ order: { id: String(must(p.row).id), product: { id: String(productId) } } }),
            ...base,
          },
          {
            op: 'relation field orders { user } (as include=user)',
            prepare: () => list('user { id }', '/orders?include=user'),
            public: false,
            denied: ORDERS_READ,
            right: ['orders:read', 'users:read'],
            refused: () => ({ path: ['orders'], data: { orders: null } }),
            allowed: (data, p) => expect(data).toEqual({ orders: [{ id: String(must(p.row).id), user: { id: '1' } }] }),
            ...base,
          },
        ];
    }
  }

  type Kind = 'anonymous' | 'invalid' | 'wrong' | 'right';
  interface CredentialCase {
    name: string;
    kind: Kind;
    /** The Authorization header to send ('' = none); undefined = the test helper's admin token. */
    header: (c: OperationCase) => Promise<string | undefined>;
  }

  const credentials: CredentialCase[] = [
    { name: 'no token', kind: 'anonymous', header: () => Promise.resolve('') },
    { name: 'Basic scheme', kind: 'invalid', header: () => Promise.resolve('Basic dXNlcjpwYXNzd29yZA==') },
    { name: '"Bearer" alone', kind: 'invalid', header: () => Promise.resolve('Bearer') },
    { name: 'Bearer garbage', kind: 'invalid', header: () => Promise.resolve('Bearer %%not-a-token%%') },
    { name: 'Bearer with two words', kind: 'invalid', header: () => Promise.resolve('Bearer two words') },
    { name: 'unknown rg_ key', kind: 'invalid', header: () => Promise.resolve(bearer(unknownKey)) },
    { name: 'revoked key (all scopes)', kind: 'invalid', header: () => Promise.resolve(bearer(revokedKey)) },
    { name: 'expired key (all scopes)', kind: 'invalid', header: () => Promise.resolve(bearer(expiredKey)) },
    { name: 'key with a wrong scope', kind: 'wrong', header: () => Promise.resolve(bearer(wrongKey)) },
    { name: 'key with the right scope', kind: 'right', header: async (c) => (c.right.length === 0 ? bearer(wrongKey) : bearer(await key(c.right))) },
    { name: 'admin token', kind: 'right', header: () => Promise.resolve(undefined) },
    { name: 'admin API key', kind: 'right', header: () => Promise.resolve(bearer(adminKey)) },
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

  for (const spec of specs) {
    for (const c of operations(spec)) {
      describe(`${spec.name}: ${c.op}`, () => {
        for (const credential of credentials) {
          const expected: Outcome =
            credential.kind === 'invalid'
              ? 'invalid-token'
              : credential.kind === 'anonymous' && !c.public
                ? 'authentication-required'
                : credential.kind === 'wrong' && !c.public
                  ? 'forbidden'
                  : 'allowed';
          it(`${credential.name} → ${expected}, as REST`, async () => {
            const prepared = await c.prepare();
            const header = await credential.header(c);
            const headers: Record<string, string> = header === undefined ? {} : { authorization: header };
            const before = c.writes ? await stored(spec.name) : '';
            const reply = await graphql(t.app, prepared.query, { variables: prepared.variables, headers });
            const response = reply.response;

            if (expected === 'invalid-token') {
              expectInvalidToken(response, header ?? '');
            } else if (expected === 'allowed') {
              c.allowed(dataOf(reply), prepared);
            } else {
              const refused = c.refused(prepared);
              expect(response.statusCode).toBe(200);
              expect(reply.body.data, response.body).toEqual(refused.data);
              onlyError(reply, expected, refused.path);
              if (prepared.row !== undefined) expect(response.body).not.toContain(String(prepared.row[spec.marker]));
            }
            if (c.writes && expected !== 'allowed') expect(await stored(spec.name)).toBe(before);

            // The REST request of the same meaning, with the same credential, comes out the same.
            const restResponse = await t.app.inject({ ...prepared.rest, headers, ...(prepared.rest.payload === undefined ? {} : { payload: prepared.rest.payload }) });
            expect(restOutcome(restResponse), restResponse.body).toBe(expected);
            expect(graphqlOutcome(response)).toBe(expected);
          });
        }
      });
    }
  }

  it('a refused mutation changes nothing, whatever the refused credential', async () => {
    const user = await adminCreate('users', { name: 'Untouched' });
    const id = String(user.id);
    for (const header of ['', 'Bearer rg_unknown', bearer(wrongKey), bearer(revokedKey), bearer(expiredKey), bearer(await key(['users:read']))]) {
      for (const query of [
        `mutation { updateUser(id: "${id}", input: { name: "Changed" }) { id } }`,
        `mutation { replaceUser(id: "${id}", input: { name: "Changed" }) { id } }`,
        `mutation { deleteUser(id: "${id}") }`,
      ]) {
        const response = await t.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', authorization: header }, payload: JSON.stringify({ query }) });
        const outcome = graphqlOutcome(response);
        expect(['authentication-required', 'invalid-token', 'forbidden']).toContain(outcome);
        expect(response.body).not.toContain('Changed');
      }
    }
    expect(json(await t.app.inject({ method: 'GET', url: `/users/${id}` }))).toMatchObject({ id: user.id, name: 'Untouched' });
  });

  it('a document with an allowed and a refused field: data for the allowed one, an error for the other', async () => {
    const reply = await graphql<{ products: { name: string }[]; users: null }>(t.app, '{ products(first: 1) { name } users { id name } }', {
      headers: { authorization: bearer(await key(['products:write'])) },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ products: [{ name: 'Widget' }], users: null });
    onlyError(reply, 'forbidden', ['users']);
    expect(reply.response.body).not.toContain('Alice');
    const nullable = await graphql<{ products: { name: string }[]; user: null }>(t.app, '{ products(first: 1) { name } user(id: "1") { name } }', {
      headers: { authorization: bearer(await key(['products:write'])) },
    });
    expect(nullable.body.data).toEqual({ products: [{ name: 'Widget' }], user: null });
    onlyError(nullable, 'forbidden', ['user']);
    expect(nullable.response.body).not.toContain('Alice');
  });

  it('the error says which scopes would do, like REST’s insufficient_scope challenge', async () => {
    const reply = await graphql(t.app, '{ orders { id } }', { headers: { authorization: bearer(wrongKey) } });
    const error = onlyError(reply, 'forbidden', ['orders']);
    for (const scope of ORDERS_READ) expect(error.message).toContain(scope);
    const rest = await t.app.inject({ method: 'GET', url: '/orders', headers: { authorization: bearer(wrongKey) } });
    expect(json<{ detail: string }>(rest).detail).toBe(error.message);
  });

  it('any one of the listed scopes suffices (users:write alone reads users); a read scope does not write', async () => {
    const writer = bearer(await key(['users:write']));
    expect(dataOf(await graphql<{ users: unknown[] }>(t.app, '{ users { id } }', { headers: { authorization: writer } })).users.length).toBeGreaterThan(0);
    const reader = await graphql(t.app, 'mutation { createUser(input: { name: "No" }) { id } }', { headers: { authorization: bearer(await key(['users:read'])) } });
    expect(reader.body.data).toEqual({ createUser: null });
    const error = onlyError(reader, 'forbidden', ['createUser']);
    expect(error.message).toContain('users:write');
  });

  it('the Bearer scheme name is case-insensitive', async () => {
    const reply = await graphql<{ users: unknown[] }>(t.app, '{ users { id } }', { headers: { authorization: `bearer ${adminKey}` } });
    expect(dataOf(reply).users.length).toBeGreaterThan(0);
  });

  it('GET /graphql with an invalid credential is refused the same way (401, GraphQL-shaped, invalid_token)', async () => {
    const secret = newKeyText();
    for (const query of ['{ products { id } }', '{ users { id } }']) {
      const response = await t.app.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent(query)}`, headers: { authorization: bearer(secret), accept: 'application/json' } });
      expectInvalidToken(response, bearer(secret));
    }
  });

  it('an invalid credential is refused even for public data and for documents that would not validate', async () => {
    for (const query of ['{ products { id } }', '{ nosuchfield }', 'not graphql at all', 'mutation { createProduct(input: { name: "X", sku: "X-1", price: 1 }) { id } }']) {
      const response = await t.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', authorization: 'Basic abc' }, payload: JSON.stringify({ query }) });
      expectInvalidToken(response, 'Basic abc');
    }
    expect(json<Row[]>(await t.app.inject({ method: 'GET', url: '/products?sku=X-1' }))).toEqual([]);
  });

  it('anonymous: public reads work; a refused read is a GraphQL error with HTTP 200 and no WWW-Authenticate', async () => {
    const posts = await graphql<{ posts: unknown[] }>(t.app, '{ posts { id title } }', { headers: { authorization: '' } });
    expect(dataOf(posts).posts.length).toBeGreaterThan(0);
    const users = await graphql(t.app, '{ users { id } }', { headers: { authorization: '' } });
    expect(users.status).toBe(200);
    expect(users.response.headers['www-authenticate']).toBeUndefined();
    expect(users.body.data).toEqual({ users: null });
    onlyError(users, 'authentication-required', ['users']);
  });
});

describe('owner rule through GraphQL (orders: private reads, owner userId; posts: public reads, owner userId)', () => {
  let t: TestApp;
  let alice: string;
  let bob: string;
  let noSubject: string;
  let usersOnly: string;
  let productId: number;
  let aliceOrders: string[];
  let bobOrder: string;
  let alicePost: string;
  let bobPost: string;

  const as = (token: string) => ({ authorization: bearer(token) });
  async function created(url: string, payload: Record<string, unknown>): Promise<string> {
    const response = await t.app.inject({ method: 'POST', url, payload });
    expect(response.statusCode, response.body).toBe(201);
    return String(json<Row>(response).id);
  }
  async function tokenFor(subject: string | undefined, scopes = ['users:read', 'orders:read', 'orders:write', 'posts:write']): Promise<string> {
    const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: `owner ${subject ?? 'none'}`, scopes, ...(subject === undefined ? {} : { subject }) } });
    expect(response.statusCode).toBe(201);
    return must(json<TokenBody>(response).key);
  }
  async function adminGet(url: string): Promise<string> {
    return (await t.app.inject({ method: 'GET', url })).body;
  }
  const ids = (nodes: readonly { id: string }[]): string[] => nodes.map((n) => n.id);

  beforeAll(async () => {
    t = await startTestApp({ apiKeyCacheMs: 0 });
    await created('/users', { name: 'Alice' });
    await created('/users', { name: 'Bob' });
    productId = Number(await created('/products', { name: 'Widget', sku: 'W-1', price: 5 }));
    aliceOrders = [await created('/orders', { userId: 1, productId, quantity: 1 }), await created('/orders', { userId: 1, productId, quantity: 2 })];
    bobOrder = await created('/orders', { userId: 2, productId, quantity: 3, note: 'Bob’s secret note' });
    alicePost = await created('/posts', { title: 'Alice writes', userId: 1 });
    bobPost = await created('/posts', { title: 'Bob writes', userId: 2 });
    alice = await tokenFor('1');
    bob = await tokenFor('2');
    noSubject = await tokenFor(undefined);
    usersOnly = await tokenFor('1', ['users:read']);
  });
  afterAll(async () => t.close());

  describe('orders (private reads): other rows are simply not there', () => {
    it('orders and ordersConnection show only the token’s own orders, and totalCount agrees', async () => {
      const reply = await graphql<{ orders: { id: string }[]; ordersConnection: { totalCount: number; nodes: { id: string }[] } }>(
        t.app,
        '{ orders { id } ordersConnection { totalCount nodes { id } } }',
        { headers: as(alice) },
      );
      const data = dataOf(reply);
      expect(ids(data.orders)).toEqual(aliceOrders);
      expect(data.ordersConnection).toEqual({ totalCount: 2, nodes: aliceOrders.map((id) => ({ id })) });
      expect(ids(dataOf(await graphql<{ orders: { id: string }[] }>(t.app, '{ orders { id } }', { headers: as(bob) })).orders)).toEqual([bobOrder]);
    });

    it('filtering for another user’s rows finds nothing', async () => {
      const reply = await graphql(t.app, `{ orders(filter: { userId: { eq: "2" } }) { id } ordersConnection(filter: { id: { eq: "${bobOrder}" } }) { totalCount } }`, { headers: as(alice) });
      expect(dataOf(reply)).toEqual({ orders: [], ordersConnection: { totalCount: 0 } });
    });

    it('order(id) of another user’s order → null and not-found, as for a missing one', async () => {
      const other = await graphql(t.app, `{ order(id: "${bobOrder}") { id note } }`, { headers: as(alice) });
      expect(other.body.data).toEqual({ order: null });
      const otherError = onlyError(other, 'not-found', ['order']);
      expect(other.response.body).not.toContain('secret');
      const missing = await graphql(t.app, '{ order(id: "999999") { id } }', { headers: as(alice) });
      const missingError = onlyError(missing, 'not-found', ['order']);
      expect(otherError.message.replace(bobOrder, 'N')).toBe(missingError.message.replace('999999', 'N'));
      const own = await graphql(t.app, `{ order(id: "${must(aliceOrders[0])}") { id userId } }`, { headers: as(alice) });
      expect(dataOf(own)).toEqual({ order: { id: aliceOrders[0], userId: '1' } });
    });

    it('user.orders and user.ordersConnection carry only the token’s own orders, for every user', async () => {
      const reply = await graphql<{ users: { id: string; orders: { id: string }[]; ordersConnection: { totalCount: number; nodes: { id: string }[] } }[] }>(
        t.app,
        '{ users { id orders { id } ordersConnection { totalCount nodes { id } } } }',
        { headers: as(alice) },
      );
      expect(dataOf(reply).users).toEqual([
        { id: '1', orders: aliceOrders.map((id) => ({ id })), ordersConnection: { totalCount: 2, nodes: aliceOrders.map((id) => ({ id })) } },
        { id: '2', orders: [], ordersConnection: { totalCount: 0, nodes: [] } },
      ]);
      const single = await graphql(t.app, '{ user(id: "2") { name orders { id } } }', { headers: as(alice) });
      expect(dataOf(single)).toEqual({ user: { name: 'Bob', orders: [] } });
    });

    it('usersConnection → orders: the same through a connection', async () => {
      const reply = await graphql<{ usersConnection: { edges: { node: { id: string; orders: { id: string }[] } }[] } }>(
        t.app,
        '{ usersConnection { edges { node { id orders { id } } } } }',
        { headers: as(bob) },
      );
      expect(dataOf(reply).usersConnection.edges.map((e) => [e.node.id, ids(e.node.orders)])).toEqual([
        ['1', []],
        ['2', [bobOrder]],
      ]);
    });

    it('product.orders (a public parent) carries only the token’s own orders', async () => {
      const reply = await graphql(t.app, `{ product(id: "${productId}") { orders { id } ordersConnection { totalCount } } }`, { headers: as(bob) });
      expect(dataOf(reply)).toEqual({ product: { orders: [{ id: bobOrder }], ordersConnection: { totalCount: 1 } } });
    });

    it('update, replace and delete of another user’s order → not-found, and the row is unchanged', async () => {
      const before = await adminGet(`/orders/${bobOrder}`);
      for (const [field, query] of [
        ['updateOrder', `mutation { updateOrder(id: "${bobOrder}", input: { quantity: 99 }) { id } }`],
        ['replaceOrder', `mutation { replaceOrder(id: "${bobOrder}", input: { productId: "${productId}", quantity: 99 }) { id } }`],
        ['deleteOrder', `mutation { deleteOrder(id: "${bobOrder}") }`],
      ] as const) {
        const reply = await graphql(t.app, query, { headers: as(alice) });
        expect(reply.body.data).toEqual({ [field]: null });
        onlyError(reply, 'not-found', [field]);
      }
      expect(await adminGet(`/orders/${bobOrder}`)).toBe(before);
    });

    it('update of one’s own order works; moving it to another user → forbidden and unchanged', async () => {
      const id = await created('/orders', { userId: 1, productId, quantity: 1 });
      const patched = await graphql(t.app, `mutation { updateOrder(id: "${id}", input: { quantity: 5 }) { id userId quantity } }`, { headers: as(alice) });
      expect(dataOf(patched)).toEqual({ updateOrder: { id, userId: '1', quantity: 5 } });
      const same = await graphql(t.app, `mutation { updateOrder(id: "${id}", input: { userId: "1", quantity: 6 }) { quantity } }`, { headers: as(alice) });
      expect(dataOf(same)).toEqual({ updateOrder: { quantity: 6 } });
      const before = await adminGet(`/orders/${id}`);
      const moved = await graphql(t.app, `mutation { updateOrder(id: "${id}", input: { userId: "2" }) { id } }`, { headers: as(alice) });
      expect(moved.body.data).toEqual({ updateOrder: null });
      onlyError(moved, 'forbidden', ['updateOrder']);
      const replaced = await graphql(t.app, `mutation { replaceOrder(id: "${id}", input: { userId: "2", productId: "${productId}", quantity: 1 }) { id } }`, { headers: as(alice) });
      expect(replaced.body.data).toEqual({ replaceOrder: null });
      onlyError(replaced, 'forbidden', ['replaceOrder']);
      expect(await adminGet(`/orders/${id}`)).toBe(before);
    });

    it('replace of one’s own order keeps the owner from the token (userId may be left out)', async () => {
      const id = await created('/orders', { userId: 1, productId, quantity: 1 });
      const reply = await graphql(t.app, `mutation { replaceOrder(id: "${id}", input: { productId: "${productId}", quantity: 4 }) { id userId productId quantity } }`, { headers: as(alice) });
      expect(dataOf(reply)).toEqual({ replaceOrder: { id, userId: '1', productId: String(productId), quantity: 4 } });
    });

    it('delete of one’s own order returns its id; REST then 404s', async () => {
      const id = await created('/orders', { userId: 1, productId, quantity: 1 });
      expect(dataOf(await graphql(t.app, `mutation { deleteOrder(id: "${id}") }`, { headers: as(alice) }))).toEqual({ deleteOrder: id });
      expect((await t.app.inject({ method: 'GET', url: `/orders/${id}` })).statusCode).toBe(404);
    });

    it('create sets userId from the token’s subject; another userId → forbidden and nothing is created', async () => {
      const reply = await graphql<{ createOrder: { id: string; userId: string; quantity: number } }>(
        t.app,
        `mutation { createOrder(input: { productId: "${productId}", quantity: 7 }) { id userId quantity } }`,
        { headers: as(alice) },
      );
      expect(dataOf(reply).createOrder).toMatchObject({ userId: '1', quantity: 7 });
      expect(json(await t.app.inject({ method: 'GET', url: `/orders/${dataOf(reply).createOrder.id}` }))).toMatchObject({ userId: 1, quantity: 7 });
      const explicit = await graphql(t.app, `mutation { createOrder(input: { userId: "2", productId: "${productId}", quantity: 1 }) { userId } }`, { headers: as(bob) });
      expect(dataOf(explicit)).toEqual({ createOrder: { userId: '2' } });
      const before = await adminGet('/orders?limit=1000');
      const forged = await graphql(t.app, `mutation { createOrder(input: { userId: "2", productId: "${productId}", quantity: 1 }) { id } }`, { headers: as(alice) });
      expect(forged.body.data).toEqual({ createOrder: null });
      const error = onlyError(forged, 'forbidden', ['createOrder']);
      expect(error.message).toContain('userId');
      expect(await adminGet('/orders?limit=1000')).toBe(before);
    });

    it('a token without a subject owns nothing: empty list, not-found on order(id), forbidden on create', async () => {
      expect(dataOf(await graphql(t.app, '{ orders { id } ordersConnection { totalCount } }', { headers: as(noSubject) }))).toEqual({ orders: [], ordersConnection: { totalCount: 0 } });
      const one = await graphql(t.app, `{ order(id: "${must(aliceOrders[0])}") { id } }`, { headers: as(noSubject) });
      expect(one.body.data).toEqual({ order: null });
      onlyError(one, 'not-found', ['order']);
      const before = await adminGet('/orders?limit=1000');
      const create = await graphql(t.app, `mutation { createOrder(input: { userId: "1", productId: "${productId}", quantity: 1 }) { id } }`, { headers: as(noSubject) });
      expect(create.body.data).toEqual({ createOrder: null });
      onlyError(create, 'forbidden', ['createOrder']);
      expect(await adminGet('/orders?limit=1000')).toBe(before);
    });

    it('the admin sees every order, in every place', async () => {
      const reply = await graphql<{ orders: { id: string }[]; user: { orders: { id: string }[] } }>(t.app, '{ orders(first: 1000) { id } user(id: "2") { orders { id } } }');
      const data = dataOf(reply);
      expect(ids(data.orders)).toEqual(expect.arrayContaining([...aliceOrders, bobOrder]));
      expect(ids(data.user.orders)).toContain(bobOrder);
    });
  });

  describe('posts (public reads): every row visible, only one’s own writable', () => {
    it('posts and post(id) show every post, to owners, other tokens and anonymous callers', async () => {
      for (const headers of [as(alice), as(bob), { authorization: '' }]) {
        const reply = await graphql<{ posts: { id: string }[]; post: { title: string } }>(t.app, `{ posts { id } post(id: "${bobPost}") { title } }`, { headers });
        const data = dataOf(reply);
        expect(ids(data.posts)).toEqual(expect.arrayContaining([alicePost, bobPost]));
        expect(data.post).toEqual({ title: 'Bob writes' });
      }
      const related = await graphql(t.app, '{ user(id: "2") { posts { id } } }', { headers: as(alice) });
      expect(dataOf(related)).toEqual({ user: { posts: [{ id: bobPost }] } });
    });

    it('update, replace and delete of another user’s post → forbidden, and the post is unchanged', async () => {
      const before = await adminGet(`/posts/${bobPost}`);
      for (const [field, query] of [
        ['updatePost', `mutation { updatePost(id: "${bobPost}", input: { title: "Hijacked" }) { id } }`],
        ['replacePost', `mutation { replacePost(id: "${bobPost}", input: { title: "Hijacked" }) { id } }`],
        ['deletePost', `mutation { deletePost(id: "${bobPost}") }`],
      ] as const) {
        const reply = await graphql(t.app, query, { headers: as(alice) });
        expect(reply.body.data).toEqual({ [field]: null });
        onlyError(reply, 'forbidden', [field]);
      }
      expect(await adminGet(`/posts/${bobPost}`)).toBe(before);
    });

    it('a missing post is still not-found for writes', async () => {
      const update = await graphql(t.app, 'mutation { updatePost(id: "999999", input: { title: "x" }) { id } }', { headers: as(alice) });
      expect(update.body.data).toEqual({ updatePost: null });
      onlyError(update, 'not-found', ['updatePost']);
      const remove = await graphql(t.app, 'mutation { deletePost(id: "999999") }', { headers: as(alice) });
      expect(remove.body.data).toEqual({ deletePost: null });
      onlyError(remove, 'not-found', ['deletePost']);
    });

    it('own post: update, replace (owner kept) and delete work; giving it away → forbidden', async () => {
      const id = await created('/posts', { title: 'Mine', userId: 1 });
      expect(dataOf(await graphql(t.app, `mutation { updatePost(id: "${id}", input: { title: "Mine, edited" }) { title } }`, { headers: as(alice) }))).toEqual({
        updatePost: { title: 'Mine, edited' },
      });
      expect(dataOf(await graphql(t.app, `mutation { replacePost(id: "${id}", input: { title: "Mine, replaced" }) { id title userId } }`, { headers: as(alice) }))).toEqual({
        replacePost: { id, title: 'Mine, replaced', userId: '1' },
      });
      const givenAway = await graphql(t.app, `mutation { updatePost(id: "${id}", input: { userId: "2" }) { id } }`, { headers: as(alice) });
      expect(givenAway.body.data).toEqual({ updatePost: null });
      onlyError(givenAway, 'forbidden', ['updatePost']);
      expect(json(await t.app.inject({ method: 'GET', url: `/posts/${id}` }))).toMatchObject({ userId: 1, title: 'Mine, replaced' });
      expect(dataOf(await graphql(t.app, `mutation { deletePost(id: "${id}") }`, { headers: as(alice) }))).toEqual({ deletePost: id });
    });

    it('create sets userId from the token; another userId → forbidden', async () => {
      const reply = await graphql(t.app, 'mutation { createPost(input: { title: "By Bob" }) { title userId } }', { headers: as(bob) });
      expect(dataOf(reply)).toEqual({ createPost: { title: 'By Bob', userId: '2' } });
      const before = await adminGet('/posts?limit=1000');
      const forged = await graphql(t.app, 'mutation { createPost(input: { title: "As Alice", userId: "1" }) { id } }', { headers: as(bob) });
      expect(forged.body.data).toEqual({ createPost: null });
      onlyError(forged, 'forbidden', ['createPost']);
      expect(await adminGet('/posts?limit=1000')).toBe(before);
    });
  });

  describe('relation fields need read access to their target', () => {
    it('users:read alone asking user { orders } → forbidden on that field; the rest of the document has its data', async () => {
      const reply = await graphql<{ me: { name: string }; user: unknown }>(t.app, '{ me: user(id: "1") { name } user(id: "1") { name orders { id } } }', { headers: as(usersOnly) });
      expect(reply.status).toBe(200);
      const error = onlyError(reply, 'forbidden', ['user', 'orders']);
      for (const scope of ORDERS_READ) expect(error.message).toContain(scope);
      // User.orders is a nullable list: it alone is null, the user keeps its other fields.
      expect(reply.body.data).toEqual({ me: { name: 'Alice' }, user: { name: 'Alice', orders: null } });
      for (const id of [...aliceOrders, bobOrder]) expect(reply.response.body).not.toContain(`"id":"${id}"`);
    });

    it('users:read alone asking user { ordersConnection } → forbidden on that field', async () => {
      const reply = await graphql(t.app, '{ user(id: "1") { name ordersConnection { totalCount } } }', { headers: as(usersOnly) });
      onlyError(reply, 'forbidden', ['user', 'ordersConnection']);
      expect(reply.body.data).toEqual({ user: { name: 'Alice', ordersConnection: null } });
      expect(reply.response.body).not.toContain('totalCount');
    });

    it('orders:read without users:read: order { user } is null with a forbidden error; the order and its product remain', async () => {
      const ordersOnly = await tokenFor('1', ['orders:read']);
      const id = must(aliceOrders[0]);
      const reply = await graphql(t.app, `{ order(id: "${id}") { id user { name } product { name } } }`, { headers: as(ordersOnly) });
      onlyError(reply, 'forbidden', ['order', 'user']);
      expect(reply.body.data).toEqual({ order: { id, user: null, product: { name: 'Widget' } } });
      expect(reply.response.body).not.toContain('Alice');
    });

    it('anonymous: post { user } is null with authentication-required; the post remains', async () => {
      const reply = await graphql(t.app, `{ post(id: "${alicePost}") { title user { name } } }`, { headers: { authorization: '' } });
      onlyError(reply, 'authentication-required', ['post', 'user']);
      expect(reply.body.data).toEqual({ post: { title: 'Alice writes', user: null } });
    });

    it('anonymous: product { orders } → authentication-required on orders, which is null; the product remains', async () => {
      const reply = await graphql(t.app, `{ products { name } product(id: "${productId}") { name orders { id } } }`, { headers: { authorization: '' } });
      onlyError(reply, 'authentication-required', ['product', 'orders']);
      expect(reply.body.data).toEqual({ products: [{ name: 'Widget' }], product: { name: 'Widget', orders: null } });
      for (const id of [...aliceOrders, bobOrder]) expect(reply.response.body).not.toContain(`"id":"${id}"`);
    });
  });
});
