import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * Property-based tests (fast-check) through HTTP: random query strings never produce anything but
 * a 200 with a JSON array or a 400 problem; random write bodies never produce a 5xx, and a rejected
 * write never changes the stored data.
 */

type Row = Record<string, unknown>;

const RESERVED = ['sort', 'limit', 'offset', 'after', 'count', 'fields', 'include'];
const OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'startsWith', 'isNull'];
const SYSTEM_FIELDS = { id: 'integer', createdAt: 'datetime', updatedAt: 'datetime' };
/** Field types of the example schema, for well-typed filter values. */
const FIELD_TYPES: Record<string, Record<string, string>> = {
  users: { ...SYSTEM_FIELDS, name: 'string', email: 'string', bio: 'string' },
  posts: { ...SYSTEM_FIELDS, title: 'string', body: 'string', userId: 'integer', published: 'boolean', publishedAt: 'datetime', tags: 'json' },
  products: { ...SYSTEM_FIELDS, name: 'string', sku: 'string', price: 'number', currency: 'currency', stock: 'integer', active: 'boolean' },
  orders: { ...SYSTEM_FIELDS, userId: 'integer', productId: 'integer', quantity: 'integer', status: 'status', placedOn: 'date', note: 'string' },
};
const RELATIONS: Record<string, string[]> = { users: ['posts', 'orders'], posts: ['user'], products: ['orders'], orders: ['user', 'product'] };

let t: TestApp;

async function listAll(resource: string): Promise<string> {
  const response = await t.app.inject({ method: 'GET', url: `/${resource}?limit=1000` });
  expect(response.statusCode).toBe(200);
  return response.body;
}

function describeResponse(response: LightMyRequestResponse): string {
  return `${String(response.statusCode)} ${response.body.slice(0, 300)}`;
}

/** A problem+json body of this status. */
function assertProblem(response: LightMyRequestResponse, status: number): void {
  expect(response.statusCode, describeResponse(response)).toBe(status);
  expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = json<Row>(response);
  expect(body.status).toBe(status);
  expect(String(body.type)).toMatch(/^urn:restgraph:problem:[a-z-]+$/);
  expect(typeof body.detail).toBe('string');
}

/** Percent-encodes, also for strings a URL cannot carry otherwise; never throws. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '?'));
  }
}

// ---- arbitraries: query strings -----------------------------------------------------------

const anyText = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

const isoDate = fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true });

/** Anything at all as a query value, including huge ones and cursor-like ones. */
const anyQueryValue = fc.oneof(
  anyText,
  fc.constantFrom('', 'true', 'false', 'null', '0', '-1', '1001', '1000', '1', 'abc', '[]', '{}', '%', ',', ',,', 'id', '-id', 'name,-id', 'posts', 'user'),
  fc.integer().map(String),
  fc.double().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }).map(String), anyText), { maxLength: 6 }).map((parts) => parts.join(',')),
  fc.nat({ max: 20_000 }).map((n) => 'x'.repeat(n)),
  fc.json({ maxDepth: 2 }).map((text) => Buffer.from(text).toString('base64url')),
  fc
    .record({ s: fc.constantFrom('id', 'name,id', '-name,id', 'title,id', '-price,id'), v: fc.array(fc.oneof(anyText, fc.integer(), fc.double({ noNaN: true }), fc.constant(null)), { maxLength: 3 }) })
    .map((cursor) => Buffer.from(JSON.stringify(cursor)).toString('base64url')),
);

/** A value of the field's type, as text: what a well-meaning client sends. */
function typedValue(type: string): fc.Arbitrary<string> {
  switch (type) {
    case 'integer':
      return fc.integer({ min: -2, max: 12 }).map(String);
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map(String);
    case 'boolean':
    case 'json':
      return fc.constantFrom('true', 'false');
    case 'datetime':
      return fc.oneof(isoDate.map((d) => d.toISOString()), isoDate.map((d) => d.toISOString().slice(0, 10)));
    case 'date':
      return isoDate.map((d) => d.toISOString().slice(0, 10));
    case 'currency':
      return fc.constantFrom('EUR', 'USD', 'GBP');
    case 'status':
      return fc.constantFrom('pending', 'paid', 'shipped', 'cancelled');
    default:
      return fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('Alice', 'A', 'Hello', 'SKU-1', 'W'));
  }
}

