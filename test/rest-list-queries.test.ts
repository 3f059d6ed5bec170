import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * List queries through HTTP on the example schema: sorting, every filter operator per field type,
 * limits, keyset and offset paging, counting, projection, embedding, relation routes, and the 400s
 * that name the parameter at fault.
 */

type Row = Record<string, unknown>;

async function get(t: TestApp, url: string): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url });
}

async function create(t: TestApp, resource: string, body: Row): Promise<Row> {
  const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: body });
  if (response.statusCode !== 201) throw new Error(`seeding ${resource} failed: ${String(response.statusCode)} ${response.body}`);
  return json<Row>(response);
}

/** A 200 whose body is a JSON array of rows. */
function rowsOf(response: LightMyRequestResponse): Row[] {
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = json(response);
  expect(Array.isArray(body)).toBe(true);
  return body as Row[];
}

/** A 400 invalid-query problem; returns its errors. */
function invalidQuery(response: LightMyRequestResponse): { parameter?: string; detail: string }[] {
  expect(response.statusCode, response.body).toBe(400);
  expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = json<Row>(response);
  expect(body).toMatchObject({ type: 'urn:restgraph:problem:invalid-query', title: 'Invalid query parameters', status: 400, code: 'invalid-query' });
  expect(typeof body.detail).toBe('string');
  expect(Array.isArray(body.errors)).toBe(true);
  return body.errors as { parameter?: string; detail: string }[];
}

function labels(rows: Row[], key: string): unknown[] {
  return rows.map((r) => r[key]);
}

/** The path and query of the Link rel="next" target, or undefined when there is no next page. */
function nextLink(response: LightMyRequestResponse): string | undefined {
  const link = response.headers.link;
  if (link === undefined) return undefined;
  expect(typeof link).toBe('string');
  const match = /^<(https?:\/\/[^>]+)>; rel="next"$/.exec(String(link));
  expect(match, `Link header ${String(link)}`).not.toBeNull();
  const url = new URL(match?.[1] ?? '');
  expect(url.searchParams.get('after')).toMatch(/^[A-Za-z0-9_-]+$/);
  return `${url.pathname}${url.search}`;
}

/** Follows Link rel="next" from `url` to the end; returns every row and the size of each page. */
async function followPages(t: TestApp, url: string): Promise<{ rows: Row[]; pageSizes: number[] }> {
  const rows: Row[] = [];
  const pageSizes: number[] = [];
  let next: string | undefined = url;
  while (next !== undefined) {
    if (pageSizes.length > 2000) throw new Error('paging does not end');
    const response = await get(t, next);
    const page = rowsOf(response);
    rows.push(...page);
    pageSizes.push(page.length);
    next = nextLink(response);
  }
  return { rows, pageSizes };
}

/**
 * The documented order: each key ascending or descending, nulls first ascending and last
 * descending, ties broken by id ascending (unless id is a key).
 */
function sortRows(rows: Row[], sort: string): Row[] {
  const keys = sort.split(',').map((k) => (k.startsWith('-') ? { field: k.slice(1), dir: -1 } : { field: k, dir: 1 }));
  if (!keys.some((k) => k.field === 'id')) keys.push({ field: 'id', dir: 1 });
  const rank = (v: unknown): string | number => (typeof v === 'boolean' ? Number(v) : (v as string | number));
  return [...rows].sort((a, b) => {
    for (const { field, dir } of keys) {
      const x = a[field];
      const y = b[field];
      if (x === y) continue;
      if (x === null) return -dir; // null is the smallest value: first ascending, last descending
      if (y === null) return dir;
      return rank(x) < rank(y) ? -dir : dir;
    }
    return 0;
  });
}

function cursorOf(response: LightMyRequestResponse): string {
  const next = nextLink(response);
  const cursor = next === undefined ? null : new URL(next, 'http://x').searchParams.get('after');
  if (cursor === null) throw new Error('expected a next page');
  return cursor;
}

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (cursor: string): { s: unknown; v: unknown[] } => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { s: unknown; v: unknown[] };

