import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, json, type TestApp } from './helpers/test-app.js';
import { anyText, assertProblem, day, describeResponse, iso, RESOURCES, startSeededApp, type Row } from './helpers/rest-properties.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * Property-based tests (fast-check) through HTTP, on the example schema
 * (test/helpers/rest-properties.ts): random write bodies never produce a 5xx, and a rejected write never changes the stored data.
 * (The other rest-properties-*.test.ts files: rest-properties-queries, rest-properties-forged.)
 */

let t: TestApp;
beforeAll(async () => (t = await startSeededApp()));
afterAll(async () => t.close());

async function listAll(resource: string): Promise<string> {
  const response = await t.app.inject({ method: 'GET', url: `/${resource}?limit=1000` });
  expect(response.statusCode).toBe(200);
  return response.body;
}

// ---- arbitraries: write bodies ------------------------------------------------------------

const text = (min: number, max: number): fc.Arbitrary<string> => fc.oneof(fc.string({ minLength: min, maxLength: Math.min(max, 40) }), fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(max, 10) }));
const orNull = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(null) });

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