/** One `key=value` pair of a list query for `resource`, before encoding. */
function queryPair(resource: string): fc.Arbitrary<[string, string]> {
  const types = FIELD_TYPES[resource] ?? {};
  const fields = Object.keys(types);
  const sortable = fields.filter((f) => types[f] !== 'json');
  const relations = RELATIONS[resource] ?? [];
  const filter = fc.constantFrom(...fields).chain((field) => {
    const type = types[field] ?? 'string';
    return fc.oneof(
      typedValue(type).map((v): [string, string] => [field, v]),
      fc.tuple(fc.constantFrom(...OPERATORS), fc.array(typedValue(type), { minLength: 1, maxLength: 3 })).map(([op, values]): [string, string] => [
        `${field}[${op}]`,
        op === 'isNull' ? (values[0] === 'true' ? 'true' : 'false') : op === 'in' ? values.join(',') : values[0] ?? '',
      ]),
    );
  });
  const reserved = fc.oneof(
    fc.array(fc.tuple(fc.constantFrom(...sortable), fc.boolean()), { minLength: 1, maxLength: 3 }).map((keys): [string, string] => ['sort', keys.map(([f, desc]) => `${desc ? '-' : ''}${f}`).join(',')]),
    fc.integer({ min: 0, max: 1100 }).map((n): [string, string] => ['limit', String(n)]),
    fc.nat({ max: 20 }).map((n): [string, string] => ['offset', String(n)]),
    fc.constantFrom('true', 'false').map((v): [string, string] => ['count', v]),
    fc.subarray(fields, { minLength: 1 }).map((names): [string, string] => ['fields', names.join(',')]),
    fc.subarray(relations, { minLength: 1 }).map((names): [string, string] => ['include', names.join(',')]),
  );
  const noise = fc.tuple(queryKey(resource), anyQueryValue);
  return fc.oneof({ weight: 4, arbitrary: filter }, { weight: 3, arbitrary: reserved }, { weight: 2, arbitrary: noise });
}

function queryKey(resource: string): fc.Arbitrary<string> {
  const fields = Object.keys(FIELD_TYPES[resource] ?? {});
  const names = [...fields, ...RESERVED];
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...names) },
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...fields), fc.constantFrom(...OPERATORS)).map(([f, op]) => `${f}[${op}]`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...names), anyText).map(([f, op]) => `${f}[${op}]`) },
    { weight: 1, arbitrary: fc.tuple(anyText, anyText, anyText).map(([a, b, c]) => `${a}[${b}][${c}]`) },
    { weight: 1, arbitrary: anyText },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', '', '[', ']', '[]', 'a[', 'name]') },
  );
}

/** A whole query string: encoded pairs, sometimes with raw brackets, and raw junk a URL may contain. */
function queryString(resource: string): fc.Arbitrary<string> {
  const pair = fc.tuple(queryPair(resource), fc.boolean()).map(([[k, v], rawBrackets]) => {
    const key = rawBrackets ? encode(k).replace(/%5B/gi, '[').replace(/%5D/gi, ']') : encode(k);
    return `${key}=${encode(v)}`;
  });
  const junk = fc.constantFrom('%', '%ZZ', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '&', '=', '==', 'a==b', '+', '%00', 'name', 'sort', 'limit=');
  return fc.array(fc.oneof({ weight: 12, arbitrary: pair }, { weight: 1, arbitrary: junk }), { maxLength: 4 }).map((parts) => parts.join('&'));
}

// ---- arbitraries: write bodies ------------------------------------------------------------

const text = (min: number, max: number): fc.Arbitrary<string> => fc.oneof(fc.string({ minLength: min, maxLength: Math.min(max, 40) }), fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(max, 10) }));
const orNull = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(null) });
const iso = isoDate.map((d) => d.toISOString());
const day = isoDate.map((d) => d.toISOString().slice(0, 10));

