import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, json, type TestApp } from './helpers/test-app.js';
import { anyText, assertProblem, describeResponse, encode, FIELD_TYPES, isoDate, MAX_URL_BYTES, OPERATORS, RELATIONS, startSeededApp } from './helpers/rest-properties.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * Property-based tests (fast-check) through HTTP, on the example schema
 * (test/helpers/rest-properties.ts): random query strings never produce anything but a 200 with a JSON array or a 400 problem.
 * (The other rest-properties-*.test.ts files: rest-properties-writes, rest-properties-forged.)
 */

let t: TestApp;
beforeAll(async () => (t = await startSeededApp()));
afterAll(async () => t.close());

const RESERVED = ['sort', 'limit', 'offset', 'after', 'count', 'fields', 'include'];

// ---- arbitraries: query strings -----------------------------------------------------------

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
