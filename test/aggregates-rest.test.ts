import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { AGGREGATE_SCHEMA } from './helpers/aggregate-schema.js';
import { aggregateInMemory, term, type OracleKey, type OracleMeasure, type Row } from './helpers/aggregate-oracle.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * GET /<resource>/aggregate through HTTP: groups, counts, sums, averages, extremes and distinct
 * counts checked against an in-memory computation over the same random rows (nulls included), date
 * truncation, the group limit and sort, the owner rule, and 400s naming the parameter at fault.
 */


let t: TestApp;
const get = (url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> => t.app.inject({ method: 'GET', url, headers });

async function create(resource: string, body: Row, headers: Record<string, string> = {}): Promise<Row> {
  const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: body, headers });
  if (response.statusCode !== 201) throw new Error(`seeding ${resource} failed: ${String(response.statusCode)} ${response.body}`);
  return json<Row>(response);
}

function groupsOf(response: LightMyRequestResponse): Row[] {
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  return json<Row[]>(response);
}

function problemOf(response: LightMyRequestResponse, parameter: string): string {
  expect(response.statusCode, response.body).toBe(400);
  const body = json<{ code: string; errors?: { parameter?: string; detail: string }[] }>(response);
  expect(body.code).toBe('invalid-query');
  const problem = body.errors?.find((e) => e.parameter === parameter);
  expect(problem, response.body).toBeDefined();
  return problem?.detail ?? '';
}

const customers: number[] = [];
beforeAll(async () => {
  t = await startTestApp({ schema: parseSchemaText(AGGREGATE_SCHEMA), listLimits: { maxGroups: 5 }, apiKeyCacheMs: 0 });
  for (const name of ['Ann', 'Ben', 'Cy']) customers.push((await create('customers', { name })).id as number);
});
afterAll(async () => t.close());