describe('list queries on a small fixed data set', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    const users: Row[] = [
      { name: 'Alice', email: 'alice@example.com', bio: 'Loves cats' },
      { name: 'alice', email: 'alice@example.org' },
      { name: 'Bob', bio: 'cat person' },
      { name: 'Carol', email: 'carol@example.org', bio: 'Dogs' },
      { name: 'Ålex' },
      { name: 'Dave', email: 'dave@example.net', bio: 'CATS only' },
    ];
    for (const [i, user] of users.entries()) expect((await create(t, 'users', user)).id).toBe(i + 1);
    const posts: Row[] = [
      { title: 'Hello world', userId: 1, published: true, publishedAt: '2024-01-01T10:00:00Z', tags: { kind: 'greeting' } },
      { title: 'Draft notes', userId: 1, published: false },
      { title: 'Second post', userId: 3, published: true, publishedAt: '2024-03-15T08:30:00Z', tags: ['a', 'b'] },
      { title: 'hello again', userId: 4, published: true, publishedAt: '2024-03-15T08:30:00.000Z' },
      { title: 'Unpublished', userId: 4, published: null, tags: {} },
    ];
    for (const [i, post] of posts.entries()) expect((await create(t, 'posts', post)).id).toBe(i + 1);
    const products: Row[] = [
      { name: 'Widget', sku: 'WID-1', price: 9.99, currency: 'EUR', stock: 10, active: true },
      { name: 'Gadget', sku: 'GAD-2', price: 25, currency: 'USD', stock: 0, active: false },
      { name: 'Doohickey', sku: 'DOO-3', price: 100.5, currency: 'GBP', stock: 3 },
      { name: 'Freebie', sku: 'FRE-4', price: 0, currency: null, stock: null, active: null },
    ];
    for (const [i, product] of products.entries()) expect((await create(t, 'products', product)).id).toBe(i + 1);
    const orders: Row[] = [
      { userId: 1, productId: 1, quantity: 1, placedOn: '2024-01-05', note: 'first' },
      { userId: 1, productId: 2, quantity: 5, status: 'paid', placedOn: '2024-02-10', note: 'second' },
      { userId: 3, productId: 1, quantity: 10, status: 'shipped', note: 'third' },
      { userId: 4, productId: 3, quantity: 2, status: 'cancelled', placedOn: '2024-02-10', note: 'fourth' },
    ];
    for (const [i, order] of orders.entries()) expect((await create(t, 'orders', order)).id).toBe(i + 1);
  });
  afterAll(async () => t.close());

  describe('filters: every operator per field type, results in id order', () => {
    // [resource, query string, the label field, expected labels]
    const cases: [string, string, string, unknown[]][] = [
      // string (required): users.name
      ['users', 'name=Alice', 'name', ['Alice']],
      ['users', 'name[eq]=alice', 'name', ['alice']],
      ['users', 'name[ne]=Alice', 'name', ['alice', 'Bob', 'Carol', 'Ålex', 'Dave']],
      ['users', 'name[lt]=Bob', 'name', ['Alice']],
      ['users', 'name[lte]=Bob', 'name', ['Alice', 'Bob']],
      ['users', 'name[gt]=Dave', 'name', ['alice', 'Ålex']],
      ['users', 'name[gte]=Dave', 'name', ['alice', 'Ålex', 'Dave']],
      ['users', 'name[in]=Alice,Carol,Nobody', 'name', ['Alice', 'Carol']],
      ['users', 'name[in]=Bob', 'name', ['Bob']],
      ['users', 'name[contains]=li', 'name', ['Alice', 'alice']],
      ['users', 'name[contains]=LI', 'name', []],
      ['users', 'name[startsWith]=A', 'name', ['Alice']],
      ['users', 'name[startsWith]=a', 'name', ['alice']],
      ['users', `name[startsWith]=${encodeURIComponent('Å')}`, 'name', ['Ålex']],
      ['users', `name=${encodeURIComponent('Ålex')}`, 'name', ['Ålex']],
      ['users', 'name[isNull]=false', 'name', ['Alice', 'alice', 'Bob', 'Carol', 'Ålex', 'Dave']],
      ['users', 'name[isNull]=true', 'name', []],
      // string (optional): users.bio, users.email; ne includes nulls
      ['users', 'bio[contains]=cat', 'name', ['Alice', 'Bob']],
      ['users', 'bio[contains]=CAT', 'name', ['Dave']],
      ['users', 'bio[startsWith]=cat', 'name', ['Bob']],
      ['users', 'bio[ne]=Dogs', 'name', ['Alice', 'alice', 'Bob', 'Ålex', 'Dave']],
      ['users', 'bio[isNull]=true', 'name', ['alice', 'Ålex']],
      ['users', 'bio[isNull]=false', 'name', ['Alice', 'Bob', 'Carol', 'Dave']],
      ['users', 'email[isNull]=true', 'name', ['Bob', 'Ålex']],
      ['users', 'email[startsWith]=alice%40', 'name', ['Alice', 'alice']],
      ['users', 'email[contains]=.org', 'name', ['alice', 'Carol']],
      ['users', 'email=carol%40example.org', 'name', ['Carol']],
      // system fields: id
      ['users', 'id=3', 'name', ['Bob']],
      ['users', 'id[in]=1,3,99', 'name', ['Alice', 'Bob']],
      ['users', 'id[gt]=4', 'name', ['Ålex', 'Dave']],
      ['users', 'id[lte]=2', 'name', ['Alice', 'alice']],
      ['users', 'id[ne]=1', 'name', ['alice', 'Bob', 'Carol', 'Ålex', 'Dave']],
      ['users', 'createdAt[gte]=2000-01-01', 'name', ['Alice', 'alice', 'Bob', 'Carol', 'Ålex', 'Dave']],
      ['users', 'createdAt[lt]=2000-01-01', 'name', []],
      // several filters combine with AND
      ['users', 'name[startsWith]=A&bio[isNull]=false', 'name', ['Alice']],
      ['users', 'name[contains]=a&email[isNull]=false&id[gt]=1', 'name', ['alice', 'Carol', 'Dave']],
      // boolean: eq, ne (with nulls), isNull
      ['posts', 'published=true', 'title', ['Hello world', 'Second post', 'hello again']],
      ['posts', 'published[eq]=false', 'title', ['Draft notes']],
      ['posts', 'published[ne]=true', 'title', ['Draft notes', 'Unpublished']],
      ['posts', 'published[ne]=false', 'title', ['Hello world', 'Second post', 'hello again', 'Unpublished']],
      ['posts', 'published[isNull]=true', 'title', ['Unpublished']],
      // datetime: compared as instants, whatever the notation
      ['posts', 'publishedAt=2024-03-15T08:30:00Z', 'title', ['Second post', 'hello again']],
      ['posts', 'publishedAt=2024-03-15T09:30:00%2B01:00', 'title', ['Second post', 'hello again']],
      ['posts', 'publishedAt=2024-03-15T09:30:00%2B0100', 'title', ['Second post', 'hello again']],
      ['posts', 'publishedAt=2024-03-15%2008:30:00Z', 'title', ['Second post', 'hello again']],
      ['posts', 'publishedAt=2024-03-15T08:30Z', 'title', ['Second post', 'hello again']],
      ['posts', 'publishedAt[lt]=2024-03-15', 'title', ['Hello world']],
      ['posts', 'publishedAt[lte]=2024-03-15T08:30:00Z', 'title', ['Hello world', 'Second post', 'hello again']],
      ['posts', 'publishedAt[gt]=2024-01-01T10:00:00Z', 'title', ['Second post', 'hello again']],
      ['posts', 'publishedAt[gte]=2024-01-01T10:00:00.000Z', 'title', ['Hello world', 'Second post', 'hello again']],
      ['posts', 'publishedAt[ne]=2024-01-01T10:00:00Z', 'title', ['Draft notes', 'Second post', 'hello again', 'Unpublished']],
      ['posts', 'publishedAt[in]=2024-01-01T10:00:00Z,2024-03-15T08:30:00.000Z', 'title', ['Hello world', 'Second post', 'hello again']],
      ['posts', 'publishedAt[isNull]=true', 'title', ['Draft notes', 'Unpublished']],
      // json: isNull only
      ['posts', 'tags[isNull]=true', 'title', ['Draft notes', 'hello again']],
      ['posts', 'tags[isNull]=false', 'title', ['Hello world', 'Second post', 'Unpublished']],
      // string and integer on posts
      ['posts', 'title[contains]=ello', 'title', ['Hello world', 'hello again']],
      ['posts', 'title[startsWith]=hello', 'title', ['hello again']],
      ['posts', 'title[startsWith]=H', 'title', ['Hello world']],
      ['posts', 'userId=1', 'title', ['Hello world', 'Draft notes']],
      ['posts', 'userId[in]=3,4', 'title', ['Second post', 'hello again', 'Unpublished']],
      ['posts', 'body[isNull]=true', 'title', ['Hello world', 'Draft notes', 'Second post', 'hello again', 'Unpublished']],
      ['posts', 'userId=4&published[ne]=true', 'title', ['Unpublished']],
      // number
      ['products', 'price=100.5', 'sku', ['DOO-3']],
      ['products', 'price[gt]=9.99', 'sku', ['GAD-2', 'DOO-3']],
      ['products', 'price[gte]=9.99', 'sku', ['WID-1', 'GAD-2', 'DOO-3']],
      ['products', 'price[lt]=25', 'sku', ['WID-1', 'FRE-4']],
      ['products', 'price[lte]=25', 'sku', ['WID-1', 'GAD-2', 'FRE-4']],
      ['products', 'price[ne]=0', 'sku', ['WID-1', 'GAD-2', 'DOO-3']],
      ['products', 'price[in]=0,25', 'sku', ['GAD-2', 'FRE-4']],
      ['products', 'price[gt]=-1.5e1', 'sku', ['WID-1', 'GAD-2', 'DOO-3', 'FRE-4']],
      // integer (nullable): ne includes nulls
      ['products', 'stock=0', 'sku', ['GAD-2']],
      ['products', 'stock[ne]=0', 'sku', ['WID-1', 'DOO-3', 'FRE-4']],
      ['products', 'stock[gt]=2', 'sku', ['WID-1', 'DOO-3']],
      ['products', 'stock[gte]=3', 'sku', ['WID-1', 'DOO-3']],
      ['products', 'stock[lt]=3', 'sku', ['GAD-2']],
      ['products', 'stock[lte]=3', 'sku', ['GAD-2', 'DOO-3']],
      ['products', 'stock[in]=3,10', 'sku', ['WID-1', 'DOO-3']],
      ['products', 'stock[isNull]=true', 'sku', ['FRE-4']],
      // enum: eq, ne (with nulls), in, isNull
      ['products', 'currency=USD', 'sku', ['GAD-2']],
      ['products', 'currency[eq]=EUR', 'sku', ['WID-1']],
      ['products', 'currency[ne]=EUR', 'sku', ['GAD-2', 'DOO-3', 'FRE-4']],
      ['products', 'currency[in]=EUR,GBP', 'sku', ['WID-1', 'DOO-3']],
      ['products', 'currency[isNull]=true', 'sku', ['FRE-4']],
      ['products', 'active=true', 'sku', ['WID-1', 'DOO-3']],
      ['products', 'active[ne]=true', 'sku', ['GAD-2', 'FRE-4']],
      ['products', 'active[isNull]=false', 'sku', ['WID-1', 'GAD-2', 'DOO-3']],
      ['products', 'sku[startsWith]=D', 'sku', ['DOO-3']],
      ['products', 'name[contains]=adg', 'sku', ['GAD-2']],
      ['products', 'name[contains]=dg', 'sku', ['WID-1', 'GAD-2']],
      // orders: integer, enum, date
      ['orders', 'quantity[gte]=5', 'note', ['second', 'third']],
      ['orders', 'quantity[lt]=5', 'note', ['first', 'fourth']],
      ['orders', 'quantity[in]=1,2', 'note', ['first', 'fourth']],
      ['orders', 'status=paid', 'note', ['second']],
      ['orders', 'status=pending', 'note', ['first']],
      ['orders', 'status[ne]=pending', 'note', ['second', 'third', 'fourth']],
      ['orders', 'status[in]=shipped,cancelled', 'note', ['third', 'fourth']],
      ['orders', 'status[isNull]=true', 'note', []],
      ['orders', 'placedOn=2024-02-10', 'note', ['second', 'fourth']],
      ['orders', 'placedOn[lt]=2024-02-01', 'note', ['first']],
      ['orders', 'placedOn[lte]=2024-02-10', 'note', ['first', 'second', 'fourth']],
      ['orders', 'placedOn[gt]=2024-01-05', 'note', ['second', 'fourth']],
      ['orders', 'placedOn[gte]=2024-02-10', 'note', ['second', 'fourth']],
      ['orders', 'placedOn[ne]=2024-02-10', 'note', ['first', 'third']],
      ['orders', 'placedOn[in]=2024-01-05,2024-02-10', 'note', ['first', 'second', 'fourth']],
      ['orders', 'placedOn[isNull]=true', 'note', ['third']],
      ['orders', 'userId=1&productId=2', 'note', ['second']],
      ['orders', 'note[isNull]=false', 'note', ['first', 'second', 'third', 'fourth']],
    ];
    for (const [resource, query, label, expected] of cases) {
      it(`GET /${resource}?${query} -> ${JSON.stringify(expected)}`, async () => {
        expect(labels(rowsOf(await get(t, `/${resource}?${query}`)), label)).toEqual(expected);
      });
    }

    it('the versioned path filters the same way', async () => {
      expect(labels(rowsOf(await get(t, '/v1/users?name[contains]=li')), 'name')).toEqual(['Alice', 'alice']);
    });
  });

  describe('invalid filters, parameters and values answer 400 naming the parameter', () => {
    // [url, the parameter named in errors[]]
    const cases: [string, string][] = [
      // operators that do not apply to the field's type
      ['/products?currency[lt]=EUR', 'currency[lt]'],
      ['/products?currency[contains]=E', 'currency[contains]'],
      ['/products?currency[startsWith]=E', 'currency[startsWith]'],
      ['/products?active[gt]=true', 'active[gt]'],
      ['/products?active[in]=true,false', 'active[in]'],
      ['/products?active[contains]=t', 'active[contains]'],
      ['/posts?tags=x', 'tags'],
      ['/posts?tags[eq]=x', 'tags[eq]'],
      ['/posts?tags[ne]=x', 'tags[ne]'],
      ['/posts?tags[contains]=x', 'tags[contains]'],
      ['/products?stock[contains]=1', 'stock[contains]'],
      ['/products?price[startsWith]=1', 'price[startsWith]'],
      ['/orders?placedOn[contains]=2024', 'placedOn[contains]'],
      ['/posts?publishedAt[startsWith]=2024', 'publishedAt[startsWith]'],
      // unknown operators
      ['/users?name[like]=x', 'name[like]'],
      ['/users?name[IN]=x', 'name[IN]'],
      ['/users?name[]=x', 'name[]'],
      ['/users?name[eq][eq]=x', 'name[eq][eq]'],
      // values that do not fit the field
      ['/products?stock=abc', 'stock'],
      ['/products?stock=1.5', 'stock'],
      ['/products?stock[in]=1,x', 'stock[in]'],
      ['/products?stock[in]=', 'stock[in]'],
      ['/products?price=abc', 'price'],
      ['/products?price=', 'price'],
      ['/products?price=Infinity', 'price'],
      ['/products?active=yes', 'active'],
      ['/products?active=1', 'active'],
      ['/products?currency=JPY', 'currency'],
      ['/products?currency[in]=EUR,JPY', 'currency[in]'],
      ['/posts?publishedAt=yesterday', 'publishedAt'],
      ['/posts?publishedAt[gt]=2024-13-45', 'publishedAt[gt]'],
      // a calendar date that does not exist must not roll over into the next month
      ['/posts?publishedAt=2024-02-30', 'publishedAt'],
      ['/posts?publishedAt[lt]=2023-04-31T10:00:00Z', 'publishedAt[lt]'],
      ['/orders?placedOn=2024-02-30', 'placedOn'],
      ['/orders?placedOn[in]=2024-01-05,2023-02-29', 'placedOn[in]'],
      ['/orders?placedOn=2024-1-1', 'placedOn'],
      ['/orders?placedOn=01/02/2024', 'placedOn'],
      ['/users?name[isNull]=maybe', 'name[isNull]'],
      ['/users?bio[isNull]=', 'bio[isNull]'],
      ['/posts?userId=99999999999999999', 'userId'],
      ['/users?id=abc', 'id'],
      [`/users?id[in]=${Array.from({ length: 101 }, (_, i) => i + 1).join(',')}`, 'id[in]'],
      // unknown fields and parameters (names are case-sensitive)
      ['/users?nickname=x', 'nickname'],
      ['/users?nickname[eq]=x', 'nickname[eq]'],
      ['/users?Name=Alice', 'Name'],
      ['/users?foo=1', 'foo'],
      ['/users?page=2', 'page'],
      ['/users?per_page=2', 'per_page'],
      ['/users?filter[name]=Alice', 'filter[name]'],
      ['/users?posts=1', 'posts'],
      ['/users?userId=1', 'userId'],
      ['/users?__proto__=1', '__proto__'],
      ['/users?constructor=1', 'constructor'],
      ['/users?toString=1', 'toString'],
      // the reserved parameters' own rules
      ['/users?count=yes', 'count'],
      ['/users?count=', 'count'],
      ['/users?offset=-1', 'offset'],
      ['/users?offset=abc', 'offset'],
      ['/users?fields=nickname', 'fields'],
      ['/users?fields=', 'fields'],
      ['/users?fields=id,,name', 'fields'],
      ['/users?include=friends', 'include'],
      ['/users?include=', 'include'],
      ['/posts?include=posts', 'include'],
      // a repeated parameter
      ['/users?name=a&name=b', 'name'],
      ['/users?sort=name&sort=-name', 'sort'],
      ['/users?limit=1&limit=2', 'limit'],
      ['/users?name[ne]=a&name[ne]=b', 'name[ne]'],
    ];
    for (const [url, parameter] of cases) {
      it(`GET ${url.length > 80 ? `${url.slice(0, 77)}...` : url} -> 400 naming ${parameter}`, async () => {
        const errors = invalidQuery(await get(t, url));
        expect(errors).toEqual([{ parameter, detail: expect.any(String) as string }]);
      });
    }

    it('reports every problem of one request at once', async () => {
      const errors = invalidQuery(await get(t, '/users?foo=1&limit=0&sort=nickname&name[like]=x&fields=bar'));
      expect(errors.map((e) => e.parameter).sort()).toEqual(['fields', 'foo', 'limit', 'name[like]', 'sort']);
      for (const e of errors) expect(e.detail.length).toBeGreaterThan(0);
    });

    it('says which operators a field takes', async () => {
      const [error] = invalidQuery(await get(t, '/products?currency[lt]=EUR'));
      expect(error?.detail).toContain('eq, ne, in, isNull');
      const [jsonError] = invalidQuery(await get(t, '/posts?tags[eq]=x'));
      expect(jsonError?.detail).toContain('isNull');
    });

    it('the problem names the path as instance and carries the request id', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/users?foo=1', headers: { 'x-request-id': 'list-400-check' } });
      expect(json(response)).toMatchObject({ instance: '/users', requestId: 'list-400-check' });
    });
  });

  describe('sort', () => {
    it('sorts ascending by one field', async () => {
      expect(labels(rowsOf(await get(t, '/users?sort=name')), 'name')).toEqual(['Alice', 'Bob', 'Carol', 'Dave', 'alice', 'Ålex']);
    });

    it('sorts descending with a leading minus', async () => {
      expect(labels(rowsOf(await get(t, '/users?sort=-name')), 'name')).toEqual(['Ålex', 'alice', 'Dave', 'Carol', 'Bob', 'Alice']);
    });

    it('accepts an explicit plus sign, percent-encoded', async () => {
      expect(labels(rowsOf(await get(t, '/users?sort=%2Bname')), 'name')).toEqual(['Alice', 'Bob', 'Carol', 'Dave', 'alice', 'Ålex']);
    });

    it('puts nulls first ascending and last descending, ties broken by id', async () => {
      expect(labels(rowsOf(await get(t, '/users?sort=bio')), 'name')).toEqual(['alice', 'Ålex', 'Dave', 'Carol', 'Alice', 'Bob']);
      expect(labels(rowsOf(await get(t, '/users?sort=-bio')), 'name')).toEqual(['Bob', 'Alice', 'Carol', 'Dave', 'alice', 'Ålex']);
    });

    it('sorts by several keys', async () => {
      // nulls first; ties (two nulls, two equal instants) are broken by title descending.
      expect(labels(rowsOf(await get(t, '/posts?sort=publishedAt,-title')), 'title')).toEqual(['Unpublished', 'Draft notes', 'Hello world', 'hello again', 'Second post']);
      expect(labels(rowsOf(await get(t, '/posts?sort=-published,publishedAt')), 'title')).toEqual(['Hello world', 'Second post', 'hello again', 'Draft notes', 'Unpublished']);
      expect(labels(rowsOf(await get(t, '/orders?sort=-placedOn,-quantity')), 'note')).toEqual(['second', 'fourth', 'first', 'third']);
    });

    it('sorts by id descending, and by numbers and enums', async () => {
      expect(labels(rowsOf(await get(t, '/users?sort=-id')), 'id')).toEqual([6, 5, 4, 3, 2, 1]);
      expect(labels(rowsOf(await get(t, '/products?sort=-price')), 'sku')).toEqual(['DOO-3', 'GAD-2', 'WID-1', 'FRE-4']);
      expect(labels(rowsOf(await get(t, '/products?sort=currency')), 'sku')).toEqual(['FRE-4', 'WID-1', 'DOO-3', 'GAD-2']);
    });

    it('combines with filters', async () => {
      expect(labels(rowsOf(await get(t, '/users?sort=-name&bio[isNull]=false')), 'name')).toEqual(['Dave', 'Carol', 'Bob', 'Alice']);
    });

    const bad: [string, string][] = [
      ['/users?sort=nickname', 'nickname'],
      ['/users?sort=-nickname', 'nickname'],
      ['/posts?sort=tags', 'json'],
      ['/posts?sort=-tags', 'json'],
      ['/users?sort=', 'empty'],
      ['/users?sort=name,', 'empty'],
      ['/users?sort=name,-name', 'twice'],
      ['/users?sort=posts', 'posts'],
    ];
    for (const [url, mention] of bad) {
      it(`GET ${url} -> 400 on sort`, async () => {
        const errors = invalidQuery(await get(t, url));
        expect(errors).toHaveLength(1);
        expect(errors[0]?.parameter).toBe('sort');
        expect(errors[0]?.detail).toContain(mention);
      });
    }
  });

  describe('fields and include', () => {
    it('fields=id,name returns only those members, in that order', async () => {
      const rows = rowsOf(await get(t, '/users?fields=id,name&sort=id'));
      expect(rows).toEqual([1, 2, 3, 4, 5, 6].map((id, i) => ({ id, name: ['Alice', 'alice', 'Bob', 'Carol', 'Ålex', 'Dave'][i] })));
      for (const row of rows) expect(Object.keys(row)).toEqual(['id', 'name']);
      const reversed = rowsOf(await get(t, '/users?fields=name,id&id=1'));
      expect(reversed).toEqual([{ name: 'Alice', id: 1 }]);
      expect(Object.keys(reversed[0] ?? {})).toEqual(['name', 'id']);
    });

    it('fields works with sort, filters and a field that is not sorted on', async () => {
      expect(rowsOf(await get(t, '/users?fields=email&sort=-name&bio[isNull]=false'))).toEqual([
        { email: 'dave@example.net' },
        { email: 'carol@example.org' },
        { email: null },
        { email: 'alice@example.com' },
      ]);
    });

    it('a duplicate name in fields is returned once', async () => {
      expect(rowsOf(await get(t, '/users?fields=name,name&id=1'))).toEqual([{ name: 'Alice' }]);
    });

    it('include=posts embeds each user\'s posts (hasMany), [] when there are none', async () => {
      const rows = rowsOf(await get(t, '/users?include=posts'));
      expect(rows).toHaveLength(6);
      const titles = Object.fromEntries(rows.map((u) => [u.name as string, labels(u.posts as Row[], 'title')]));
      expect(titles).toEqual({
        Alice: ['Hello world', 'Draft notes'],
        alice: [],
        Bob: ['Second post'],
        Carol: ['hello again', 'Unpublished'],
        Ålex: [],
        Dave: [],
      });
      const embedded = (rows[0]?.posts as Row[])[0];
      expect(embedded).toEqual(json(await get(t, '/posts/1')));
    });

    it('include=posts,orders embeds both; with fields only those members and the relations come back', async () => {
      const rows = rowsOf(await get(t, '/users?include=posts,orders&fields=name&id=1'));
      expect(rows).toHaveLength(1);
      expect(Object.keys(rows[0] ?? {})).toEqual(['name', 'posts', 'orders']);
      expect(labels(rows[0]?.orders as Row[], 'note')).toEqual(['first', 'second']);
      expect(labels(rows[0]?.posts as Row[], 'id')).toEqual([1, 2]);
    });

    it('include=user embeds the belongsTo parent of each post, even when fields leaves out the key', async () => {
      const rows = rowsOf(await get(t, '/posts?include=user'));
      for (const post of rows) expect((post.user as Row).id).toBe(post.userId);
      expect((rows[0]?.user as Row).name).toBe('Alice');
      const projected = rowsOf(await get(t, '/posts?include=user&fields=title&sort=-id&limit=1'));
      expect(projected).toHaveLength(1);
      expect(Object.keys(projected[0] ?? {})).toEqual(['title', 'user']);
      expect(projected[0]?.title).toBe('Unpublished');
      expect((projected[0]?.user as Row).name).toBe('Carol');
    });

    it('orders embed both their user and their product', async () => {
      const rows = rowsOf(await get(t, '/orders?include=user,product&id=2'));
      expect(rows).toHaveLength(1);
      expect((rows[0]?.user as Row).name).toBe('Alice');
      expect((rows[0]?.product as Row).sku).toBe('GAD-2');
    });

    it('GET one takes include and fields', async () => {
      const user = json<Row>(await get(t, '/users/4?include=posts'));
      expect(user.name).toBe('Carol');
      expect(labels(user.posts as Row[], 'title')).toEqual(['hello again', 'Unpublished']);
      const post = json<Row>(await get(t, '/posts/3?include=user'));
      expect((post.user as Row).name).toBe('Bob');
      const projected = await get(t, '/users/4?fields=id,name&include=posts');
      expect(projected.statusCode).toBe(200);
      const body = json<Row>(projected);
      expect(Object.keys(body)).toEqual(['id', 'name', 'posts']);
      expect(body.id).toBe(4);
      expect(json(await get(t, '/users/1?fields=email'))).toEqual({ email: 'alice@example.com' });
    });

    const itemBad: [string, string][] = [
      ['/users/1?sort=name', 'sort'],
      ['/users/1?limit=1', 'limit'],
      ['/users/1?name=Alice', 'name'],
      ['/users/1?count=true', 'count'],
      ['/users/1?include=friends', 'include'],
      ['/users/1?fields=nickname', 'fields'],
      ['/users/1?fields=a&fields=b', 'fields'],
      ['/posts/1/user?sort=name', 'sort'],
    ];
    for (const [url, parameter] of itemBad) {
      it(`GET ${url} -> 400 naming ${parameter}`, async () => {
        expect(invalidQuery(await get(t, url))).toEqual([{ parameter, detail: expect.any(String) as string }]);
      });
    }
    it('include embeds at most maxEmbedded related rows per parent, the first by id', async () => {
      const small = await startTestApp({ maxEmbedded: 2 });
      try {
        await create(small, 'users', { name: 'Prolific' });
        await create(small, 'users', { name: 'Quiet' });
        for (const title of ['p1', 'p2', 'p3']) await create(small, 'posts', { title, userId: 1 });
        await create(small, 'posts', { title: 'q1', userId: 2 });
        const users = rowsOf(await get(small, '/users?include=posts'));
        expect(users.map((u) => labels(u.posts as Row[], 'title'))).toEqual([['p1', 'p2'], ['q1']]);
        expect(labels(json<Row>(await get(small, '/users/1?include=posts')).posts as Row[], 'title')).toEqual(['p1', 'p2']);
        // The relation route is a list with its own paging, not an embed.
        expect(labels(rowsOf(await get(small, '/users/1/posts')), 'title')).toEqual(['p1', 'p2', 'p3']);
      } finally {
        await small.close();
      }
    });
  });

  describe('count', () => {
    it('count=true adds X-Total-Count: every matching row, whatever the page size', async () => {
      const response = await get(t, '/users?count=true&limit=2');
      expect(rowsOf(response)).toHaveLength(2);
      expect(response.headers['x-total-count']).toBe('6');
      const filtered = await get(t, '/users?count=true&bio[isNull]=false&limit=1');
      expect(filtered.headers['x-total-count']).toBe('4');
      const none = await get(t, '/users?count=true&name=Nobody');
      expect(rowsOf(none)).toEqual([]);
      expect(none.headers['x-total-count']).toBe('0');
    });

    it('X-Total-Count is absent without count=true', async () => {
      expect((await get(t, '/users')).headers['x-total-count']).toBeUndefined();
      expect((await get(t, '/users?count=false')).headers['x-total-count']).toBeUndefined();
    });
  });

  describe('relation routes', () => {
    it('GET /users/:id/posts lists that user\'s posts, taking list parameters', async () => {
      expect(labels(rowsOf(await get(t, '/users/1/posts')), 'title')).toEqual(['Hello world', 'Draft notes']);
      expect(labels(rowsOf(await get(t, '/users/1/posts?sort=title')), 'title')).toEqual(['Draft notes', 'Hello world']);
      expect(labels(rowsOf(await get(t, '/users/1/posts?published=true')), 'title')).toEqual(['Hello world']);
      expect(rowsOf(await get(t, '/users/1/posts?fields=id')).map((r) => Object.keys(r))).toEqual([['id'], ['id']]);
      expect(labels(rowsOf(await get(t, '/v1/users/4/posts?sort=-id')), 'title')).toEqual(['Unpublished', 'hello again']);
      const counted = await get(t, '/users/4/posts?count=true&limit=1');
      expect(rowsOf(counted)).toHaveLength(1);
      expect(counted.headers['x-total-count']).toBe('2');
      expect(nextLink(counted)).toMatch(/^\/users\/4\/posts\?/);
      const embedded = rowsOf(await get(t, '/users/4/posts?include=user'));
      for (const post of embedded) expect((post.user as Row).name).toBe('Carol');
    });

    it('pages through a relation with Link rel="next"', async () => {
      const { rows, pageSizes } = await followPages(t, '/users/4/posts?limit=1&sort=-title');
      expect(labels(rows, 'title')).toEqual(['hello again', 'Unpublished']);
      expect(pageSizes).toEqual([1, 1]);
    });

    it('a user with no posts has an empty list', async () => {
      expect(rowsOf(await get(t, '/users/2/posts'))).toEqual([]);
    });

    it('other hasMany relations: /users/:id/orders and /products/:id/orders', async () => {
      expect(labels(rowsOf(await get(t, '/users/1/orders')), 'note')).toEqual(['first', 'second']);
      expect(labels(rowsOf(await get(t, '/products/1/orders?sort=-quantity')), 'note')).toEqual(['third', 'first']);
    });

    it('relation list parameters are checked like any list', async () => {
      expect(invalidQuery(await get(t, '/users/1/posts?nickname=x'))).toEqual([{ parameter: 'nickname', detail: expect.any(String) as string }]);
      expect(invalidQuery(await get(t, '/users/1/posts?limit=0'))).toEqual([{ parameter: 'limit', detail: expect.any(String) as string }]);
    });

    for (const url of ['/users/999/posts', '/users/abc/posts', '/users/0/posts', '/posts/999/user', '/products/999/orders']) {
      it(`GET ${url} -> 404 when the parent does not exist`, async () => {
        const response = await get(t, url);
        expect(response.statusCode).toBe(404);
        expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(json(response)).toMatchObject({ type: 'urn:restgraph:problem:not-found', status: 404, code: 'not-found' });
      });
    }

    it('GET /posts/:id/user is the single parent object, with the same ETag as GET /users/:id', async () => {
      const response = await get(t, '/posts/3/user');
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const direct = await get(t, '/users/3');
      expect(json(response)).toEqual(json(direct));
      expect(response.headers.etag).toMatch(/^"[\x21\x23-\x7e]+"$/);
      expect(response.headers.etag).toBe(direct.headers.etag);
      const cached = await t.app.inject({ method: 'GET', url: '/posts/3/user', headers: { 'if-none-match': String(response.headers.etag) } });
      expect(cached.statusCode).toBe(304);
      expect(cached.body).toBe('');
    });

    it('belongsTo routes take include and fields', async () => {
      const user = json<Row>(await get(t, '/posts/1/user?include=posts&fields=name'));
      expect(Object.keys(user)).toEqual(['name', 'posts']);
      expect(labels(user.posts as Row[], 'title')).toEqual(['Hello world', 'Draft notes']);
      expect(json(await get(t, '/orders/4/product?fields=sku'))).toEqual({ sku: 'DOO-3' });
    });
  });
});