/** Per field: values the schema accepts, and values just off (wrong type, format, bound or length). */
const FIELD_VALUES: Record<string, Record<string, [valid: fc.Arbitrary<unknown>, invalid: fc.Arbitrary<unknown>]>> = {
  users: {
    name: [text(1, 200), fc.constantFrom('', 'n'.repeat(201), null, 42, true)],
    email: [orNull(fc.constantFrom('alice@example.com', 'bob@example.com', 'c@example.org', 'new@example.net')), fc.constantFrom('not-an-email', '@', 'x@', 5)],
    bio: [orNull(text(0, 2000)), fc.constantFrom('b'.repeat(2001), 7, [])],
  },
  posts: {
    title: [text(1, 300), fc.constantFrom('', 't'.repeat(301), null)],
    body: [orNull(text(0, 1000)), fc.constantFrom(1, {})],
    userId: [fc.constantFrom(1, 2), fc.constantFrom(0, 3, 999, -1, 1.5, '1', null)],
    published: [orNull(fc.boolean()), fc.constantFrom('true', 0, 1)],
    publishedAt: [orNull(fc.oneof(iso, iso.map((d) => d.replace('Z', '+05:30')))), fc.constantFrom('2024-05-01', '2024-05-01T12:00:00', '2024-02-30T00:00:00Z', '2024-01-01T24:00:00Z', 'yesterday', '', 0)],
    tags: [fc.jsonValue({ maxDepth: 3 }), fc.constant(undefined)],
  },
  products: {
    name: [text(1, 200), fc.constantFrom('', null, 1)],
    sku: [fc.oneof(fc.stringMatching(/^[A-Z0-9-]{3,32}$/), fc.constantFrom('SKU-1', 'SKU-2')), fc.constantFrom('ab', 'lower-case', 'A'.repeat(33), null)],
    price: [fc.oneof(fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, 0.1, 1e308)), fc.constantFrom(-1, -0.01, '1', null)],
    currency: [orNull(fc.constantFrom('EUR', 'USD', 'GBP')), fc.constantFrom('JPY', 'eur', '', 1)],
    stock: [orNull(fc.nat()), fc.constantFrom(-1, 1.5, 2 ** 53, '3')],
    active: [orNull(fc.boolean()), fc.constantFrom('yes', 0)],
  },
  orders: {
    userId: [fc.constantFrom(1, 2), fc.constantFrom(0, 999, 'x', null)],
    productId: [fc.constantFrom(1, 2), fc.constantFrom(0, 999, 2.5, null)],
    quantity: [fc.integer({ min: 1, max: 10000 }), fc.constantFrom(0, 10001, -3, 1.5, null)],
    status: [orNull(fc.constantFrom('pending', 'paid', 'shipped', 'cancelled')), fc.constantFrom('lost', '', 'PAID')],
    placedOn: [orNull(day), fc.constantFrom('2023-02-29', '2024-13-01', '2024-1-1', '', 20240101)],
    note: [orNull(text(0, 1000)), fc.constantFrom('n'.repeat(1001), false)],
  },
};

const REQUIRED: Record<string, string[]> = { users: ['name'], posts: ['title', 'userId'], products: ['name', 'sku', 'price'], orders: ['userId', 'productId', 'quantity'] };