describe('the answer', () => {
  beforeAll(async () => {
    const rows: Row[] = [
      { status: 'paid', total: 10, qty: 1, at: '2026-12-01T10:00:00Z' },
      { status: 'paid', total: 20, qty: 2, at: '2026-12-03T10:00:00Z' },
      { status: 'paid', total: 30, qty: null, at: '2026-11-30T23:59:59Z' },
      { status: 'pending', total: null, qty: 4, at: '2025-01-01T00:00:00Z' },
      { status: null, total: 5, qty: 5, at: null },
    ];
    for (const row of rows) await create('orders', { batch: 1, ...row });
  });

  it('one object per group, ordered by the group values (null first), with what was asked', async () => {
    const groups = groupsOf(await get('/orders/aggregate?batch=1&groupBy=status&count=true&sum=total,qty&avg=total&min=at&max=at'));
    expect(groups).toEqual([
      { group: { status: null }, count: 1, sum: { total: 5, qty: 5 }, avg: { total: 5 }, min: { at: null }, max: { at: null } },
      { group: { status: 'paid' }, count: 3, sum: { total: 60, qty: 3 }, avg: { total: 20 }, min: { at: '2026-11-30T23:59:59.000Z' }, max: { at: '2026-12-03T10:00:00.000Z' } },
      { group: { status: 'pending' }, count: 1, sum: { total: null, qty: 4 }, avg: { total: null }, min: { at: '2025-01-01T00:00:00.000Z' }, max: { at: '2025-01-01T00:00:00.000Z' } },
    ]);
  });

  it('without groupBy: one group over every row; over no rows, count 0 and sums null', async () => {
    expect(groupsOf(await get('/orders/aggregate?batch=1&sum=total'))).toEqual([{ group: {}, sum: { total: 65 } }]);
    expect(groupsOf(await get('/orders/aggregate?batch=1'))).toEqual([{ group: {}, count: 5 }]);
    expect(groupsOf(await get('/orders/aggregate?batch=999&count=true&sum=total&countDistinct=status'))).toEqual([{ group: {}, count: 0, sum: { total: null }, countDistinct: { status: 0 } }]);
    expect(groupsOf(await get('/orders/aggregate?batch=999&groupBy=status'))).toEqual([]);
  });

  it('groupBy a datetime truncated to day, month or year: ISO dates in UTC', async () => {
    const months = groupsOf(await get('/orders/aggregate?batch=1&groupBy=at:month'));
    expect(months).toEqual([
      { group: { 'at:month': null }, count: 1 },
      { group: { 'at:month': '2025-01-01' }, count: 1 },
      { group: { 'at:month': '2026-11-01' }, count: 1 },
      { group: { 'at:month': '2026-12-01' }, count: 2 },
    ]);
    expect(groupsOf(await get('/orders/aggregate?batch=1&groupBy=at:year&at[isNull]=false')).map((g) => g.group)).toEqual([{ 'at:year': '2025-01-01' }, { 'at:year': '2026-01-01' }]);
    expect(groupsOf(await get('/orders/aggregate?batch=1&groupBy=at:day&status=paid')).map((g) => g.group)).toEqual([{ 'at:day': '2026-11-30' }, { 'at:day': '2026-12-01' }, { 'at:day': '2026-12-03' }]);
  });

  it('sort by aggregate values and group terms; limit cuts the groups', async () => {
    const bySum = groupsOf(await get('/orders/aggregate?batch=1&groupBy=status&sum=total&sort=-sum.total'));
    expect(bySum.map((g) => (g.group as Row).status)).toEqual(['paid', null, 'pending']);
    const byCount = groupsOf(await get('/orders/aggregate?batch=1&groupBy=status&sort=-count,-status&limit=2'));
    expect(byCount.map((g) => (g.group as Row).status)).toEqual(['paid', 'pending']);
    // Sorting by an aggregate not asked for still works; it is not shown.
    expect(groupsOf(await get('/orders/aggregate?batch=1&groupBy=status&sort=max.qty')).map((g) => (g.group as Row).status)).toEqual(['paid', 'pending', null]);
  });

  it('more groups than the limit (5 here) is a 400 naming it, unless limit is given', async () => {
    const detail = problemOf(await get('/orders/aggregate?groupBy=total'), 'groupBy');
    expect(detail).toMatch(/number/);
    for (let i = 0; i < 6; i++) await create('orders', { batch: 2, qty: i });
    expect(problemOf(await get('/orders/aggregate?batch=2&groupBy=qty'), 'groupBy')).toMatch(/more than 5 groups.*limit/);
    expect(groupsOf(await get('/orders/aggregate?batch=2&groupBy=qty&limit=5&sort=-qty')).map((g) => (g.group as Row).qty)).toEqual([5, 4, 3, 2, 1]);
    expect(problemOf(await get('/orders/aggregate?batch=2&groupBy=qty&limit=6'), 'limit')).toMatch(/1 to 5/);
  });

  it('groups by booleans, dates, belongsTo references and several keys at once', async () => {
    const [ann, ben] = customers;
    await create('orders', { batch: 3, paid: true, day: '2026-02-03', customerId: ann, total: 1 });
    await create('orders', { batch: 3, paid: false, day: '2026-02-03', customerId: ann, total: 2 });
    await create('orders', { batch: 3, paid: true, day: '2026-03-01', customerId: ben, total: 4 });
    expect(groupsOf(await get('/orders/aggregate?batch=3&groupBy=paid&sum=total'))).toEqual([
      { group: { paid: false }, sum: { total: 2 } },
      { group: { paid: true }, sum: { total: 5 } },
    ]);
    expect(groupsOf(await get('/orders/aggregate?batch=3&groupBy=customerId,day:month&count=true'))).toEqual([
      { group: { customerId: ann, 'day:month': '2026-02-01' }, count: 2 },
      { group: { customerId: ben, 'day:month': '2026-03-01' }, count: 1 },
    ]);
    expect(groupsOf(await get('/orders/aggregate?batch=3&groupBy=day&min=day&countDistinct=customerId'))).toEqual([
      { group: { day: '2026-02-03' }, min: { day: '2026-02-03' }, countDistinct: { customerId: 1 } },
      { group: { day: '2026-03-01' }, min: { day: '2026-03-01' }, countDistinct: { customerId: 1 } },
    ]);
  });

  it('takes filter= expressions as lists do: or, not, relation paths; a bad one names its offset', async () => {
    const q = (expression: string): string => encodeURIComponent(expression);
    expect(groupsOf(await get(`/orders/aggregate?batch=3&sum=total&filter=${q("customer.name = 'Ann' or total >= 4")}`))).toEqual([{ group: {}, count: 3, sum: { total: 7 } }].map(({ count: _, ...g }) => g));
    expect(groupsOf(await get(`/orders/aggregate?batch=3&count=true&filter=${q("not customer.name = 'Ann'")}`))).toEqual([{ group: {}, count: 1 }]);
    expect(groupsOf(await get(`/customers/aggregate?count=true&filter=${q('orders.any(batch = 3 and total >= 2)')}`))).toEqual([{ group: {}, count: 2 }]);
    const response = await get(`/orders/aggregate?filter=${q('totl > 1')}`);
    expect(problemOf(response, 'filter')).toMatch(/unknown field "totl" at 0/);
  });
});

