import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, json, type TestApp } from './helpers/test-app.js';
import { anyText, assertProblem, day, describeResponse, encode, FIELD_TYPES, iso, isoDate, MAX_URL_BYTES, OPERATORS, RESOURCES, startSeededApp, SYSTEM_FIELDS, type Row } from './helpers/rest-properties.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * Property-based tests (fast-check) through HTTP, on the example schema
 * (test/helpers/rest-properties.ts): forged cursors and filter values of every field type answer 200 or 400, never 5xx.
 * (The other rest-properties-*.test.ts files: rest-properties-queries, rest-properties-writes.)
 */

let t: TestApp;
beforeAll(async () => (t = await startSeededApp()));
afterAll(async () => t.close());

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
