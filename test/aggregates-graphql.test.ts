import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { aggregateInMemory, term, type OracleKey, type OracleMeasure } from './helpers/aggregate-oracle.js';
import { AGGREGATE_SCHEMA } from './helpers/aggregate-schema.js';
import { dataOf, graphql, onlyError } from './helpers/graphql-request.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * GraphQL aggregates: `ordersAggregate(filter:, groupBy:, sort:, limit:)` answers what REST's
 * GET /orders/aggregate answers, `customer { ordersAggregate }` is loaded for every parent of a level
 * in one SQL statement, the owner rule holds, and the cost counts the groups.
 */

type Row = Record<string, unknown>;
let t: TestApp;
const statements: string[] = [];
const customers: string[] = [];

async function create(resource: string, body: Row, headers: Record<string, string> = {}): Promise<Row> {
  const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: body, headers });
  if (response.statusCode !== 201) throw new Error(`seeding ${resource} failed: ${String(response.statusCode)} ${response.body}`);
  return json<Row>(response);
}
const rest = async (url: string): Promise<Row[]> => {
  const response: LightMyRequestResponse = await t.app.inject({ method: 'GET', url });
  expect(response.statusCode, response.body).toBe(200);
  return json<Row[]>(response);
};

beforeAll(async () => {
  t = await startTestApp({
    schema: parseSchemaText(AGGREGATE_SCHEMA),
    listLimits: { maxGroups: 20 },
    apiKeyCacheMs: 0,
    graphql: { maxCost: 200 },
    onSqlStatement: (sql) => (sql.includes('"_restgraph_') ? undefined : statements.push(sql)),
  });
  for (const name of ['Ann', 'Ben', 'Cy', 'Dee']) customers.push(String((await create('customers', { name })).id));
  const rows: Row[] = [
    { status: 'paid', total: 10, qty: 1, at: '2026-12-01T10:00:00Z', note: 'a', customerId: Number(customers[0]) },
    { status: 'paid', total: 20, qty: 2, at: '2026-12-03T10:00:00Z', note: 'b', customerId: Number(customers[0]) },
    { status: 'paid', total: 30, qty: null, at: '2026-11-30T23:59:59Z', note: 'b', customerId: Number(customers[1]) },
    { status: 'pending', total: null, qty: 4, at: '2025-01-01T00:00:00Z', customerId: Number(customers[1]) },
    { status: null, total: 5, qty: 5, at: null, customerId: Number(customers[2]) },
  ];
  for (const row of rows) await create('orders', { batch: 1, ...row });
});
afterAll(async () => t.close());

