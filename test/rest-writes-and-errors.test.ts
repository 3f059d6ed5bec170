import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * Writes through HTTP: create, replace, update (JSON Merge Patch) and delete semantics, and every
 * error a client can meet, each as application/problem+json with its code, and each leaving the
 * stored data exactly as it was.
 */

type Row = Record<string, unknown>;
type Detail = { pointer?: string; parameter?: string; header?: string; detail: string };

const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

let t: TestApp;

async function send(method: InjectOptions['method'], url: string, body?: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  if (body === undefined) return t.app.inject({ method, url, headers });
  return t.app.inject({ method, url, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
}

async function create(resource: string, body: Row): Promise<Row> {
  const response = await send('POST', `/${resource}`, body);
  expect(response.statusCode, response.body).toBe(201);
  return json<Row>(response);
}

async function read(url: string): Promise<Row> {
  const response = await send('GET', url);
  expect(response.statusCode, response.body).toBe(200);
  return json<Row>(response);
}

/** Every stored row of every resource, as the API lists them. */
async function snapshot(): Promise<string> {
  const lists = await Promise.all(['users', 'posts', 'products', 'orders'].map((r) => t.app.inject({ method: 'GET', url: `/${r}?limit=1000` })));
  return lists.map((r) => r.body).join('\n');
}

/** Checks an RFC 9457 problem response and returns its body. */
function expectProblem(response: LightMyRequestResponse, status: number, code: string): Row & { errors?: Detail[] } {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
  const body = json<Row & { errors?: Detail[] }>(response);
  expect(body.type).toBe(`urn:restgraph:problem:${code}`);
  expect(body.code).toBe(code);
  expect(body.status).toBe(status);
  expect(typeof body.title).toBe('string');
  expect((body.title as string).length).toBeGreaterThan(0);
  expect(typeof body.detail).toBe('string');
  expect((body.detail as string).length).toBeGreaterThan(0);
  expect(body.requestId).toBe(response.headers['x-request-id']);
  expect(typeof body.instance).toBe('string');
  return body;
}

/** The errors list, order aside (a detail may be an asymmetric matcher). */
function expectErrors(body: { errors?: Detail[] }, expected: Detail[]): void {
  const key = (d: Detail): string => `${d.pointer ?? d.parameter ?? d.header ?? ''}|${typeof d.detail === 'string' ? d.detail : ''}`;
  const byLocation = (a: Detail, b: Detail): number => key(a).localeCompare(key(b));
  expect([...(body.errors ?? [])].sort(byLocation)).toEqual([...expected].sort(byLocation));
}

beforeAll(async () => {
  t = await startTestApp();
  // The fixed rows the error cases aim at: users 1 and 2, post 1, product 1, order 1 (user 2, product 1).
  await create('users', { name: 'Alice', email: 'alice@example.com', bio: 'first' });
  await create('users', { name: 'Bob', email: 'bob@example.com' });
  await create('posts', { title: 'Hello', userId: 1, tags: { a: 1 } });
  await create('products', { name: 'Widget', sku: 'SKU-1', price: 10 });
  await create('orders', { userId: 2, productId: 1, quantity: 1 });
});
afterAll(async () => t.close());

describe('create (POST)', () => {
  it('answers 201 with the stored object, Location and ETag; GET Location returns the same object', async () => {
    const response = await send('POST', '/users', { name: 'Carol', email: 'carol@example.com' });
    expect(response.statusCode).toBe(201);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    const user = json<Row>(response);
    expect(Object.keys(user)).toEqual(['id', 'name', 'email', 'bio', 'createdAt', 'updatedAt']);
    expect(user).toMatchObject({ name: 'Carol', email: 'carol@example.com', bio: null });
    expect(user.id).toEqual(expect.any(Number));
    expect(user.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(user.updatedAt).toBe(user.createdAt);
    expect(response.headers.location).toBe(`/users/${String(user.id)}`);
    expect(response.headers.etag).toMatch(/^"[\x21\x23-\x7e]+"$/);
    expect(await read(String(response.headers.location))).toEqual(user);
  });

  it('the versioned path answers with a versioned Location', async () => {
    const response = await send('POST', '/v1/users', { name: 'Versioned' });
    expect(response.statusCode).toBe(201);
    expect(response.headers.location).toBe(`/v1/users/${String(json<Row>(response).id)}`);
  });

  it('applies defaults to fields not sent, and keeps an explicit null', async () => {
    const product = await create('products', { name: 'Gizmo', sku: 'GIZ-1', price: 1.5 });
    expect(product).toMatchObject({ name: 'Gizmo', sku: 'GIZ-1', price: 1.5, currency: 'EUR', stock: 0, active: true });
    const post = await create('posts', { title: 'Defaults', userId: 1 });
    expect(post).toMatchObject({ body: null, published: false, publishedAt: null, tags: null });
    const cleared = await create('products', { name: 'Nulls', sku: 'NUL-1', price: 0, currency: null, stock: null, active: null });
    expect(cleared).toMatchObject({ currency: null, stock: null, active: null });
  });

  it('ignores createdAt and updatedAt in the body', async () => {
    const user = await create('users', { name: 'Clock', createdAt: '2000-01-01T00:00:00.000Z', updatedAt: '2000-01-01T00:00:00.000Z' });
    expect(user.createdAt).not.toBe('2000-01-01T00:00:00.000Z');
    expect(Date.parse(String(user.createdAt))).toBeGreaterThan(Date.parse('2020-01-01'));
  });

  it('stores datetimes as UTC instants and dates as given', async () => {
    const post = await create('posts', { title: 'Zoned', userId: 1, publishedAt: '2024-05-01T14:00:00+02:00' });
    expect(post.publishedAt).toBe('2024-05-01T12:00:00.000Z');
    const order = await create('orders', { userId: 1, productId: 1, quantity: 3, placedOn: '2024-02-29' });
    expect(order).toMatchObject({ placedOn: '2024-02-29', status: 'pending', note: null });
  });

  it('stores any JSON value in a json field as given', async () => {
    for (const tags of [[1, 'a', { b: null }], 'text', 42, true, {}, { deep: { er: [{ x: 1 }] } }]) {
      const post = await create('posts', { title: 'Tagged', userId: 1, tags });
      expect(post.tags).toEqual(tags);
      expect((await read(`/posts/${String(post.id)}`)).tags).toEqual(tags);
    }
  });

  it('keeps the members of a JSON object in the order sent, on every database', async () => {
    const tags = { zeta: 1, alpha: { y: 2, b: 3 }, mid: [{ k2: 0, k1: 0 }] };
    const post = await create('posts', { title: 'Ordered', userId: 1, tags });
    const order = (value: unknown): string => JSON.stringify(value);
    expect(order(post.tags)).toBe(order(tags));
    expect(order((await read(`/posts/${String(post.id)}`)).tags)).toBe(order(tags));
  });

  it('accepts application/json with parameters and in any case', async () => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
      const response = await t.app.inject({ method: 'POST', url: '/users', headers: { 'content-type': type }, payload: '{"name":"Typed"}' });
      expect(response.statusCode, type).toBe(201);
    }
  });
});

describe('replace (PUT)', () => {
  it('replaces the whole object: optional fields not sent are cleared, defaults apply again', async () => {
    const product = await create('products', { name: 'Full', sku: 'FUL-1', price: 5, currency: 'USD', stock: 7, active: false });
    const response = await send('PUT', `/products/${String(product.id)}`, { name: 'Replaced', sku: 'FUL-2', price: 6 });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    const replaced = json<Row>(response);
    expect(replaced).toEqual({ ...product, name: 'Replaced', sku: 'FUL-2', price: 6, currency: 'EUR', stock: 0, active: true, updatedAt: replaced.updatedAt });
    expect(replaced.createdAt).toBe(product.createdAt);
    expect(Date.parse(String(replaced.updatedAt))).toBeGreaterThan(Date.parse(String(product.updatedAt)));
    expect(await read(`/products/${String(product.id)}`)).toEqual(replaced);

    const user = await create('users', { name: 'Dora', email: 'dora@example.com', bio: 'bio' });
    const user2 = json<Row>(await send('PUT', `/users/${String(user.id)}`, { name: 'Dora' }));
    expect(user2).toMatchObject({ id: user.id, name: 'Dora', email: null, bio: null });
  });

  it('accepts id when it equals the URL id, and ignores createdAt/updatedAt (GET, edit, PUT works)', async () => {
    const user = await create('users', { name: 'Round', bio: 'trip' });
    const edited = { ...user, name: 'Round trip', createdAt: '1999-01-01T00:00:00.000Z' };
    const response = await send('PUT', `/users/${String(user.id)}`, edited);
    expect(response.statusCode).toBe(200);
    expect(json(response)).toMatchObject({ id: user.id, name: 'Round trip', bio: 'trip', createdAt: user.createdAt });
  });

  it('a missing required field is a 422 listing each one, and nothing changes', async () => {
    const before = await snapshot();
    const body = expectProblem(await send('PUT', '/products/1', { currency: 'USD' }), 422, 'validation-failed');
    expectErrors(body, [
      { pointer: '/name', detail: 'is required' },
      { pointer: '/sku', detail: 'is required' },
      { pointer: '/price', detail: 'is required' },
    ]);
    expect(await snapshot()).toBe(before);
  });

  it('a different id in the body is a 422 at /id', async () => {
    const body = expectProblem(await send('PUT', '/users/1', { id: 2, name: 'Alice' }), 422, 'validation-failed');
    expectErrors(body, [{ pointer: '/id', detail: 'must match the id in the URL (1)' }]);
  });

  it('an unknown id is a 404', async () => {
    expectProblem(await send('PUT', '/users/999999', { name: 'Ghost' }), 404, 'not-found');
  });
});

describe('update (PATCH, JSON Merge Patch)', () => {
  it('changes only the fields sent', async () => {
    const user = await create('users', { name: 'Eve', email: 'eve@example.com', bio: 'keeps' });
    const response = await send('PATCH', `/users/${String(user.id)}`, { name: 'Evelyn' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    const updated = json<Row>(response);
    expect(updated).toEqual({ ...user, name: 'Evelyn', updatedAt: updated.updatedAt });
    expect(Date.parse(String(updated.updatedAt))).toBeGreaterThan(Date.parse(String(user.updatedAt)));
    expect(await read(`/users/${String(user.id)}`)).toEqual(updated);
  });

  it('null clears an optional field', async () => {
    const user = await create('users', { name: 'Nell', email: 'nell@example.com', bio: 'gone soon' });
    const updated = json<Row>(await send('PATCH', `/users/${String(user.id)}`, { bio: null, email: null }));
    expect(updated).toMatchObject({ name: 'Nell', bio: null, email: null });
  });

  it('null on a required field is a 422 that says the field is required', async () => {
    const body = expectProblem(await send('PATCH', '/users/1', { name: null }), 422, 'validation-failed');
    expectErrors(body, [{ pointer: '/name', detail: 'is required and cannot be null' }]);
  });

  it('merges json fields recursively: members merge, null members are removed, arrays replace', async () => {
    const post = await create('posts', { title: 'Deep', userId: 1, tags: { a: 1, nested: { x: 1, y: 2 }, list: [1, 2], gone: 'soon' } });
    const url = `/posts/${String(post.id)}`;
    const merged = json<Row>(await send('PATCH', url, { tags: { nested: { y: null, z: 3 }, list: [3], b: true, gone: null } }));
    expect(merged.tags).toEqual({ a: 1, nested: { x: 1, z: 3 }, list: [3], b: true });
    expect((await read(url)).tags).toEqual({ a: 1, nested: { x: 1, z: 3 }, list: [3], b: true });
    expect(json<Row>(await send('PATCH', url, { tags: ['x'] })).tags).toEqual(['x']);
    expect(json<Row>(await send('PATCH', url, { tags: { a: 1 } })).tags).toEqual({ a: 1 });
    expect(json<Row>(await send('PATCH', url, { tags: null })).tags).toBeNull();
    expect(json<Row>(await send('PATCH', url, { tags: { fresh: { start: true } } })).tags).toEqual({ fresh: { start: true } });
  });

  it('application/merge-patch+json is read the same way as application/json', async () => {
    const user = await create('users', { name: 'Merge', bio: 'x' });
    const response = await t.app.inject({
      method: 'PATCH',
      url: `/users/${String(user.id)}`,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ bio: null, name: 'Merged' }),
    });
    expect(response.statusCode).toBe(200);
    expect(json(response)).toMatchObject({ name: 'Merged', bio: null });
  });

  it('an empty patch changes nothing, not even updatedAt', async () => {
    const user = await create('users', { name: 'Still' });
    const response = await send('PATCH', `/users/${String(user.id)}`, {});
    expect(response.statusCode).toBe(200);
    expect(json(response)).toEqual(user);
    expect(await read(`/users/${String(user.id)}`)).toEqual(user);
  });

  it('id equal to the URL id is accepted, another id is a 422', async () => {
    expect((await send('PATCH', '/users/1', { id: 1 })).statusCode).toBe(200);
    expectErrors(expectProblem(await send('PATCH', '/users/1', { id: 3 }), 422, 'validation-failed'), [{ pointer: '/id', detail: 'must match the id in the URL (1)' }]);
  });

  it('an unknown id is a 404', async () => {
    expectProblem(await send('PATCH', '/users/999999', { name: 'Ghost' }), 404, 'not-found');
  });

  it('a patch may move a post to another existing user', async () => {
    const post = await create('posts', { title: 'Moving', userId: 1 });
    expect(json<Row>(await send('PATCH', `/posts/${String(post.id)}`, { userId: 2 })).userId).toBe(2);
  });
});

describe('null on a required field, of every type, on POST, PUT and PATCH', () => {
  let own: TestApp;
  const SCHEMA = [
    'resources:',
    '  tasks:',
    '    access: { read: public, write: public }',
    '    fields:',
    '      title:    { type: string, required: true, format: email }',
    '      level:    { type: enum, values: [low, high], required: true }',
    '      size:     { type: integer, required: true, min: 1 }',
    '      due:      { type: date, required: true }',
    '      done:     { type: boolean, required: true, default: false }',
    '      meta:     { type: json, required: true }',
    '      note:     { type: string }',
    '      kind:     { type: enum, values: [a, b] }',
    '',
  ].join('\n');
  const REQUIRED = ['title', 'level', 'size', 'due', 'done', 'meta'];
  const whole = { title: 'a@example.com', level: 'low', size: 1, due: '2024-05-01', done: true, meta: { a: 1 } };
  beforeAll(async () => {
    own = await startTestApp({ schema: parseSchemaText(SCHEMA) });
    const made = await own.app.inject({ method: 'POST', url: '/tasks', payload: whole });
    expect(made.statusCode, made.body).toBe(201);
  });
  afterAll(async () => own.close());

  const nulls = Object.fromEntries(REQUIRED.map((name) => [name, null]));
  const expected = REQUIRED.map((name) => ({ pointer: `/${name}`, detail: 'is required and cannot be null' }));
  for (const [method, url] of [['POST', '/tasks'], ['PUT', '/tasks/1'], ['PATCH', '/tasks/1']] as const) {
    it(`${method}: one "is required and cannot be null" per field, nothing about its type; optional fields take null`, async () => {
      const refused = await own.app.inject({ method, url, payload: { ...whole, ...nulls, note: null, kind: null } });
      expectErrors(expectProblem(refused, 422, 'validation-failed'), expected);
      const cleared = await own.app.inject({ method, url, payload: { ...whole, note: null, kind: null } });
      expect(cleared.statusCode, cleared.body).toBe(method === 'POST' ? 201 : 200);
    });
  }

  it('GraphQL says the same for a required field set to null in an update', async () => {
    const reply = await own.app.inject({
      method: 'POST',
      url: '/graphql',
      payload: { query: 'mutation { updateTask(id: "1", input: { title: null, size: null, done: null, meta: null, note: null }) { id } }' },
    });
    const errors = (json<{ errors: { extensions: { code: string; errors: Detail[] } }[] }>(reply).errors);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.extensions.code).toBe('validation-failed');
    expectErrors(errors[0]?.extensions ?? {}, ['title', 'size', 'done', 'meta'].map((name) => ({ pointer: `/${name}`, detail: 'is required and cannot be null' })));
  });
});