describe('contains and startsWith match literally and case-sensitively', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    for (const name of ['100% real', '100 percent', 'snake_case', 'snakeXcase', 'Straße', 'STRASSE', '😀 smile', 'a.b*c', "O'Brien"]) await create(t, 'users', { name });
  });
  afterAll(async () => t.close());

  const cases: [string, string[]][] = [
    ['name[contains]=%25', ['100% real']],
    ['name[startsWith]=100%25', ['100% real']],
    ['name[contains]=_', ['snake_case']],
    ['name[contains]=e_c', ['snake_case']],
    ['name[startsWith]=snake_', ['snake_case']],
    ['name[contains]=*', ['a.b*c']],
    ['name[contains]=.', ['a.b*c']],
    ['name[contains]=%27', ["O'Brien"]],
    ['name[contains]=%C3%9F', ['Straße']],
    ['name[contains]=ss', []],
    ['name[contains]=SS', ['STRASSE']],
    ['name[startsWith]=str', []],
    ['name[startsWith]=%F0%9F%98%80', ['😀 smile']],
    ['name[startsWith]=%F0%9F%98%80%20s', ['😀 smile']],
    ['name[contains]=smile', ['😀 smile']],
    ['name[contains]=', ['100% real', '100 percent', 'snake_case', 'snakeXcase', 'Straße', 'STRASSE', '😀 smile', 'a.b*c', "O'Brien"]],
  ];
  for (const [query, expected] of cases) {
    it(`GET /users?${query} -> ${JSON.stringify(expected)}`, async () => {
      expect(labels(rowsOf(await get(t, `/users?${query}`)), 'name')).toEqual(expected);
    });
  }
});