describe('bad parameters: 400 invalid-query naming the parameter and what is allowed, never a 5xx', () => {
  const cases: [string, string, RegExp][] = [
    ['sum=note', 'sum', /"note" is a string field; sum takes number and integer fields.*total, qty/],
    ['avg=nope', 'avg', /"nope" is not a field of orders/],
    ['min=paid', 'min', /boolean/],
    ['countDistinct=extra', 'countDistinct', /json/],
    ['groupBy=extra', 'groupBy', /cannot group rows \(json\)/],
    ['groupBy=at', 'groupBy', /cannot group rows \(datetime\).*at:month/],
    ['groupBy=status:month', 'groupBy', /cannot group rows/],
    ['groupBy=at:week', 'groupBy', /day, month or year/],
    ['groupBy=status,status', 'groupBy', /twice/],
    ['groupBy=', 'groupBy', /empty/],
    ['count=yes', 'count', /true or false/],
    ['limit=0', 'limit', /1 to 5/],
    ['sort=total', 'sort', /not something to sort groups by/],
    ['sort=sum.note', 'sort', /sum takes/],
    ['sum=total&sum=qty', 'sum', /more than once/],
    ['offset=3', 'offset', /list parameter/],
    ['include=customer', 'include', /list parameter/],
    ['total[gt]=abc', 'total[gt]', /not a number/],
    ['nope=1', 'nope', /not a known query parameter/],
    ['__proto__=1', '__proto__', /not a known query parameter/],
    ['sum=__proto__', 'sum', /not a field/],
    ['groupBy=__proto__', 'groupBy', /not a field/],
    ['sort=-__proto__', 'sort', /not something/],
    [`groupBy=${Array.from({ length: 1_000 }, () => 'status').join(',')}`, 'groupBy', /at most 8/],
    [`sum=${Array.from({ length: 1_000 }, () => 'total').join(',')}`, 'sum', /at most 64/],
    [`sort=${Array.from({ length: 1_000 }, () => 'count').join(',')}`, 'sort', /at most/],
  ];
  it.each(cases.map(([query, parameter, detail]) => [query.length > 60 ? `${query.slice(0, 57)}...` : query, query, parameter, detail] as const))('%s', async (_title, query, parameter, detail) => {
    expect(problemOf(await get(`/orders/aggregate?${query}`), parameter)).toMatch(detail);
  });

  it('10,000 groupBy fields: refused before any work (the URL limit, else the entry limit)', async () => {
    const response = await get(`/orders/aggregate?groupBy=${Array.from({ length: 10_000 }, (_v, i) => `f${i}`).join(',')}`);
    expect([400, 414]).toContain(response.statusCode);
  });

  it('random query strings are answered 200 or 400, never a 5xx', async () => {
    const names = ['groupBy', 'count', 'sum', 'avg', 'min', 'max', 'countDistinct', 'sort', 'limit', 'status', 'total[gte]', '__proto__', 'constructor'];
    const values = fc.oneof(
      fc.constantFrom('status', 'at:month', 'total', 'qty', '-sum.total', 'count', 'true', '1', '0', '', ',', 'day:year', 'customerId', 'note', '__proto__', 'toString', 'a:b:c'),
      fc.string({ maxLength: 20 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...names), values), { maxLength: 5 }), async (pairs) => {
        const search = new URLSearchParams(pairs).toString();
        const response = await get(`/orders/aggregate?${search}`);
        expect([200, 400], `${search}: ${response.body}`).toContain(response.statusCode);
      }),
      { numRuns: 150 },
    );
  });
});