describe('delete', () => {
  it('answers 204 with an empty body; the object is gone; a second DELETE is a 404', async () => {
    const user = await create('users', { name: 'Temp' });
    const response = await send('DELETE', `/users/${String(user.id)}`);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect(response.headers['content-type']).toBeUndefined();
    expectProblem(await send('GET', `/users/${String(user.id)}`), 404, 'not-found');
    expectProblem(await send('DELETE', `/users/${String(user.id)}`), 404, 'not-found');
  });

  it('ids are never reused after a delete', async () => {
    const first = await create('users', { name: 'Once' });
    await send('DELETE', `/users/${String(first.id)}`);
    const second = await create('users', { name: 'Twice' });
    expect(second.id).toBeGreaterThan(first.id as number);
  });

  it('restrict: a user with orders cannot be deleted (409), and nothing changes', async () => {
    const before = await snapshot();
    const body = expectProblem(await send('DELETE', '/users/2'), 409, 'reference-conflict');
    expect(body.errors?.length).toBe(1);
    expect(await snapshot()).toBe(before);
    expectProblem(await send('DELETE', '/products/1'), 409, 'reference-conflict');
    expect(await snapshot()).toBe(before);
  });

  it('cascade: deleting a user deletes their posts', async () => {
    const user = await create('users', { name: 'Author' });
    const posts = [await create('posts', { title: 'One', userId: user.id }), await create('posts', { title: 'Two', userId: user.id })];
    const other = await create('posts', { title: 'Not theirs', userId: 1 });
    expect((await send('DELETE', `/users/${String(user.id)}`)).statusCode).toBe(204);
    for (const post of posts) expectProblem(await send('GET', `/posts/${String(post.id)}`), 404, 'not-found');
    expect(json(await send('GET', `/posts?userId=${String(user.id)}`))).toEqual([]);
    expect((await send('GET', `/posts/${String(other.id)}`)).statusCode).toBe(200);
  });

  it('restrict wins over cascade: a user with posts and orders keeps both (the cascade is rolled back)', async () => {
    const user = await create('users', { name: 'Buyer' });
    const post = await create('posts', { title: 'Kept', userId: user.id });
    const order = await create('orders', { userId: user.id, productId: 1, quantity: 2 });
    const before = await snapshot();
    expectProblem(await send('DELETE', `/users/${String(user.id)}`), 409, 'reference-conflict');
    expect(await snapshot()).toBe(before);
    expect((await send('GET', `/posts/${String(post.id)}`)).statusCode).toBe(200);
    // Once the order is gone, the user (and their posts) can go.
    expect((await send('DELETE', `/orders/${String(order.id)}`)).statusCode).toBe(204);
    expect((await send('DELETE', `/users/${String(user.id)}`)).statusCode).toBe(204);
    expect((await send('GET', `/posts/${String(post.id)}`)).statusCode).toBe(404);
  });
});