/** A request body as text and its content type: mostly objects mixing real and random fields. */
function writeBody(resource: string): fc.Arbitrary<{ text: string; contentType: string }> {
  const fields = FIELD_VALUES[resource] ?? {};
  const model = Object.fromEntries(
    Object.entries(fields).map(([name, [valid, invalid]]) => [
      name,
      fc.oneof({ weight: 16, arbitrary: valid }, { weight: 1, arbitrary: invalid }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }),
    ]),
  );
  // Mostly with every required field, so that many writes succeed and the 2xx path is exercised too.
  const realFields = fc.oneof(
    { weight: 3, arbitrary: fc.record(model, { requiredKeys: REQUIRED[resource] ?? [] }) },
    { weight: 1, arbitrary: fc.record(model, { requiredKeys: [] }) },
  );
  const systemFields = fc.record(
    { id: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.jsonValue({ maxDepth: 1 })), createdAt: fc.jsonValue({ maxDepth: 1 }), updatedAt: fc.constant('2000-01-01T00:00:00Z') },
    { requiredKeys: [] },
  );
  const extra = fc.dictionary(fc.oneof(anyText, fc.constantFrom('constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty')), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 2 });
  const object = fc
    .tuple(realFields, fc.oneof({ weight: 6, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: systemFields }), fc.oneof({ weight: 8, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: extra }))
    .map(([a, b, c]) => JSON.stringify({ ...c, ...b, ...a }));
  const body = fc.oneof(
    { weight: 20, arbitrary: object },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
    { weight: 1, arbitrary: object.map((s) => s.slice(0, Math.max(0, s.length - 1))) },
  );
  const contentType = fc.oneof(
    { weight: 16, arbitrary: fc.constant('application/json') },
    { weight: 1, arbitrary: fc.constantFrom('application/merge-patch+json', 'text/plain', 'application/json; charset=utf-8') },
  );
  return fc.record({ text: body, contentType });
}

const RESOURCES = ['users', 'posts', 'products', 'orders'];

beforeAll(async () => {
  t = await startTestApp();
  const seed: [string, Row][] = [
    ['users', { name: 'Alice', email: 'alice@example.com', bio: 'first' }],
    ['users', { name: 'Bob' }],
    ['posts', { title: 'Hello', userId: 1, published: true, publishedAt: '2024-01-01T00:00:00Z', tags: { a: [1, 2] } }],
    ['posts', { title: 'World', userId: 2 }],
    ['products', { name: 'Widget', sku: 'SKU-1', price: 10, stock: 3 }],
    ['products', { name: 'Gadget', sku: 'SKU-2', price: 2.5, currency: 'USD' }],
    ['orders', { userId: 1, productId: 1, quantity: 2, placedOn: '2024-01-02', note: 'n' }],
    ['orders', { userId: 2, productId: 2, quantity: 1 }],
  ];
  for (const [resource, body] of seed) {
    const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: body });
    expect(response.statusCode, response.body).toBe(201);
  }
});
afterAll(async () => t.close());

/** The default URL limit (RESTGRAPH_MAX_URL_LENGTH). */
const MAX_URL_BYTES = 8192;

describe('random query strings', () => {
  for (const resource of ['users', 'posts', 'products']) {
    it(`GET /${resource}?<random> answers 200 with a JSON array or 400 problem+json, never anything else`, async () => {
      await fc.assert(
        fc.asyncProperty(queryString(resource), fc.constantFrom('', '/v1'), async (query, prefix) => {
          const url = `${prefix}/${resource}?${query}`;
          const response = await t.app.inject({ method: 'GET', url });
          // A URL over the limit (RESTGRAPH_MAX_URL_LENGTH, 8 KiB by default) is a 414, whatever it asks.
          if (Buffer.byteLength(url) > MAX_URL_BYTES) assertProblem(response, 414);
          else if (response.statusCode === 200) {
            expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
            expect(Array.isArray(json(response))).toBe(true);
          } else {
            assertProblem(response, 400);
          }
        }),
        { numRuns: 250 },
      );
    });
  }

  it('GET /<resource>/<id>/<relation>?<random> never answers 5xx', async () => {
    const arb = fc
      .constantFrom(...Object.entries(RELATIONS).flatMap(([r, rels]) => rels.map((rel) => [r, rel] as const)))
      .chain(([resource, relation]) => fc.tuple(fc.constant(resource), fc.constant(relation), fc.constantFrom('1', '2', '999', 'x'), queryString(relation === 'user' ? 'users' : relation === 'product' ? 'products' : relation)));
    await fc.assert(
      fc.asyncProperty(arb, async ([resource, relation, id, query]) => {
        const url = `/${resource}/${id}/${relation}?${query}`;
        const response = await t.app.inject({ method: 'GET', url });
        if (response.statusCode === 200) expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        else expect(Buffer.byteLength(url) > MAX_URL_BYTES ? [414] : [400, 404], describeResponse(response)).toContain(response.statusCode);
        if (response.statusCode !== 200) assertProblem(response, response.statusCode);
      }),
      { numRuns: 200 },
    );
  });
});