describe('the path', () => {
  it('does not collide with /orders/:id, nor with a resource named aggregate', async () => {
    expect((await get('/orders/aggregate')).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: '/orders/aggregate' })).statusCode).toBe(405);
    const row = await create('aggregate', { label: 'x' });
    expect(json<Row>(await get(`/aggregate/${String(row.id)}`)).label).toBe('x');
    expect(groupsOf(await get('/aggregate/aggregate?groupBy=label'))).toEqual([{ group: { label: 'x' }, count: 1 }]);
  });

  it('is served under each version prefix too', async () => {
    expect(groupsOf(await get('/v1/orders/aggregate?batch=1&sum=total'))).toEqual([{ group: {}, sum: { total: 65 } }]);
  });
});

describe('access: the rows the principal cannot read are not counted', () => {
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    for (const subject of ['alice', 'bob']) {
      const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: subject, scopes: ['notes'], subject } });
      expect(response.statusCode, response.body).toBe(201);
      tokens[subject] = `Bearer ${json<{ key: string }>(response).key}`;
    }
    for (const amount of [1, 2, 3]) await create('notes', { amount }, { authorization: tokens.alice ?? '' });
    await create('notes', { amount: 100 }, { authorization: tokens.bob ?? '' });
  });

  it('each owner aggregates its own rows; anonymous is refused as for the list', async () => {
    expect(groupsOf(await get('/notes/aggregate?sum=amount&count=true', { authorization: tokens.alice ?? '' }))).toEqual([{ group: {}, count: 3, sum: { amount: 6 } }]);
    expect(groupsOf(await get('/notes/aggregate?groupBy=author&sum=amount', { authorization: tokens.bob ?? '' }))).toEqual([{ group: { author: 'bob' }, sum: { amount: 100 } }]);
    expect(groupsOf(await get('/notes/aggregate?groupBy=author&sum=amount'))).toHaveLength(2);
    expect((await get('/notes/aggregate', { authorization: '' })).statusCode).toBe(401);
  });
});