describe('limits and paging over many rows', () => {
  let t: TestApp;
  const USERS = 1001;
  const POSTS = 250;
  let allUsers: Row[];
  let allPosts: Row[];

  beforeAll(async () => {
    t = await startTestApp();
    // Bios repeat (ties) and are often null, so the sort key has ties and nulls on page boundaries.
    const bios = ['delta', 'alpha', null, 'charlie', 'bravo', null, 'alpha'];
    for (let start = 0; start < USERS; start += 100) {
      const batch = Array.from({ length: Math.min(100, USERS - start) }, (_, j) => {
        const i = start + j;
        const bio = bios[i % bios.length] ?? null;
        return create(t, 'users', { name: `user-${String(i % 37).padStart(2, '0')}`, ...(bio === null ? {} : { bio }) });
      });
      await Promise.all(batch);
    }
    const dates = ['2024-05-01T12:00:00Z', '2023-12-31T23:59:59Z', null, '2024-05-01T12:00:00Z', '2025-01-15T08:00:00Z'];
    for (let i = 0; i < POSTS; i++) {
      const publishedAt = dates[i % dates.length] ?? null;
      await create(t, 'posts', {
        title: `post-${String(i % 11).padStart(2, '0')}`,
        userId: (i % 5) + 1,
        published: i % 3 === 0 ? true : i % 3 === 1 ? false : null,
        ...(publishedAt === null ? {} : { publishedAt }),
      });
    }
    allUsers = rowsOf(await get(t, '/users?limit=1000')).concat(rowsOf(await get(t, '/users?limit=1000&offset=1000')));
    allPosts = rowsOf(await get(t, '/posts?limit=1000'));
    expect(allUsers).toHaveLength(USERS);
    expect(allPosts).toHaveLength(POSTS);
  });
  afterAll(async () => t.close());

  describe('limit', () => {
    it('defaults to 100 rows, with a next link', async () => {
      const response = await get(t, '/users');
      expect(labels(rowsOf(response), 'id')).toEqual(labels(allUsers.slice(0, 100), 'id'));
      expect(nextLink(response)).toBeDefined();
    });

    it('takes up to 1000', async () => {
      const response = await get(t, '/users?limit=1000');
      expect(rowsOf(response)).toHaveLength(1000);
      expect(nextLink(response)).toBeDefined();
      expect(rowsOf(await get(t, '/users?limit=1'))).toHaveLength(1);
    });

    for (const value of ['1001', '0', '-1', 'abc', '1.5', '', '99999999999999999999']) {
      it(`limit=${value} -> 400 naming limit`, async () => {
        expect(invalidQuery(await get(t, `/users?limit=${value}`))).toEqual([{ parameter: 'limit', detail: expect.any(String) as string }]);
      });
    }

    it('configured limits apply: listLimits.defaultLimit and maxLimit', async () => {
      const small = await startTestApp({ listLimits: { defaultLimit: 2, maxLimit: 3 } });
      try {
        for (const name of ['a', 'b', 'c', 'd']) await create(small, 'users', { name });
        expect(rowsOf(await get(small, '/users'))).toHaveLength(2);
        expect(rowsOf(await get(small, '/users?limit=3'))).toHaveLength(3);
        expect(invalidQuery(await get(small, '/users?limit=4'))[0]?.parameter).toBe('limit');
      } finally {
        await small.close();
      }
    });
  });

  describe('keyset paging: following Link rel="next" visits every row once, in order', () => {
    // [url, which rows it lists (before sorting)]
    const users = (): Row[] => allUsers;
    const posts = (): Row[] => allPosts;
    const walks: [string, () => Row[]][] = [
      ['/users?limit=37', users],
      ['/users?sort=bio&limit=37', users],
      ['/users?sort=-bio&limit=50', users],
      ['/users?sort=bio,-name&limit=23', users],
      ['/users?sort=-name,bio&limit=100', users],
      ['/users?sort=bio&fields=id&limit=41', users],
      ['/users?sort=-id&limit=250', users],
      ['/posts?sort=-publishedAt&limit=17', posts],
      ['/posts?sort=publishedAt&limit=17', posts],
      ['/posts?sort=-publishedAt&limit=25', posts],
      ['/posts?sort=published,-publishedAt,title&limit=13', posts],
      ['/posts?sort=-published,publishedAt&limit=9', posts],
      ['/posts?sort=title,-userId&limit=30', posts],
      ['/posts?sort=publishedAt&fields=title&limit=20', posts],
      ['/posts?sort=-publishedAt&published[ne]=false&limit=7', () => allPosts.filter((p) => p.published !== false)],
      ['/posts?sort=publishedAt&publishedAt[isNull]=false&userId[in]=1,2,3&limit=11', () => allPosts.filter((p) => p.publishedAt !== null && [1, 2, 3].includes(p.userId as number))],
      ['/users/2/posts?sort=-publishedAt&limit=8', () => allPosts.filter((p) => p.userId === 2)],
    ];
    for (const [url, rowsListed] of walks) {
      it(`GET ${url}`, async () => {
        const query = new URL(url, 'http://x');
        const limit = Number(query.searchParams.get('limit'));
        const fields = query.searchParams.get('fields');
        const expected = sortRows(rowsListed(), query.searchParams.get('sort') ?? 'id');
        expect(expected.length).toBeGreaterThan(limit);

        const { rows, pageSizes } = await followPages(t, url);
        const key = fields ?? 'id';
        expect(labels(rows, key)).toEqual(labels(expected, key));
        if (fields !== null) for (const row of rows) expect(Object.keys(row)).toEqual([fields]);
        else expect(new Set(labels(rows, 'id')).size).toBe(expected.length);
        // every page but the last is full, and only the last one has no next link
        expect(pageSizes.length).toBe(Math.ceil(expected.length / limit));
        expect(pageSizes.slice(0, -1).every((n) => n === limit)).toBe(true);
        expect(pageSizes.at(-1)).toBe(expected.length - limit * (pageSizes.length - 1));
      });
    }

    it('the data has ties and nulls in the sort keys (sanity check)', () => {
      expect(allUsers.filter((u) => u.bio === null).length).toBeGreaterThan(200);
      expect(new Set(allUsers.map((u) => u.bio)).size).toBe(5);
      expect(allPosts.filter((p) => p.publishedAt === null)).toHaveLength(POSTS / 5);
    });

    it('the Link URL is absolute and keeps every other parameter', async () => {
      const response = await get(t, '/posts?sort=-publishedAt&published[ne]=false&limit=7&count=true&fields=id,title');
      const link = String(response.headers.link);
      expect(link).toMatch(/^<http:\/\/localhost(:\d+)?\/posts\?[^>]+>; rel="next"$/);
      const next = new URL(/^<([^>]+)>/.exec(link)?.[1] ?? '');
      expect(next.searchParams.get('sort')).toBe('-publishedAt');
      expect(next.searchParams.get('published[ne]')).toBe('false');
      expect(next.searchParams.get('limit')).toBe('7');
      expect(next.searchParams.get('count')).toBe('true');
      expect(next.searchParams.get('fields')).toBe('id,title');
      expect(next.searchParams.getAll('after')).toHaveLength(1);
    });

    it('the last page has no Link header', async () => {
      expect((await get(t, '/posts?limit=1000')).headers.link).toBeUndefined();
      expect((await get(t, `/posts?limit=${POSTS}`)).headers.link).toBeUndefined();
      expect((await get(t, `/posts?limit=${POSTS - 1}`)).headers.link).toBeDefined();
    });

    it('a cursor stays valid after the row it was taken from is deleted', async () => {
      const own = await startTestApp();
      try {
        for (let i = 0; i < 9; i++) await create(own, 'users', { name: `n${i}`, ...(i % 3 === 0 ? {} : { bio: `b${i % 2}` }) });
        const expected = sortRows(rowsOf(await get(own, '/users')), 'bio');
        const first = await get(own, '/users?sort=bio&limit=4');
        expect(labels(rowsOf(first), 'id')).toEqual(labels(expected.slice(0, 4), 'id'));
        const lastId = expected[3]?.id;
        expect((await own.app.inject({ method: 'DELETE', url: `/users/${String(lastId)}` })).statusCode).toBe(204);
        const { rows } = await followPages(own, nextLink(first) ?? '');
        expect(labels(rows, 'id')).toEqual(labels(expected.slice(4), 'id'));
      } finally {
        await own.close();
      }
    });
  });

  describe('cursor validation', () => {
    let cursor: string;
    beforeAll(async () => {
      cursor = cursorOf(await get(t, '/users?sort=bio&limit=10'));
    });

    it('the cursor works for the sort it came from', async () => {
      expect(rowsOf(await get(t, `/users?sort=bio&limit=10&after=${cursor}`))).toHaveLength(10);
    });

    const tampered: [string, (c: string) => string][] = [
      ['not base64url characters', () => 'abc$%21def'],
      ['base64url of something that is not JSON', () => Buffer.from('hello world').toString('base64url')],
      ['truncated', (c) => c.slice(0, -4)],
      ['JSON but not an object', () => encode([1, 2])],
      ['JSON null', () => encode(null)],
      ['another sort signature', (c) => encode({ ...decode(c), s: 'name,id' })],
      ['too few values', (c) => encode({ ...decode(c), v: decode(c).v.slice(1) })],
      ['too many values', (c) => encode({ ...decode(c), v: [...decode(c).v, 1] })],
      ['an object among the values', (c) => encode({ ...decode(c), v: [{}, 5] })],
      ['a boolean among the values', (c) => encode({ ...decode(c), v: [true, 5] })],
      ['a null id', (c) => encode({ ...decode(c), v: [decode(c).v[0], null] })],
      ['a string for the integer id', (c) => encode({ ...decode(c), v: [decode(c).v[0], '5'] })],
      ['a fraction for the integer id', (c) => encode({ ...decode(c), v: [decode(c).v[0], 5.5] })],
      ['an id beyond safe integers', (c) => encode({ ...decode(c), v: [decode(c).v[0], 2 ** 63] })],
      ['a number for the text field', (c) => encode({ ...decode(c), v: [7, 5] })],
      ['a NUL character in the text value', (c) => encode({ ...decode(c), v: ['a\u0000b', 5] })],
      ['no values at all', (c) => encode({ s: decode(c).s })],
      ['longer than 4 KiB', () => 'A'.repeat(5000)],
    ];
    for (const [what, tamper] of tampered) {
      it(`a cursor that is ${what} -> 400 naming after`, async () => {
        const errors = invalidQuery(await get(t, `/users?sort=bio&limit=10&after=${encodeURIComponent(tamper(cursor))}`));
        expect(errors).toEqual([{ parameter: 'after', detail: expect.any(String) as string }]);
      });
    }

    for (const other of ['sort=-bio&', 'sort=name&', 'sort=bio,name&', 'sort=bio,-id&', '']) {
      it(`a cursor from sort=bio used with ${other || 'the default sort'} -> 400`, async () => {
        const errors = invalidQuery(await get(t, `/users?${other}limit=10&after=${cursor}`));
        expect(errors).toEqual([{ parameter: 'after', detail: expect.any(String) as string }]);
      });
    }

    it('a NUL character in a filter value -> 400 naming the parameter, on every database', async () => {
      for (const query of ['name=a%00b', 'name[contains]=%00', 'email[in]=a@x.io,%00', 'name[startsWith]=%00x']) {
        const errors = invalidQuery(await get(t, `/users?${query}`));
        expect(errors).toEqual([{ parameter: decodeURIComponent(query.split('=')[0] ?? ''), detail: expect.stringContaining('must not contain the NUL character (U+0000)') as string }]);
      }
    });

    it('values are typed as their fields: a boolean sort takes true/false, a datetime sort its ISO text', async () => {
      const bySort = async (sort: string, v: unknown[]): Promise<number> =>
        (await get(t, `/posts?sort=${sort}&limit=5&after=${encode({ s: `${sort},id`, v })}`)).statusCode;
      expect(await bySort('published', [true, 1])).toBe(200);
      expect(await bySort('published', [1, 1])).toBe(400);
      expect(await bySort('published', ['true', 1])).toBe(400);
      expect(await bySort('createdAt', ['2026-01-01T00:00:00.000Z', 1])).toBe(200);
      expect(await bySort('createdAt', [null, 1])).toBe(400);
      expect(await bySort('publishedAt', [null, 1])).toBe(200);
    });

    it('after together with offset -> 400', async () => {
      const errors = invalidQuery(await get(t, `/users?sort=bio&limit=10&offset=10&after=${cursor}`));
      expect(errors.map((e) => e.parameter)).toContain('after');
    });

    it('an empty after -> 400', async () => {
      expect(invalidQuery(await get(t, '/users?after='))).toEqual([{ parameter: 'after', detail: expect.any(String) as string }]);
    });
  });

  describe('offset paging', () => {
    it('offset skips rows in sort order', async () => {
      const expected = sortRows(allUsers, '-bio');
      expect(labels(rowsOf(await get(t, '/users?sort=-bio&limit=10&offset=0')), 'id')).toEqual(labels(expected.slice(0, 10), 'id'));
      expect(labels(rowsOf(await get(t, '/users?sort=-bio&limit=10&offset=95')), 'id')).toEqual(labels(expected.slice(95, 105), 'id'));
      expect(labels(rowsOf(await get(t, '/users?sort=-bio&offset=995&limit=100')), 'id')).toEqual(labels(expected.slice(995), 'id'));
      expect(rowsOf(await get(t, '/users?offset=5000'))).toEqual([]);
    });

    it('the next link of an offset page continues with a cursor, without the offset', async () => {
      const expected = sortRows(allPosts, 'publishedAt');
      const response = await get(t, '/posts?sort=publishedAt&limit=10&offset=20');
      const next = nextLink(response) ?? '';
      expect(new URL(next, 'http://x').searchParams.has('offset')).toBe(false);
      expect(labels(rowsOf(await get(t, next)), 'id')).toEqual(labels(expected.slice(30, 40), 'id'));
    });

    it('count=true counts every row whatever the offset', async () => {
      const response = await get(t, '/users?count=true&offset=1000&limit=10');
      expect(rowsOf(response)).toHaveLength(1);
      expect(response.headers['x-total-count']).toBe(String(USERS));
      expect(response.headers.link).toBeUndefined();
    });
  });
});