describe('random write bodies', () => {
  const methods: [InjectOptions['method'], (resource: string, id: string) => string, fc.Arbitrary<string>][] = [
    ['POST', (resource) => `/${resource}`, fc.constant('')],
    ['PUT', (resource, id) => `/${resource}/${id}`, fc.constantFrom('1', '2', '1', '999999')],
    ['PATCH', (resource, id) => `/${resource}/${id}`, fc.constantFrom('1', '2', '2', '999999')],
  ];
  for (const [method, path, ids] of methods) {
    it(`${String(method)} with random bodies never answers 5xx, and a 4xx leaves the stored rows unchanged`, async () => {
      const arb = fc.constantFrom(...RESOURCES).chain((resource) => fc.tuple(fc.constant(resource), ids, writeBody(resource), fc.boolean()));
      await fc.assert(
        fc.asyncProperty(arb, async ([resource, id, { text, contentType }, versioned]) => {
          const before = await listAll(resource);
          const response = await t.app.inject({ method, url: `${versioned ? '/v1' : ''}${path(resource, id)}`, headers: { 'content-type': contentType }, payload: text });
          expect(response.statusCode, describeResponse(response)).toBeLessThan(500);
          if (response.statusCode >= 400) {
            assertProblem(response, response.statusCode);
            expect(await listAll(resource)).toBe(before);
          } else {
            expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
            const row = json<Row>(response);
            expect(typeof row.id).toBe('number');
            // What the response says is what is stored.
            const stored = await t.app.inject({ method: 'GET', url: `/${resource}/${String(row.id)}` });
            expect(stored.body).toBe(response.body);
          }
        }),
        { numRuns: 250 },
      );
    });
  }
});

// ---- forged cursors and filter values -----------------------------------------------------

/** The kind of value a field holds, for the fields of the example schema (enums by their values). */
const ENUM_VALUES: Record<string, readonly string[]> = { currency: ['EUR', 'USD', 'GBP'], status: ['pending', 'paid', 'shipped', 'cancelled'] };
const SYSTEM_FIELD_NAMES = new Set(Object.keys(SYSTEM_FIELDS));

/** A cursor value the field could hold, as responses show it. */
function validCursorValue(field: string, type: string): fc.Arbitrary<unknown> {
  const nullable = SYSTEM_FIELD_NAMES.has(field) ? [] : [fc.constant(null)];
  const enumValues = ENUM_VALUES[type];
  const value: fc.Arbitrary<unknown> =
    enumValues !== undefined
      ? fc.constantFrom(...enumValues)
      : type === 'integer'
        ? fc.maxSafeInteger()
        : type === 'number'
          ? fc.double({ noNaN: true, noDefaultInfinity: true })
          : type === 'boolean'
            ? fc.boolean()
            : type === 'datetime'
              ? iso
              : type === 'date'
                ? day
                : fc.string({ maxLength: 10 }).filter((s) => !s.includes('\u0000'));
  return fc.oneof(value, ...nullable);
}

/** Cursor values no field of this type can hold: each must make the cursor a 400. */
function wrongCursorValue(field: string, type: string): fc.Arbitrary<unknown> {
  const notText = [0, 1.5, true, false, {}, [], [1], { a: 1 }];
  const wrong: unknown[] =
    ENUM_VALUES[type] !== undefined
      ? ['lost', '', 'eur', 'PENDING', 'a\u0000b', ...notText]
      : type === 'integer'
        ? [1.5, -0.5, 2 ** 53, -(2 ** 53), 1e300, '1', '', 'abc', true, {}, [], [1]]
        : type === 'number'
          ? ['1', '', 'abc', 'NaN', 'Infinity', true, {}, [], [1.5]]
          : type === 'boolean'
            ? [0, 1, 'true', 'false', '', {}, [], [true]]
            : type === 'datetime'
              ? ['abc', '', 'yesterday', '2024-02-30T00:00:00Z', '2024-01-01T24:00:00Z', '2024-13-01T00:00:00Z', '99999-01-01T00:00:00Z', '2024-01-01T00:00:00.000Zjunk', 'a\u0000b', ...notText]
              : type === 'date'
                ? ['abc', '', '2023-02-29', '2024-1-1', '2024-13-01', '2024-01-01T00:00:00Z', '20240101', 'a\u0000b', ...notText]
                : ['a\u0000b', '\u0000', ...notText];
  return SYSTEM_FIELD_NAMES.has(field) ? fc.constantFrom(null, ...wrong) : fc.constantFrom(...wrong);
}