describe('property: the same groups as an in-memory computation over random rows with nulls', () => {
  const row = fc.record({
    status: fc.option(fc.constantFrom('pending', 'paid', 'shipped')),
    total: fc.option(fc.integer({ min: -4000, max: 4000 }).map((n) => n / 8)),
    qty: fc.option(fc.integer({ min: -1000, max: 1000 })),
    paid: fc.option(fc.boolean()),
    day: fc.option(fc.date({ min: new Date('2024-01-01T00:00:00Z'), max: new Date('2026-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10))),
    at: fc.option(fc.date({ min: new Date('2024-01-01T00:00:00Z'), max: new Date('2026-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString())),
    note: fc.option(fc.stringMatching(/^[a-c]{0,2}$/)),
    customer: fc.option(fc.nat({ max: 2 })),
  });
  const keys: OracleKey[] = [
    { field: 'status' }, { field: 'paid' }, { field: 'qty' }, { field: 'day' }, { field: 'day', unit: 'month' },
    { field: 'at', unit: 'day' }, { field: 'at', unit: 'month' }, { field: 'at', unit: 'year' }, { field: 'note' }, { field: 'customerId' },
  ];
  const measures: OracleMeasure[] = [
    { fn: 'sum', field: 'total' }, { fn: 'sum', field: 'qty' }, { fn: 'avg', field: 'total' }, { fn: 'avg', field: 'qty' },
    { fn: 'min', field: 'total' }, { fn: 'max', field: 'qty' }, { fn: 'min', field: 'at' }, { fn: 'max', field: 'day' }, { fn: 'min', field: 'note' }, { fn: 'max', field: 'note' },
    { fn: 'countDistinct', field: 'status' }, { fn: 'countDistinct', field: 'note' },
  ];
  let batch = 100;

  it('groups, counts, sums, averages, extremes and distinct counts agree', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { maxLength: 25 }),
        fc.uniqueArray(fc.constantFrom(...keys), { maxLength: 2, selector: (k) => k.field }),
        fc.uniqueArray(fc.constantFrom(...measures), { maxLength: 5, selector: (m) => `${m.fn}.${m.field}` }),
        async (generated, groupBy, asked) => {
          batch += 1;
          const rows: Row[] = [];
          for (const { customer, ...values } of generated) {
            const stored = { batch, ...values, customerId: customer === null ? null : customers[customer] };
            await create('orders', stored);
            rows.push(stored);
          }
          const params = new URLSearchParams({ batch: String(batch), count: 'true', limit: '5' });
          if (groupBy.length > 0) params.set('groupBy', groupBy.map(term).join(','));
          for (const m of asked) params.set(m.fn, [params.get(m.fn), m.field].filter((v) => v !== null).join(','));
          const answer = groupsOf(await get(`/orders/aggregate?${params.toString()}`));
          const expected = aggregateInMemory(rows, groupBy, asked).slice(0, 5);
          expect(answer.map((g) => g.group)).toEqual(expected.map((g) => g.group));
          expect(answer.map((g) => g.count)).toEqual(expected.map((g) => g.count));
          answer.forEach((g, i) => {
            for (const m of asked) {
              const got = (g[m.fn] as Row)[m.field];
              const want = expected[i]?.values[m.fn]?.[m.field];
              if (typeof want === 'number' && (m.fn === 'sum' || m.fn === 'avg')) expect(got as number).toBeCloseTo(want, 6);
              else expect(got, `${m.fn}.${m.field}`).toEqual(want);
            }
          });
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('versions: each version aggregates in its own field names', () => {
  let v: TestApp;
  beforeAll(async () => {
    v = await startTestApp({ schema: 'examples/versioned-schema.yaml' });
    for (const [fullName, locale] of [['Ann', 'en'], ['Ann', 'fr'], ['Bo', 'fr']]) {
      const response = await v.app.inject({ method: 'POST', url: '/v2/users', payload: { fullName, locale } });
      expect(response.statusCode, response.body).toBe(201);
    }
  });
  afterAll(async () => v.close());
  const at = (url: string): Promise<LightMyRequestResponse> => v.app.inject({ method: 'GET', url });

  it('v1 groups by name (v2 fullName), sorts and filters by it; v2 names are unknown there', async () => {
    expect(groupsOf(await at('/v1/users/aggregate?groupBy=name&countDistinct=name&sort=-name&name[ne]=Zed'))).toEqual([
      { group: { name: 'Bo' }, countDistinct: { name: 1 } },
      { group: { name: 'Ann' }, countDistinct: { name: 1 } },
    ]);
    expect(problemOf(await at('/v1/users/aggregate?groupBy=fullName'), 'groupBy')).toMatch(/not a field of users/);
    expect(groupsOf(await at('/v2/users/aggregate?groupBy=locale,fullName&min=fullName'))).toEqual([
      { group: { locale: 'en', fullName: 'Ann' }, min: { fullName: 'Ann' } },
      { group: { locale: 'fr', fullName: 'Ann' }, min: { fullName: 'Ann' } },
      { group: { locale: 'fr', fullName: 'Bo' }, min: { fullName: 'Bo' } },
    ]);
    expect(problemOf(await at('/v2/users/aggregate?min=nickname'), 'min')).toMatch(/not a field/);
  });
});

describe('the group limit setting', () => {
  it('RESTGRAPH_MAX_AGGREGATE_GROUPS sets it; a value out of range fails at start-up naming the variable', () => {
    expect(optionsFromEnv({ RESTGRAPH_MAX_AGGREGATE_GROUPS: '7' }).listLimits?.maxGroups).toBe(7);
    expect(() => optionsFromEnv({ RESTGRAPH_MAX_AGGREGATE_GROUPS: '0' })).toThrow(/RESTGRAPH_MAX_AGGREGATE_GROUPS/);
  });
});