describe('ordersAggregate', () => {
  it('answers what REST answers: groups in order, count, sum, avg, min, max, countDistinct', async () => {
    const data = dataOf(
      await graphql<{ ordersAggregate: Row[] }>(
        t.app,
        '{ ordersAggregate(filter: { batch: { eq: 1 } }, groupBy: [status]) { group { status } count sum { total qty } avg { total } min { at } max { at note } countDistinct { note } } }',
      ),
    );
    const expected = await rest('/orders/aggregate?batch=1&groupBy=status&count=true&sum=total,qty&avg=total&min=at&max=at,note&countDistinct=note');
    expect(data.ordersAggregate).toEqual(expected);
    expect(data.ordersAggregate[1]).toEqual({ group: { status: 'paid' }, count: 3, sum: { total: 60, qty: 3 }, avg: { total: 20 }, min: { at: '2026-11-30T23:59:59.000Z' }, max: { at: '2026-12-03T10:00:00.000Z', note: 'b' }, countDistinct: { note: 2 } });
  });

  it('groups by a truncated date (at_month), a reference, several keys; sorts and limits', async () => {
    const months = dataOf(await graphql<{ ordersAggregate: Row[] }>(t.app, '{ ordersAggregate(filter: { batch: { eq: 1 } }, groupBy: [at_month]) { group { at_month } count } }'));
    expect(months.ordersAggregate).toEqual([
      { group: { at_month: null }, count: 1 },
      { group: { at_month: '2025-01-01' }, count: 1 },
      { group: { at_month: '2026-11-01' }, count: 1 },
      { group: { at_month: '2026-12-01' }, count: 2 },
    ]);
    const top = dataOf(
      await graphql<{ ordersAggregate: Row[] }>(t.app, '{ ordersAggregate(filter: { batch: { eq: 1 } }, groupBy: [customerId, status], sort: [SUM_TOTAL_DESC], limit: 2) { group { customerId status } sum { total } } }'),
    );
    expect(top.ordersAggregate).toEqual([
      { group: { customerId: customers[0], status: 'paid' }, sum: { total: 30 } },
      { group: { customerId: customers[1], status: 'paid' }, sum: { total: 30 } },
    ]);
    const all = dataOf(await graphql<{ ordersAggregate: Row[] }>(t.app, '{ ordersAggregate(filter: { batch: { eq: 1 } }) { group { status } count } }'));
    expect(all.ordersAggregate).toEqual([{ group: { status: null }, count: 5 }]);
  });

  it('refusals are invalid-query errors: too many groups, a sort by a key not grouped by, a bad limit', async () => {
    const many = await graphql(t.app, '{ ordersAggregate(groupBy: [at_day]) { count } }');
    for (let i = 0; i < 21; i++) await create('orders', { batch: 2, qty: i });
    const tooMany = await graphql(t.app, '{ ordersAggregate(filter: { batch: { eq: 2 } }, groupBy: [qty]) { count } }');
    expect(onlyError(tooMany, 'invalid-query', ['ordersAggregate']).message).toMatch(/more than 20 groups/);
    dataOf(many);
    expect(onlyError(await graphql(t.app, '{ ordersAggregate(sort: [STATUS_ASC]) { count } }'), 'invalid-query').message).toMatch(/not in groupBy/);
    expect(onlyError(await graphql(t.app, '{ ordersAggregate(limit: 0) { count } }'), 'invalid-query').message).toMatch(/1 to 20/);
    expect((await graphql(t.app, '{ ordersAggregate(groupBy: [extra]) { count } }')).body.errors).toBeDefined();
  });

  it('hostile arguments are 4xx errors, never a 5xx: too many keys, one field twice, __proto__, a bad filter', async () => {
    const nine = await graphql(t.app, '{ ordersAggregate(groupBy: [id, batch, status, qty, paid, day, note, customerId, at_day]) { count } }');
    expect(onlyError(nine, 'invalid-query').message).toMatch(/at most 8/);
    expect(onlyError(await graphql(t.app, '{ ordersAggregate(groupBy: [at_day, at_month]) { count } }'), 'invalid-query').message).toMatch(/twice/);
    expect(onlyError(await graphql(t.app, '{ ordersAggregate(filter: { day: { eq: "2024-02-30" } }) { count } }'), 'invalid-query').message).toMatch(/filter.day.eq/);
    const proto = await graphql(t.app, 'query($f: OrderFilter) { ordersAggregate(filter: $f) { count } }', { variables: { f: JSON.parse('{"__proto__": {"qty": {"eq": 1}}}') as unknown } });
    expect(proto.status).toBeLessThan(500);
    expect(proto.body.errors?.[0]?.extensions.code).toBe('bad-request');
    const nested = await graphql(t.app, '{ customers { ordersAggregate(filter: { qty: { in: [1, 2] }, note: { contains: "\'" } }) { count } } }');
    expect(nested.status, nested.response.body).toBe(200);
  });

  it('costs its groups: limit, else the most groups', async () => {
    const costly = await graphql(t.app, '{ customers(first: 10) { ordersAggregate { count } } a: ordersAggregate { count } b: ordersAggregate { count } c: ordersAggregate { count } d: ordersAggregate { count } e: ordersAggregate { count } f: ordersAggregate { count } g: ordersAggregate { count } h: ordersAggregate { count } i: ordersAggregate { count } j: ordersAggregate { count } }');
    expect(costly.body.errors?.[0]?.message, costly.response.body).toMatch(/at most 200/);
    dataOf(await graphql(t.app, '{ customers(first: 10) { ordersAggregate { count } } a: ordersAggregate(limit: 5) { count } b: ordersAggregate(limit: 5) { count } }'));
  });
});

describe('<relation>Aggregate under each parent', () => {
  it('every parent of a level in one SQL statement, grouped by the foreign key; a parent without rows counts 0', async () => {
    statements.length = 0;
    const data = dataOf(
      await graphql<{ customers: { name: string; ordersAggregate: Row }[] }>(
        t.app,
        '{ customers(sort: [ID_ASC]) { name ordersAggregate(filter: { batch: { eq: 1 } }) { count sum { total } max { at } } } }',
      ),
    );
    expect(data.customers).toEqual([
      { name: 'Ann', ordersAggregate: { count: 2, sum: { total: 30 }, max: { at: '2026-12-03T10:00:00.000Z' } } },
      { name: 'Ben', ordersAggregate: { count: 2, sum: { total: 30 }, max: { at: '2026-11-30T23:59:59.000Z' } } },
      { name: 'Cy', ordersAggregate: { count: 1, sum: { total: 5 }, max: { at: null } } },
      { name: 'Dee', ordersAggregate: { count: 0, sum: { total: null }, max: { at: null } } },
    ]);
    const aggregates = statements.filter((sql) => /group by/i.test(sql));
    expect(aggregates, statements.join('\n')).toHaveLength(1);
    expect(statements, statements.join('\n')).toHaveLength(2);
  });

  it('through fragments too', async () => {
    const data = dataOf(
      await graphql<{ customers: { ordersAggregate: Row }[] }>(t.app, '{ customers(first: 1) { ordersAggregate { ...sums } } } fragment sums on OrderAggregate { count ... on OrderAggregate { sum { qty } } }'),
    );
    expect(data.customers).toEqual([{ ordersAggregate: { count: 2, sum: { qty: 3 } } }]);
  });
});