interface ErrorCase {
  name: string;
  request: InjectOptions;
  status: number;
  code: string;
  /** The exact errors[] list, order aside; omitted when the problem has none or it is not checked. */
  errors?: Detail[];
  headers?: Record<string, string>;
}

const raw = (method: InjectOptions['method'], url: string, payload: string | undefined, contentType: string | undefined, extra: Record<string, string> = {}): InjectOptions => ({
  method,
  url,
  headers: { ...(contentType === undefined ? {} : { 'content-type': contentType }), ...extra },
  ...(payload === undefined ? {} : { payload }),
});
const body = (method: InjectOptions['method'], url: string, value: unknown, extra: Record<string, string> = {}): InjectOptions =>
  raw(method, url, JSON.stringify(value), 'application/json', extra);

const notAnObject: Detail[] = [{ pointer: '', detail: 'must be a JSON object' }];
const DATE_TIME = 'must be a valid date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z)';
const LEAP_SECOND = expect.stringContaining('date-time') as string;

const errorCases: ErrorCase[] = [
  // 400 malformed JSON
  { name: 'a JSON syntax error', request: raw('POST', '/users', '{"name":', 'application/json'), status: 400, code: 'malformed-json' },
  { name: 'a JavaScript object literal', request: raw('POST', '/users', "{name: 'x'}", 'application/json'), status: 400, code: 'malformed-json' },
  { name: 'a trailing comma on PUT', request: raw('PUT', '/users/1', '{"name":"x",}', 'application/json'), status: 400, code: 'malformed-json' },
  { name: 'not JSON on PATCH as merge-patch+json', request: raw('PATCH', '/users/1', 'name=x', 'application/merge-patch+json'), status: 400, code: 'malformed-json' },
  { name: 'an empty body on POST', request: raw('POST', '/users', '', 'application/json'), status: 400, code: 'malformed-json' },
  { name: 'an empty body on PATCH', request: raw('PATCH', '/users/1', '', 'application/json'), status: 400, code: 'malformed-json' },
  { name: 'an empty body on PUT', request: raw('PUT', '/users/1', '', 'application/json'), status: 400, code: 'malformed-json' },
  { name: 'a top-level __proto__', request: raw('POST', '/users', '{"__proto__":{"polluted":true},"name":"x"}', 'application/json'), status: 400, code: 'malformed-json' },
  { name: 'a __proto__ after valid members', request: raw('PATCH', '/users/1', '{"name":"x","__proto__":{"polluted":true}}', 'application/json'), status: 400, code: 'malformed-json' },
  { name: 'a nested __proto__ in a json field', request: raw('POST', '/posts', '{"title":"x","userId":1,"tags":{"__proto__":{"polluted":true}}}', 'application/json'), status: 400, code: 'malformed-json' },
  { name: 'constructor.prototype', request: raw('POST', '/users', '{"name":"x","constructor":{"prototype":{"polluted":true}}}', 'application/json'), status: 400, code: 'malformed-json' },
  { name: 'constructor.prototype in a json field on PATCH', request: raw('PATCH', '/posts/1', '{"tags":{"constructor":{"prototype":{"polluted":true}}}}', 'application/merge-patch+json'), status: 400, code: 'malformed-json' },
  // 422 bodies that are not objects
  { name: 'an array body', request: body('POST', '/users', [{ name: 'x' }]), status: 422, code: 'validation-failed', errors: notAnObject },
  { name: 'an empty array body', request: body('PUT', '/users/1', []), status: 422, code: 'validation-failed', errors: notAnObject },
  { name: 'a string body', request: body('POST', '/users', 'Alice'), status: 422, code: 'validation-failed', errors: notAnObject },
  { name: 'a number body', request: body('PATCH', '/users/1', 42), status: 422, code: 'validation-failed', errors: notAnObject },
  { name: 'a null body', request: body('POST', '/users', null), status: 422, code: 'validation-failed', errors: notAnObject },
  { name: 'a null merge patch', request: body('PATCH', '/users/1', null), status: 422, code: 'validation-failed', errors: notAnObject },
  { name: 'a boolean body', request: body('PUT', '/users/1', true), status: 422, code: 'validation-failed', errors: notAnObject },
  // 422 unknown and read-only fields
  { name: 'an unknown field', request: body('POST', '/users', { name: 'x', nickname: 'y' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/nickname', detail: 'is not a field of users' }] },
  { name: 'an unknown field on PATCH', request: body('PATCH', '/users/1', { nickname: 'y' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/nickname', detail: 'is not a field of users' }] },
  { name: 'an unknown field on PUT', request: body('PUT', '/users/1', { name: 'x', posts: [] }), status: 422, code: 'validation-failed', errors: [{ pointer: '/posts', detail: 'is not a field of users' }] },
  { name: 'a "constructor" member', request: body('POST', '/users', { name: 'x', constructor: 1 }), status: 422, code: 'validation-failed', errors: [{ pointer: '/constructor', detail: 'is not a field of users' }] },
  { name: 'a field name needing pointer escapes', request: body('POST', '/users', { name: 'x', 'a/b~c': 1 }), status: 422, code: 'validation-failed', errors: [{ pointer: '/a~1b~0c', detail: 'is not a field of users' }] },
  { name: 'id on POST', request: body('POST', '/users', { id: 77, name: 'x' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/id', detail: 'is assigned by the server; leave it out' }] },
  // 422 missing required fields
  { name: 'required fields missing on POST', request: body('POST', '/products', {}), status: 422, code: 'validation-failed', errors: [{ pointer: '/name', detail: 'is required' }, { pointer: '/sku', detail: 'is required' }, { pointer: '/price', detail: 'is required' }] },
  { name: 'required fields missing on an order', request: body('POST', '/orders', { note: 'x' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/userId', detail: 'is required' }, { pointer: '/productId', detail: 'is required' }, { pointer: '/quantity', detail: 'is required' }] },
  { name: 'a required field given as null', request: body('POST', '/users', { name: null }), status: 422, code: 'validation-failed', errors: [{ pointer: '/name', detail: 'is required and cannot be null' }] },
  { name: 'a required field given as null on PUT', request: body('PUT', '/users/1', { name: null }), status: 422, code: 'validation-failed', errors: [{ pointer: '/name', detail: 'is required and cannot be null' }] },
  {
    name: 'required fields of every type given as null on PATCH',
    request: body('PATCH', '/orders/1', { userId: null, quantity: null, note: null }),
    status: 422,
    code: 'validation-failed',
    errors: [
      { pointer: '/userId', detail: 'is required and cannot be null' },
      { pointer: '/quantity', detail: 'is required and cannot be null' },
    ],
  },
  // 422 types, formats, lengths, enums, patterns, bounds: every bad field listed
  {
    name: 'bad user fields',
    request: body('POST', '/users', { name: '', email: 'not-an-email', bio: 'x'.repeat(2001) }),
    status: 422,
    code: 'validation-failed',
    errors: [
      { pointer: '/name', detail: 'must be at least 1 characters long' },
      { pointer: '/email', detail: 'must be a valid email address' },
      { pointer: '/bio', detail: 'must be at most 2000 characters long' },
    ],
  },
  { name: 'a number as a name', request: body('POST', '/users', { name: 42 }), status: 422, code: 'validation-failed', errors: [{ pointer: '/name', detail: 'must be a string' }] },
  { name: 'a too long name', request: body('PATCH', '/users/1', { name: 'n'.repeat(201) }), status: 422, code: 'validation-failed', errors: [{ pointer: '/name', detail: 'must be at most 200 characters long' }] },
  // U+0000 is refused in every stored text, on every database (PostgreSQL cannot store it)
  { name: 'a NUL character in a string field', request: body('POST', '/users', { name: 'a\u0000b' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/name', detail: 'must not contain the NUL character (U+0000)' }] },
  { name: 'a NUL character deep in a json field', request: body('PATCH', '/posts/1', { tags: ['ok', { 'k/ey': ['x\u0000'] }] }), status: 422, code: 'validation-failed', errors: [{ pointer: '/tags/1/k~1ey/0', detail: 'must not contain the NUL character (U+0000)' }] },
  { name: 'a NUL character in a json object key', request: body('PATCH', '/posts/1', { tags: { 'a\u0000': 1 } }), status: 422, code: 'validation-failed', errors: [{ pointer: '/tags/a\u0000', detail: 'must not contain the NUL character (U+0000)' }] },
  { name: 'a number as an optional string', request: body('PATCH', '/users/1', { bio: 7 }), status: 422, code: 'validation-failed', errors: [{ pointer: '/bio', detail: 'must be a string or null' }] },
  {
    name: 'bad product fields',
    request: body('POST', '/products', { name: 'x', sku: 'lower-case', price: -1, currency: 'JPY', stock: -5, active: 'yes' }),
    status: 422,
    code: 'validation-failed',
    errors: [
      { pointer: '/sku', detail: 'must match the pattern ^[A-Z0-9-]{3,32}$' },
      { pointer: '/price', detail: 'must be at least 0' },
      { pointer: '/currency', detail: 'must be one of: "EUR", "USD", "GBP", null' },
      { pointer: '/stock', detail: 'must be at least 0' },
      { pointer: '/active', detail: 'must be a boolean or null' },
    ],
  },
  { name: 'a string as a price', request: body('PUT', '/products/1', { name: 'x', sku: 'SKU-1', price: '12' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/price', detail: 'must be a number' }] },
  { name: 'a price of 1e400 (Infinity)', request: raw('POST', '/products', '{"name":"x","sku":"INF-1","price":1e400}', 'application/json'), status: 422, code: 'validation-failed', errors: [{ pointer: '/price', detail: 'must be a number' }] },
  { name: 'a fractional stock', request: body('PATCH', '/products/1', { stock: 1.5 }), status: 422, code: 'validation-failed', errors: [{ pointer: '/stock', detail: 'must be an integer or null' }] },
  { name: 'an unsafe integer stock', request: body('PATCH', '/products/1', { stock: 2 ** 60 }), status: 422, code: 'validation-failed', errors: [{ pointer: '/stock', detail: `must be at most ${String(Number.MAX_SAFE_INTEGER)}` }] },
  {
    name: 'bad order fields',
    request: body('POST', '/orders', { userId: '1', productId: 1.5, quantity: 0, status: 'lost', placedOn: '2024-13-01', note: 'x'.repeat(1001) }),
    status: 422,
    code: 'validation-failed',
    errors: [
      { pointer: '/userId', detail: 'must be an integer' },
      { pointer: '/productId', detail: 'must be an integer' },
      { pointer: '/quantity', detail: 'must be at least 1' },
      { pointer: '/status', detail: 'must be one of: "pending", "paid", "shipped", "cancelled", null' },
      { pointer: '/placedOn', detail: 'must be a valid date (YYYY-MM-DD)' },
      { pointer: '/note', detail: 'must be at most 1000 characters long' },
    ],
  },
  { name: 'a quantity over the maximum', request: body('PATCH', '/orders/1', { quantity: 10001 }), status: 422, code: 'validation-failed', errors: [{ pointer: '/quantity', detail: 'must be at most 10000' }] },
  { name: 'a date that does not exist', request: body('PATCH', '/orders/1', { placedOn: '2023-02-29' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/placedOn', detail: 'must be a valid date (YYYY-MM-DD)' }] },
  {
    name: 'bad post fields',
    request: body('POST', '/posts', { title: 't'.repeat(301), userId: 1, published: 'true', publishedAt: 'yesterday' }),
    status: 422,
    code: 'validation-failed',
    errors: [
      { pointer: '/title', detail: 'must be at most 300 characters long' },
      { pointer: '/published', detail: 'must be a boolean or null' },
      { pointer: '/publishedAt', detail: DATE_TIME },
    ],
  },
  { name: 'a date-time without a time zone', request: body('PATCH', '/posts/1', { publishedAt: '2024-05-01T12:00:00' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/publishedAt', detail: DATE_TIME }] },
  { name: 'a date-time on February 30', request: body('PATCH', '/posts/1', { publishedAt: '2024-02-30T12:00:00Z' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/publishedAt', detail: DATE_TIME }] },
  // A leap second is valid RFC 3339 but no JavaScript Date can hold it: it must be refused, not crash.
  { name: 'a leap-second date-time', request: body('POST', '/posts', { title: 'leap', userId: 1, publishedAt: '2016-12-31T23:59:60Z' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/publishedAt', detail: LEAP_SECOND }] },
  { name: 'a leap-second date-time on PATCH', request: body('PATCH', '/posts/1', { publishedAt: '2016-12-31T23:59:60Z' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/publishedAt', detail: LEAP_SECOND }] },
  { name: 'a leap-second date-time on PUT', request: body('PUT', '/posts/1', { title: 'leap', userId: 1, publishedAt: '2016-12-31T23:59:60+00:00' }), status: 422, code: 'validation-failed', errors: [{ pointer: '/publishedAt', detail: LEAP_SECOND }] },
  // 409 unique conflicts
  { name: 'a taken email on POST', request: body('POST', '/users', { name: 'Copy', email: 'alice@example.com' }), status: 409, code: 'unique-conflict', errors: [{ pointer: '/email', detail: 'is already used by another user' }] },
  { name: 'a taken email on PATCH', request: body('PATCH', '/users/2', { email: 'alice@example.com' }), status: 409, code: 'unique-conflict', errors: [{ pointer: '/email', detail: 'is already used by another user' }] },
  { name: 'a taken email on PUT', request: body('PUT', '/users/2', { name: 'Bob', email: 'alice@example.com' }), status: 409, code: 'unique-conflict', errors: [{ pointer: '/email', detail: 'is already used by another user' }] },
  { name: 'a taken sku on POST', request: body('POST', '/products', { name: 'Copy', sku: 'SKU-1', price: 1 }), status: 409, code: 'unique-conflict', errors: [{ pointer: '/sku', detail: 'is already used by another product' }] },
  // 422 references to missing rows
  { name: 'a post of a missing user', request: body('POST', '/posts', { title: 'x', userId: 99999 }), status: 422, code: 'validation-failed', errors: [{ pointer: '/userId', detail: 'refers to user 99999, which does not exist' }] },
  { name: 'a post moved to a missing user', request: body('PATCH', '/posts/1', { userId: 99999 }), status: 422, code: 'validation-failed', errors: [{ pointer: '/userId', detail: 'refers to user 99999, which does not exist' }] },
  {
    name: 'an order of a missing user and product',
    request: body('POST', '/orders', { userId: 99998, productId: 99999, quantity: 1 }),
    status: 422,
    code: 'validation-failed',
    errors: [
      { pointer: '/userId', detail: 'refers to user 99998, which does not exist' },
      { pointer: '/productId', detail: 'refers to product 99999, which does not exist' },
    ],
  },
  // 404
  { name: 'an unknown id', request: { method: 'GET', url: '/users/999999' }, status: 404, code: 'not-found' },
  { name: 'a non-numeric id', request: { method: 'GET', url: '/users/abc' }, status: 404, code: 'not-found' },
  { name: 'id 0', request: { method: 'GET', url: '/users/0' }, status: 404, code: 'not-found' },
  { name: 'a negative id', request: { method: 'GET', url: '/users/-1' }, status: 404, code: 'not-found' },
  { name: 'a fractional id', request: { method: 'GET', url: '/users/1.5' }, status: 404, code: 'not-found' },
  { name: 'an id with a leading zero', request: { method: 'GET', url: '/users/01' }, status: 404, code: 'not-found' },
  { name: 'a huge id', request: { method: 'GET', url: '/users/99999999999999999999' }, status: 404, code: 'not-found' },
  { name: 'DELETE of an unknown id', request: { method: 'DELETE', url: '/users/999999' }, status: 404, code: 'not-found' },
  { name: 'DELETE of a non-numeric id', request: { method: 'DELETE', url: '/users/abc' }, status: 404, code: 'not-found' },
  { name: 'PATCH of a non-numeric id', request: body('PATCH', '/users/abc', { name: 'x' }), status: 404, code: 'not-found' },
  { name: 'an unknown route', request: { method: 'GET', url: '/nothing' }, status: 404, code: 'not-found' },
  { name: 'POST to an unknown route', request: body('POST', '/nothing', { name: 'x' }), status: 404, code: 'not-found' },
  { name: 'an unknown version', request: { method: 'GET', url: '/v2/users' }, status: 404, code: 'not-found' },
  { name: 'an unknown relation', request: { method: 'GET', url: '/users/1/friends' }, status: 404, code: 'not-found' },
  { name: 'a path below an item', request: { method: 'GET', url: '/users/1/posts/1' }, status: 404, code: 'not-found' },
  // 400 for a URL that cannot be decoded: still problem+json
  { name: 'a malformed percent-escape in the path', request: { method: 'GET', url: '/users/%' }, status: 400, code: 'bad-request' },
  { name: 'a truncated UTF-8 escape in the path', request: { method: 'GET', url: '/users/%E0%A4%A' }, status: 400, code: 'bad-request' },
  { name: 'a malformed percent-escape in a write path', request: body('PATCH', '/users/%ZZ', { name: 'x' }), status: 400, code: 'bad-request' },
  { name: 'a path segment over the router\'s parameter length', request: { method: 'GET', url: `/users/${'1'.repeat(201)}` }, status: 414, code: 'uri-too-long' },
  { name: 'a long id in a relation path', request: { method: 'GET', url: `/users/${'a'.repeat(300)}/posts` }, status: 414, code: 'uri-too-long' },
  // 405 with Allow
  { name: 'DELETE on a collection', request: { method: 'DELETE', url: '/users' }, status: 405, code: 'method-not-allowed', headers: { allow: 'GET, POST, HEAD, OPTIONS' } },
  { name: 'PUT on a collection', request: body('PUT', '/users', { name: 'x' }), status: 405, code: 'method-not-allowed', headers: { allow: 'GET, POST, HEAD, OPTIONS' } },
  { name: 'PATCH on a versioned collection', request: body('PATCH', '/v1/users', { name: 'x' }), status: 405, code: 'method-not-allowed', headers: { allow: 'GET, POST, HEAD, OPTIONS' } },
  { name: 'POST on an item', request: body('POST', '/users/1', { name: 'x' }), status: 405, code: 'method-not-allowed', headers: { allow: 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS' } },
  { name: 'POST on a relation', request: body('POST', '/users/1/posts', { title: 'x' }), status: 405, code: 'method-not-allowed', headers: { allow: 'GET, HEAD, OPTIONS' } },
  { name: 'DELETE on a belongsTo relation', request: { method: 'DELETE', url: '/posts/1/user' }, status: 405, code: 'method-not-allowed', headers: { allow: 'GET, HEAD, OPTIONS' } },
  { name: 'TRACE on a collection (a standard method the API does not support)', request: { method: 'TRACE', url: '/users' }, status: 405, code: 'method-not-allowed', headers: { allow: 'GET, POST, HEAD, OPTIONS' } },
  { name: 'POST on /healthz', request: { method: 'POST', url: '/healthz' }, status: 405, code: 'method-not-allowed', headers: { allow: 'GET, HEAD, OPTIONS' } },
  // 406
  { name: 'Accept: text/html on a list', request: { method: 'GET', url: '/users', headers: { accept: 'text/html' } }, status: 406, code: 'not-acceptable' },
  { name: 'Accept: text/html on an item', request: { method: 'GET', url: '/users/1', headers: { accept: 'text/html' } }, status: 406, code: 'not-acceptable' },
  { name: 'Accept: application/xml on POST', request: body('POST', '/users', { name: 'Refused' }, { accept: 'application/xml' }), status: 406, code: 'not-acceptable' },
  { name: 'Accept: application/json;q=0', request: { method: 'GET', url: '/users', headers: { accept: 'application/json;q=0, text/html' } }, status: 406, code: 'not-acceptable' },
  // 413
  { name: 'a body over 1 MiB on POST', request: body('POST', '/users', { name: 'Big', bio: 'b'.repeat(1024 * 1024 + 10) }), status: 413, code: 'payload-too-large' },
  { name: 'a body over 1 MiB on PATCH', request: body('PATCH', '/posts/1', { tags: { big: 'b'.repeat(1024 * 1024 + 10) } }), status: 413, code: 'payload-too-large' },
  // 415
  { name: 'text/plain on POST', request: raw('POST', '/users', '{"name":"x"}', 'text/plain'), status: 415, code: 'unsupported-media-type' },
  { name: 'no Content-Type on POST with a body', request: raw('POST', '/users', '{"name":"x"}', undefined), status: 415, code: 'unsupported-media-type' },
  { name: 'no Content-Type and no body on POST', request: raw('POST', '/users', undefined, undefined), status: 415, code: 'unsupported-media-type' },
  { name: 'form data on POST', request: raw('POST', '/users', 'name=x', 'application/x-www-form-urlencoded'), status: 415, code: 'unsupported-media-type' },
  { name: 'merge-patch+json on POST', request: raw('POST', '/users', '{"name":"x"}', 'application/merge-patch+json'), status: 415, code: 'unsupported-media-type' },
  { name: 'merge-patch+json on PUT', request: raw('PUT', '/users/1', '{"name":"x"}', 'application/merge-patch+json'), status: 415, code: 'unsupported-media-type' },
  { name: 'json-patch+json on PATCH', request: raw('PATCH', '/users/1', '[{"op":"replace","path":"/name","value":"x"}]', 'application/json-patch+json'), status: 415, code: 'unsupported-media-type' },
  { name: 'text/plain on PUT', request: raw('PUT', '/users/1', '{"name":"x"}', 'text/plain'), status: 415, code: 'unsupported-media-type' },
  { name: 'no Content-Type on PUT', request: raw('PUT', '/users/1', undefined, undefined), status: 415, code: 'unsupported-media-type' },
  { name: 'text/plain on PATCH', request: raw('PATCH', '/users/1', '{"name":"x"}', 'text/plain'), status: 415, code: 'unsupported-media-type' },
  { name: 'no Content-Type and no body on PATCH', request: raw('PATCH', '/users/1', undefined, undefined), status: 415, code: 'unsupported-media-type' },
];

describe('errors: every one is problem+json with its code, and a rejected write changes nothing', () => {
  for (const c of errorCases) {
    it(`${c.name} -> ${String(c.status)} ${c.code}`, async () => {
      const before = await snapshot();
      const response = await t.app.inject(c.request);
      const problem = expectProblem(response, c.status, c.code);
      expect(problem.instance).toBe(typeof c.request.url === 'string' ? c.request.url.split('?')[0] : undefined);
      if (c.errors !== undefined) expectErrors(problem, c.errors);
      for (const [name, value] of Object.entries(c.headers ?? {})) expect(response.headers[name]).toBe(value);
      expect(await snapshot()).toBe(before);
    });
  }

  it('no request above polluted Object.prototype', () => {
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a deeply nested JSON body is refused with a 4xx problem, never a 5xx, and changes nothing', async () => {
    // 100,000 levels of nesting fit in 200 KB, well under the body limit.
    const depth = 100_000;
    const bodies: [InjectOptions['method'], string, string][] = [
      ['POST', '/posts', `{"title":"deep","userId":1,"tags":${'['.repeat(depth)}${']'.repeat(depth)}}`],
      ['POST', '/posts', `{"title":"deep","userId":1,"tags":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`],
      ['PATCH', '/posts/1', `{"tags":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`],
      ['PUT', '/posts/1', `{"title":"deep","userId":1,"tags":${'['.repeat(depth)}${']'.repeat(depth)}}`],
    ];
    for (const [method, url, payload] of bodies) {
      for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'application/json', 'idempotency-key': `deep-${String(method)}` }]) {
        const before = await snapshot();
        const response = await t.app.inject({ method, url, headers, payload });
        expect([400, 422], `${String(method)} ${url}: ${String(response.statusCode)} ${response.body}`).toContain(response.statusCode);
        expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
        expect(await snapshot()).toBe(before);
      }
    }
  });

  it('the detail of a validation problem counts the bad fields', async () => {
    expect(json<Row>(await send('POST', '/users', { name: 1 })).detail).toBe('One field is invalid.');
    expect(json<Row>(await send('POST', '/products', {})).detail).toBe('3 fields are invalid.');
  });

  it('a problem carries the request id it was given', async () => {
    const response = await send('GET', '/users/999999', undefined, { 'x-request-id': 'trace-me-123' });
    expect(response.headers['x-request-id']).toBe('trace-me-123');
    expect(json(response)).toMatchObject({ requestId: 'trace-me-123', instance: '/users/999999' });
  });

  it('Accept values that allow JSON are served', async () => {
    for (const accept of ['application/*', 'application/problem+json', 'text/html, application/json;q=0.5', '*/*', 'application/json, */*;q=0.1']) {
      expect((await send('GET', '/users/1', undefined, { accept })).statusCode, accept).toBe(200);
    }
  });

  it('a body limit can be configured', async () => {
    const small = await startTestApp({ bodyLimitBytes: 64 });
    try {
      const ok = await small.app.inject({ method: 'POST', url: '/users', headers: { 'content-type': 'application/json' }, payload: '{"name":"short"}' });
      expect(ok.statusCode).toBe(201);
      const big = await small.app.inject({ method: 'POST', url: '/users', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(100) }) });
      expect(big.statusCode).toBe(413);
      expect(json(big)).toMatchObject({ code: 'payload-too-large' });
    } finally {
      await small.close();
    }
  });
});
