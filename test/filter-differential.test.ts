import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchesFilter, compareCodePoints, type RelatedRecords } from '../src/core/filter-expression/filter-evaluator.js';
import { parseFilterExpression } from '../src/core/filter-expression/filter-parser.js';
import { resourceNamed, type ResourceModel } from '../src/schema/schema-model.js';
import type { FilterCondition } from '../src/store/list-spec.js';
import { dataOf, graphql } from './helpers/graphql-request.js';
import { camel } from '../src/graphql/schema-parts.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { filterSchema } from './helpers/filter-schema.js';

/**
 * The two backends of filter expressions held to the same answers: random expressions (and, or,
 * not, every operator on every field type, belongsTo and hasMany paths) over random rows (nulls,
 * non-ASCII text, LIKE metacharacters) give the same rows in the same order through REST `filter=`
 * (SQL on the suite's database), through GraphQL `where:` (the same expression's tree written as
 * a where input: {@link whereOf}) and through the in-memory evaluator; and the aggregate of the
 * same filter (`/<resource>/aggregate?groupBy=…&count=true&filter=…`) counts exactly those rows.
 */

type Row = Record<string, unknown>;
const schema = filterSchema();
const users = resourceNamed(schema, 'users');
const posts = resourceNamed(schema, 'posts');

const ALPHABET = ['a', 'A', 'é', 'É', 'ß', 'Σ', 'σ', 'ς', 'İ', 'i', '%', '_', '\\', "'", 'x', ' ', '𝔸', '\uFF21'];
const text = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 4 }).map((chars) => chars.join(''));
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arb, { nil: null, freq: 4 });
const DATES = ['1999-12-31', '2000-01-01', '2024-02-29', '2024-03-01'];
const DATETIMES = ['2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.001Z', '2024-06-30T12:30:00.000Z', '1970-01-01T00:00:00.000Z'];
const ROLES = ['admin', 'editor', 'reader'];
const NUMBERS = [-1.5, 0, 2.25, 3, 1e6];

const userRow = fc.record({
  name: maybe(text),
  email: maybe(text),
  age: maybe(fc.integer({ min: -3, max: 3 })),
  score: maybe(fc.constantFrom(...NUMBERS)),
  active: maybe(fc.boolean()),
  born: maybe(fc.constantFrom(...DATES)),
  seen: maybe(fc.constantFrom(...DATETIMES)),
  role: maybe(fc.constantFrom(...ROLES)),
  meta: maybe(fc.constantFrom({ a: 1 }, [1, 2], 'x')),
});
const postRow = (userCount: number): fc.Arbitrary<Row> =>
  fc.record({ title: maybe(text), views: maybe(fc.integer({ min: -2, max: 2 })), published: maybe(fc.boolean()), authorId: maybe(fc.integer({ min: 1, max: userCount })) });

/** A parsed expression's tree as a GraphQL where input: the same conditions, written the other way. */
function whereOf(condition: FilterCondition): Row {
  const inner = condition.value as FilterCondition;
  switch (condition.op) {
    case 'any':
      return { _or: (condition.value as FilterCondition[]).map(whereOf) };
    case 'all':
      return { _and: (condition.value as FilterCondition[]).map(whereOf) };
    case 'not':
      return { _not: whereOf(inner) };
    case 'related':
      return { [condition.field]: whereOf(inner) };
    case 'some':
    case 'noneOf':
      return { [condition.field]: { [condition.op === 'some' ? '_some' : '_none']: whereOf(inner) } };
    case 'containsIgnoringCase':
      return { [condition.field]: { contains: condition.value } };
    default:
      return { [condition.field]: { [condition.op]: condition.value } };
  }
}

function literal(value: unknown): string {
  if (typeof value === 'string') return `'${value.replace(/[\\']/g, (c) => `\\${c}`)}'`;
  return String(value);
}

/** A comparison on one field of users or posts, as text. */
function comparison(resource: 'users' | 'posts'): fc.Arbitrary<string> {
  const ordered = (name: string, values: fc.Arbitrary<unknown>): fc.Arbitrary<string> =>
    fc.tuple(fc.constantFrom('=', '!=', '<', '<=', '>', '>='), values).map(([op, v]) => `${name} ${op} ${literal(v)}`);
  const textual = (name: string): fc.Arbitrary<string> =>
    fc.oneof(ordered(name, text), fc.tuple(fc.constantFrom('~', '!~', '^='), text).map(([op, v]) => `${name} ${op} ${literal(v)}`));
  const nulls = (name: string): fc.Arbitrary<string> => fc.constantFrom(`${name} is null`, `${name} is not null`, `${name} = null`, `${name} != null`);
  const inList = (name: string, values: fc.Arbitrary<unknown>): fc.Arbitrary<string> => fc.array(values, { minLength: 1, maxLength: 3 }).map((vs) => `${name} in (${vs.map(literal).join(', ')})`);
  if (resource === 'posts') {
    return fc.oneof(textual('title'), ordered('views', fc.integer({ min: -2, max: 2 })), fc.constantFrom('published = true', 'published != false', 'published = false'), nulls('title'), nulls('published'), inList('views', fc.integer({ min: -2, max: 2 })));
  }
  return fc.oneof(
    textual('name'),
    textual('email'),
    ordered('age', fc.integer({ min: -3, max: 3 })),
    ordered('score', fc.constantFrom(...NUMBERS)),
    ordered('born', fc.constantFrom(...DATES)),
    ordered('seen', fc.constantFrom(...DATETIMES, '2024-01-01', '2024-01-01T01:00:00+01:00')),
    fc.tuple(fc.constantFrom('=', '!='), fc.constantFrom(...ROLES)).map(([op, v]) => `role ${op} '${v}'`),
    fc.constantFrom('active = true', 'active != true', 'active = false'),
    inList('role', fc.constantFrom(...ROLES)),
    inList('age', fc.integer({ min: -3, max: 3 })),
    fc.constantFrom('name', 'email', 'age', 'active', 'born', 'seen', 'role', 'meta').chain(nulls),
  );
}