describe('access', () => {
  it('the owner rule: another principal’s rows are not counted; no read access is an error', async () => {
    const tokens: Record<string, string> = {};
    for (const subject of ['alice', 'bob']) {
      const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: subject, scopes: ['notes'], subject } });
      tokens[subject] = `Bearer ${json<{ key: string }>(response).key}`;
    }
    for (const amount of [1, 2, 3]) await create('notes', { amount }, { authorization: tokens.alice ?? '' });
    await create('notes', { amount: 100 }, { authorization: tokens.bob ?? '' });
    const query = '{ notesAggregate(groupBy: [author]) { group { author } count sum { amount } } }';
    expect(dataOf(await graphql(t.app, query, { headers: { authorization: tokens.alice ?? '' } }))).toEqual({ notesAggregate: [{ group: { author: 'alice' }, count: 3, sum: { amount: 6 } }] });
    expect(dataOf(await graphql(t.app, query))).toEqual({
      notesAggregate: [
        { group: { author: 'alice' }, count: 3, sum: { amount: 6 } },
        { group: { author: 'bob' }, count: 1, sum: { amount: 100 } },
      ],
    });
    onlyError(await graphql(t.app, query, { headers: { authorization: '' } }), 'authentication-required', ['notesAggregate']);
  });
});

describe('property: ordersAggregate agrees with an in-memory computation over random rows with nulls', () => {
  const row = fc.record({
    status: fc.option(fc.constantFrom('pending', 'paid', 'shipped')),
    total: fc.option(fc.integer({ min: -400, max: 400 }).map((n) => n / 4)),
    qty: fc.option(fc.integer({ min: -50, max: 50 })),
    paid: fc.option(fc.boolean()),
    day: fc.option(fc.date({ min: new Date('2025-01-01T00:00:00Z'), max: new Date('2026-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10))),
    note: fc.option(fc.stringMatching(/^[a-c]{0,2}$/)),
  });
  const keys: OracleKey[] = [{ field: 'status' }, { field: 'paid' }, { field: 'day', unit: 'month' }, { field: 'day', unit: 'year' }, { field: 'note' }];
  const measures: OracleMeasure[] = [
    { fn: 'sum', field: 'total' }, { fn: 'avg', field: 'qty' }, { fn: 'min', field: 'day' }, { fn: 'max', field: 'total' }, { fn: 'max', field: 'note' }, { fn: 'countDistinct', field: 'paid' },
  ];
  let batch = 1000;

  it('groups, counts and functions, through GraphQL', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { maxLength: 15 }),
        fc.uniqueArray(fc.constantFrom(...keys), { maxLength: 2, selector: (k) => k.field }),
        fc.uniqueArray(fc.constantFrom(...measures), { maxLength: 4, selector: (m) => `${m.fn}.${m.field}` }),
        async (generated, groupBy, asked) => {
          batch += 1;
          const rows: Row[] = [];
          for (const values of generated) {
            const stored = { batch, ...values };
            await create('orders', stored);
            rows.push(stored);
          }
          const name = (k: OracleKey): string => (k.unit === undefined ? k.field : `${k.field}_${k.unit}`);
          const functions = [...new Set(asked.map((m) => m.fn))].map((fn) => `${fn} { ${asked.filter((m) => m.fn === fn).map((m) => m.field).join(' ')} }`);
          const group = groupBy.length === 0 ? '' : `group { ${groupBy.map(name).join(' ')} }`;
          const args = `filter: { batch: { eq: ${batch} } }${groupBy.length === 0 ? '' : `, groupBy: [${groupBy.map(name).join(', ')}]`}`;
          const data = dataOf(await graphql<{ ordersAggregate: Row[] }>(t.app, `{ ordersAggregate(${args}) { ${group} count ${functions.join(' ')} } }`));
          const expected = aggregateInMemory(rows, groupBy, asked);
          expect(data.ordersAggregate.map((g) => g.count)).toEqual(expected.map((g) => g.count));
          if (groupBy.length > 0) expect(data.ordersAggregate.map((g) => g.group)).toEqual(expected.map((g) => Object.fromEntries(groupBy.map((k) => [name(k), g.group[term(k)]]))));
          data.ordersAggregate.forEach((g, i) => {
            for (const m of asked) {
              const got = (g[m.fn] as Row)[m.field];
              const want = expected[i]?.values[m.fn]?.[m.field];
              if (typeof want === 'number' && (m.fn === 'sum' || m.fn === 'avg')) expect(got as number).toBeCloseTo(want, 6);
              else expect(got, `${m.fn}.${m.field}`).toEqual(want);
            }
          });
        },
      ),
      { numRuns: 20 },
    );
  });
});