type CursorKey = { field: string; type: string; desc: boolean; kind: 'valid' | 'wrong' | 'any' };

/** A list request with a well-formed cursor for its own sort: each value valid, wrong for its field, or any JSON. */
function forgedCursorRequest(resource: string): fc.Arbitrary<{ url: string; keys: CursorKey[] }> {
  const types = FIELD_TYPES[resource] ?? {};
  const sortable = Object.keys(types).filter((f) => types[f] !== 'json');
  return fc
    .uniqueArray(fc.constantFrom(...sortable), { minLength: 1, maxLength: 3 })
    .chain((fields) => fc.tuple(fc.constant(fields), fc.array(fc.boolean(), { minLength: fields.length, maxLength: fields.length })))
    .chain(([fields, descs]) => {
      const sortKeys = fields.map((field, i) => ({ field, desc: descs[i] === true }));
      const keys = sortKeys.some((k) => k.field === 'id') ? sortKeys : [...sortKeys, { field: 'id', desc: false }];
      const values = keys.map(({ field, desc }) => {
        const type = types[field] ?? 'string';
        return fc.oneof(
          { weight: 3, arbitrary: validCursorValue(field, type).map((value) => ({ field, type, desc, kind: 'valid' as const, value })) },
          { weight: 2, arbitrary: wrongCursorValue(field, type).map((value) => ({ field, type, desc, kind: 'wrong' as const, value })) },
          { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }).map((value) => ({ field, type, desc, kind: 'any' as const, value })) },
        );
      });
      return fc.tuple(...values).map((entries) => {
        const signature = entries.map((e) => `${e.desc ? '-' : ''}${e.field}`).join(',');
        const sort = sortKeys.map((k) => `${k.desc ? '-' : ''}${k.field}`).join(',');
        const cursor = Buffer.from(JSON.stringify({ s: signature, v: entries.map((e) => e.value) })).toString('base64url');
        return { url: `/${resource}?sort=${encode(sort)}&limit=5&after=${cursor}`, keys: entries.map(({ value: _value, ...key }) => key) };
      });
    });
}

/** Filter values a client should not send, for any field type: every form of nonsense, and edge values. */
const forgedFilterValue = fc.oneof(
  anyText,
  fc.constantFrom(
    '', ' ', '\u0000', 'a\u0000', '\uD800', 'null', 'undefined', 'NaN', 'Infinity', '-Infinity', '1e309', '-1e309', '1e-400', '9007199254740993', '-9007199254740993',
    '99999999999999999999', '-0', '0x10', '0b1', '1_000', '.5', '5.', '+1', '1,2', ',', 'true', 'TRUE', '1', '0', 'yes',
    '0000-01-01', '0001-01-01', '9999-12-31', '2024-02-29', '2023-02-29', '2024-00-10', '2024-01-01T00:00:00Z', '9999-12-31T23:59:59-23:59', '0000-01-01T00:00:00+23:59',
    '2024-01-01T23:59:60Z', '2024-01-01T24:00:00Z', '2024-01-01T00:00:00.123456789Z', '2024-01-01 00:00', '+275760-09-13T00:00:00Z', '-271821-04-20T00:00:00Z',
    'EUR', 'eur', 'pending', 'x'.repeat(5000), '%', '[]', '{}', '{"a":1}', '__proto__',
  ),
  fc.double().map(String),
  fc.bigInt().map(String),
  isoDate.map((d) => d.toISOString()),
);