/** An expression over `resource`, at most `depth` combinators deep, paths included. */
function expression(resource: 'users' | 'posts', depth: number): fc.Arbitrary<string> {
  const leaf = resource === 'users'
    ? fc.oneof({ weight: 4, arbitrary: comparison('users') }, { weight: 1, arbitrary: fc.tuple(fc.constantFrom('any', 'none'), depth > 0 ? expression('posts', 0) : comparison('posts')).map(([q, e]) => `posts.${q}(${e})`) })
    : fc.oneof({ weight: 4, arbitrary: comparison('posts') }, { weight: 1, arbitrary: comparison('users').map((c) => `author.${c}`) });
  if (depth === 0) return leaf;
  const sub = expression(resource, depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    { weight: 1, arbitrary: sub.map((e) => `not (${e})`) },
    { weight: 2, arbitrary: fc.tuple(sub, fc.constantFrom('and', 'or', 'AND', 'Or'), sub).map(([a, op, b]) => `(${a}) ${op} (${b})`) },
  );
}

describe('filter= over SQL and the in-memory evaluator find the same rows in the same order, and aggregates count them', () => {
  let t: TestApp;
  let allUsers: Row[];
  let allPosts: Row[];
  let related: RelatedRecords;

  beforeAll(async () => {
    t = await startTestApp({ schema });
    const userRows = fc.sample(userRow, { numRuns: 30, seed: 34 });
    for (const row of userRows) {
      const response = await t.app.inject({ method: 'POST', url: '/users', payload: row });
      if (response.statusCode !== 201) throw new Error(response.body);
    }
    for (const row of fc.sample(postRow(userRows.length), { numRuns: 40, seed: 35 })) {
      const response = await t.app.inject({ method: 'POST', url: '/posts', payload: row });
      if (response.statusCode !== 201) throw new Error(response.body);
    }
    allUsers = json<Row[]>(await t.app.inject({ method: 'GET', url: '/users?limit=1000' }));
    allPosts = json<Row[]>(await t.app.inject({ method: 'GET', url: '/posts?limit=1000' }));
    related = {
      schema,
      rowsOf: (_resource, relation, record) =>
        relation.kind === 'belongsTo' ? allUsers.filter((u) => u.id === record[relation.foreignKey]) : allPosts.filter((p) => p[relation.foreignKey] === record.id),
    };
  });
  afterAll(async () => t.close());

  /** Rows sorted as `sort=<field>` sorts them: nulls first, text by code point, then id. */
  function sorted(rows: Row[], field: string): Row[] {
    return [...rows].sort((a, b) => {
      const [x, y] = [a[field], b[field]];
      if (x !== y) {
        if (x === null || x === undefined) return -1;
        if (y === null || y === undefined) return 1;
        const d = typeof x === 'number' && typeof y === 'number' ? x - y : compareCodePoints(x as string, y as string);
        if (d !== 0) return d;
      }
      return (a.id as number) - (b.id as number);
    });
  }

  async function check(resource: ResourceModel, rows: Row[], text: string, sort: string): Promise<void> {
    const response = await t.app.inject({ method: 'GET', url: `/${resource.name}?filter=${encodeURIComponent(text)}&sort=${sort}&limit=1000` });
    expect(response.statusCode, `${text}: ${response.body}`).toBe(200);
    const condition = parseFilterExpression(text, resource, schema.resources);
    const expected = sorted(rows.filter((r) => matchesFilter(condition, r, resource, related)), sort).map((r) => r.id);
    expect(json<Row[]>(response).map((r) => r.id), text).toEqual(expected);
    const list = camel(resource.name);
    const reply = await graphql<Record<string, Row[]>>(t.app, `query ($where: ${resource.typeName}Where) { ${list}(where: $where, sort: [${sort.toUpperCase()}_ASC], first: 1000) { id } }`, {
      variables: { where: whereOf(condition) },
    });
    expect(dataOf(reply)[list]?.map((r) => Number(r.id)), `where: ${text}`).toEqual(expected);
    // The aggregate of the same filter counts those rows, per group of a field of every row's.
    const groupField = resource === users ? 'active' : 'published';
    const aggregate = await t.app.inject({ method: 'GET', url: `/${resource.name}/aggregate?groupBy=${groupField}&count=true&filter=${encodeURIComponent(text)}` });
    expect(aggregate.statusCode, `${text}: ${aggregate.body}`).toBe(200);
    const counts = new Map<unknown, number>();
    for (const row of rows.filter((r) => matchesFilter(condition, r, resource, related))) counts.set(row[groupField] ?? null, (counts.get(row[groupField] ?? null) ?? 0) + 1);
    const groups = [null, false, true].filter((v) => counts.has(v)).map((v) => ({ group: { [groupField]: v }, count: counts.get(v) }));
    expect(json<Row[]>(aggregate), `aggregate: ${text}`).toEqual(groups);
  }

  it('on users (every field type, posts.any / posts.none)', async () => {
    expect(allUsers.length).toBe(30);
    await fc.assert(fc.asyncProperty(expression('users', 2), fc.constantFrom('name', 'age', 'email'), (text, sort) => check(users, allUsers, text, sort)), { numRuns: 150, seed: 3401 });
  }, 180_000);

  it('on posts (author paths)', async () => {
    await fc.assert(fc.asyncProperty(expression('posts', 2), fc.constantFrom('title', 'views'), (text, sort) => check(posts, allPosts, text, sort)), { numRuns: 100, seed: 3402 });
  }, 180_000);
});