describe('forged cursors and filter values', () => {
  it('a cursor whose datetime value is not a date -> 400 naming after (it was a 500: Invalid time value)', async () => {
    const cursor = Buffer.from(JSON.stringify({ s: 'createdAt,id', v: ['abc', 1] })).toString('base64url');
    for (const prefix of ['', '/v1']) {
      const response = await t.app.inject({ method: 'GET', url: `${prefix}/users?sort=createdAt&after=${cursor}` });
      assertProblem(response, 400);
      expect(json<Row>(response)).toMatchObject({ code: 'invalid-query', errors: [{ parameter: 'after', detail: expect.stringContaining('createdAt') as string }] });
    }
  });

  it('the same forged cursor through GraphQL (after and before) -> invalid-query naming the argument', async () => {
    const cursor = Buffer.from(JSON.stringify({ s: 'createdAt,id', v: ['abc', 1] })).toString('base64url');
    for (const [argument, paging] of [['after', 'first: 2'], ['before', 'last: 2']] as const) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        payload: { query: `query($c: String) { users(sort: [CREATED_AT_ASC], ${paging}, ${argument}: $c) { id } }`, variables: { c: cursor } },
      });
      expect(response.statusCode, response.body).toBe(200);
      const body = json<{ data: unknown; errors: { extensions: { code: string; errors: { parameter: string }[] } }[] }>(response);
      expect(body.data).toEqual({ users: null });
      expect(body.errors.map((e) => [e.extensions.code, e.extensions.errors.map((d) => d.parameter)])).toEqual([['invalid-query', [argument]]]);
    }
  });

  for (const resource of ['users', 'posts', 'products', 'orders']) {
    it(`GET /${resource} with a well-formed cursor holding wrongly typed values answers 400 (a valid one 200), never 5xx`, async () => {
      await fc.assert(
        fc.asyncProperty(forgedCursorRequest(resource), async ({ url, keys }) => {
          const response = await t.app.inject({ method: 'GET', url });
          if (keys.some((k) => k.kind === 'wrong')) {
            assertProblem(response, 400);
            expect(json<Row>(response).errors).toEqual([{ parameter: 'after', detail: expect.any(String) as string }]);
          } else if (keys.every((k) => k.kind === 'valid')) {
            expect(response.statusCode, describeResponse(response)).toBe(200);
          } else if (response.statusCode !== 200) {
            assertProblem(response, 400);
          }
        }),
        { numRuns: 150 },
      );
    });
  }

  it('a filter of every field type with every operator and a forged value answers 200 or 400, never 5xx', async () => {
    const arb = fc.constantFrom(...RESOURCES).chain((resource) => {
      const fields = Object.keys(FIELD_TYPES[resource] ?? {});
      return fc.tuple(
        fc.constant(resource),
        fc.constantFrom(...fields),
        fc.constantFrom(...OPERATORS, ''),
        fc.oneof(forgedFilterValue, fc.array(forgedFilterValue, { minLength: 2, maxLength: 4 }).map((parts) => parts.join(','))),
      );
    });
    await fc.assert(
      fc.asyncProperty(arb, async ([resource, field, op, value]) => {
        const key = op === '' ? field : `${field}[${op}]`;
        const url = `/${resource}?${encode(key)}=${encode(value)}`;
        const response = await t.app.inject({ method: 'GET', url });
        if (Buffer.byteLength(url) > MAX_URL_BYTES) assertProblem(response, 414);
        else if (response.statusCode !== 200) assertProblem(response, 400);
      }),
      { numRuns: 600 },
    );
  });

  it('every field type with every operator, over each forged value in turn: never 5xx', async () => {
    // Exhaustive over the fixed forged values (the property above samples them with random ones).
    const values = ['', '\u0000', '1e309', '9007199254740993', '-0', '0000-01-01', '9999-12-31T23:59:59-23:59', '+275760-09-13T00:00:00Z', '2024-01-01T23:59:60Z', 'abc', '1,2', 'true'];
    for (const resource of RESOURCES) {
      for (const field of Object.keys(FIELD_TYPES[resource] ?? {})) {
        for (const op of OPERATORS) {
          for (const value of values) {
            const response = await t.app.inject({ method: 'GET', url: `/${resource}?${encode(`${field}[${op}]`)}=${encode(value)}` });
            if (response.statusCode !== 200) assertProblem(response, 400);
          }
        }
      }
    }
  });
});
