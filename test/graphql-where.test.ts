import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, graphql, type GraphqlReply } from './helpers/graphql-request.js';
import { filterSchema } from './helpers/filter-schema.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * GraphQL `where:` on list, connection and aggregate fields, root and nested: every operator per
 * type, _and/_or/_not, belongsTo and hasMany paths, the limits of filter expressions, their access
 * rules, and one SQL statement per level for nested lists with a where.
 */

type Row = Record<string, unknown>;
const SECRET = 'a-test-secret-of-at-least-32-bytes!!';

async function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
}

let t: TestApp;
const statements: string[] = [];

const post = async (resource: string, body: Row, authorization?: string): Promise<Row> => {
  const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: body, ...(authorization === undefined ? {} : { headers: { authorization } }) });
  expect(response.statusCode, response.body).toBe(201);
  return json<Row>(response);
};

/** The names of the users a where selects, by id. */
async function users(where: unknown, headers?: Record<string, string>): Promise<unknown[]> {
  const reply = await graphql<{ users: Row[] }>(t.app, 'query ($w: UserWhere) { users(where: $w, sort: [ID_ASC]) { name } }', { variables: { w: where }, ...(headers === undefined ? {} : { headers }) });
  return dataOf(reply).users.map((u) => u.name);
}

/** The one error of a reply: its code and the parameter it names. */
function refusal(reply: GraphqlReply<unknown>): { code: string; parameter: string | undefined; detail: string | undefined } {
  expect(reply.status, reply.response.body).toBeLessThan(500);
  const error = reply.body.errors?.[0];
  if (error === undefined) throw new Error(`no error: ${reply.response.body}`);
  return { code: error.extensions.code, parameter: error.extensions.errors?.[0]?.parameter, detail: error.extensions.errors?.[0]?.detail };
}

beforeAll(async () => {
  t = await startTestApp({ schema: filterSchema(), jwt: { secret: SECRET }, onSqlStatement: (sql) => (sql.includes('"_restgraph_') ? undefined : statements.push(sql)) });
  const alice = await post('users', { name: 'Alice', email: 'alice@example.com', age: 31, score: 4.5, active: true, born: '1993-04-01', seen: '2024-05-01T10:00:00Z', role: 'admin', meta: { a: 1 } });
  const bob = await post('users', { name: 'Bob', age: 17, active: false, role: 'reader' });
  const elan = await post('users', { name: 'ÉLAN vital', email: 'elan@example.com', age: 45, role: 'editor', born: '1979-12-31' });
  await post('users', { name: '100%_sure' });
  await post('posts', { title: 'SQLite indexes', views: 120, published: true, authorId: alice.id });
  await post('posts', { title: 'Draft on sqlite', views: 3, published: false, authorId: alice.id });
  await post('posts', { title: 'Élan', views: 50, published: true, authorId: elan.id });
  await post('posts', { title: 'Orphan', views: 7, published: true });
  await post('notes', { text: 'bob note', userId: bob.id }, `Bearer ${await token({ sub: 'bob', scope: 'x' })}`);
  await post('notes', { text: 'eve note', userId: alice.id }, `Bearer ${await token({ sub: 'eve', scope: 'x' })}`);
  await post('secrets', { code: 's1', userId: alice.id });
});
afterAll(async () => t.close());

describe('where: on list fields', () => {
  it('takes every operator of every field type', async () => {
    expect(await users({ name: { eq: 'Bob' } })).toEqual(['Bob']);
    expect(await users({ name: { ne: 'Bob' } })).toEqual(['Alice', 'ÉLAN vital', '100%_sure']);
    expect(await users({ name: { contains: 'élan' } })).toEqual(['ÉLAN vital']);
    expect(await users({ name: { contains: '%_' } })).toEqual(['100%_sure']);
    expect(await users({ email: { notContains: 'ALICE' } })).toEqual(['ÉLAN vital']);
    expect(await users({ name: { startsWith: 'A' } })).toEqual(['Alice']);
    expect(await users({ name: { startsWith: 'a' } })).toEqual([]);
    expect(await users({ name: { in: ['Bob', 'Alice', 'nobody'] } })).toEqual(['Alice', 'Bob']);
    expect(await users({ name: { in: [] } })).toEqual([]);
    expect(await users({ name: { gte: 'B', lt: 'C' } })).toEqual(['Bob']);
    expect(await users({ age: { gt: 17 } })).toEqual(['Alice', 'ÉLAN vital']);
    expect(await users({ age: { lte: 31, gte: 17 } })).toEqual(['Alice', 'Bob']);
    expect(await users({ age: { ne: 31 } })).toEqual(['Bob', 'ÉLAN vital', '100%_sure']);
    expect(await users({ score: { lt: 5 } })).toEqual(['Alice']);
    expect(await users({ active: { eq: false } })).toEqual(['Bob']);
    expect(await users({ active: { ne: true } })).toEqual(['Bob', 'ÉLAN vital', '100%_sure']);
    expect(await users({ born: { lt: '1990-01-01' } })).toEqual(['ÉLAN vital']);
    expect(await users({ seen: { gte: '2024-05-01T11:00:00+01:00' } })).toEqual(['Alice']);
    expect(await users({ seen: { gt: '2024-05-01' } })).toEqual(['Alice']);
    expect(await users({ role: { in: ['admin', 'editor'] } })).toEqual(['Alice', 'ÉLAN vital']);
    expect(await users({ role: { ne: 'admin' } })).toEqual(['Bob', 'ÉLAN vital', '100%_sure']);
    expect(await users({ meta: { isNull: false } })).toEqual(['Alice']);
    expect(await users({ email: { isNull: true } })).toEqual(['Bob', '100%_sure']);
    expect(await users({ email: { eq: null } })).toEqual(['Bob', '100%_sure']);
    expect(await users({ email: { ne: null } })).toEqual(['Alice', 'ÉLAN vital']);
    expect(await users({ id: { in: ['1', '3'] } })).toEqual(['Alice', 'ÉLAN vital']);
  });

  it('combines with _and, _or, _not; {} matches every row, _or: [] none', async () => {
    expect(await users({})).toHaveLength(4);
    expect(await users({ _and: [] })).toHaveLength(4);
    expect(await users({ _or: [] })).toEqual([]);
    expect(await users({ _not: {} })).toEqual([]);
    expect(await users({ _or: [{ age: { lt: 18 } }, { role: { eq: 'editor' } }] })).toEqual(['Bob', 'ÉLAN vital']);
    expect(await users({ _or: [{ age: { lt: 18 } }, {}] })).toHaveLength(4);
    expect(await users({ _and: [{ age: { gt: 10 } }, { _not: { name: { eq: 'Bob' } } }] })).toEqual(['Alice', 'ÉLAN vital']);
    // Two-valued: _not of a comparison matches the rows with the field empty too.
    expect(await users({ _not: { age: { gt: 20 } } })).toEqual(['Bob', '100%_sure']);
    // Literals in the document, not only variables.
    const reply = await graphql<{ users: Row[] }>(t.app, '{ users(where: { _or: [{ name: { contains: "ALI" } }, { age: { gt: 40 } }] }, sort: [NAME_DESC]) { name } }');
    expect(dataOf(reply).users.map((u) => u.name)).toEqual(['ÉLAN vital', 'Alice']);
  });

  it('follows belongsTo and hasMany paths', async () => {
    const titles = async (where: unknown): Promise<unknown[]> =>
      dataOf(await graphql<{ posts: Row[] }>(t.app, 'query ($w: PostWhere) { posts(where: $w, sort: [ID_ASC]) { title } }', { variables: { w: where } })).posts.map((p) => p.title);
    expect(await titles({ author: { name: { startsWith: 'A' } } })).toEqual(['SQLite indexes', 'Draft on sqlite']);
    expect(await titles({ author: {} })).toEqual(['SQLite indexes', 'Draft on sqlite', 'Élan']);
    expect(await titles({ _not: { author: {} } })).toEqual(['Orphan']);
    expect(await users({ posts: { _some: { title: { contains: 'SQLITE' }, published: { eq: false } } } })).toEqual(['Alice']);
    expect(await users({ posts: { _none: {} } })).toEqual(['Bob', '100%_sure']);
    expect(await users({ posts: { _some: {}, _none: { views: { gt: 100 } } } })).toEqual(['ÉLAN vital']);
    expect(await users({ posts: { _some: { author: { posts: { _some: { title: { eq: 'Élan' } } } } } } })).toEqual(['ÉLAN vital']);
  });

  it('works with filter:, sort, first/after, connections with totalCount, and aggregates', async () => {
    const page = dataOf(
      await graphql<{ usersConnection: { nodes: Row[]; totalCount: number; pageInfo: { endCursor: string } } }>(
        t.app,
        '{ usersConnection(where: { _or: [{ age: { gte: 17 } }, { name: { contains: "%" } }] }, filter: { name: { ne: "Bob" } }, sort: [NAME_ASC], first: 1) { nodes { name } totalCount pageInfo { endCursor } } }',
      ),
    ).usersConnection;
    expect(page.nodes.map((u) => u.name)).toEqual(['100%_sure']);
    expect(page.totalCount).toBe(3);
    const next = dataOf(
      await graphql<{ usersConnection: { nodes: Row[] } }>(
        t.app,
        `{ usersConnection(where: { _or: [{ age: { gte: 17 } }, { name: { contains: "%" } }] }, filter: { name: { ne: "Bob" } }, sort: [NAME_ASC], first: 5, after: "${page.pageInfo.endCursor}") { nodes { name } } }`,
      ),
    ).usersConnection;
    expect(next.nodes.map((u) => u.name)).toEqual(['Alice', 'ÉLAN vital']);
    const aggregate = dataOf(
      await graphql<{ postsAggregate: Row[]; users: { name: string; postsAggregate: Row }[] }>(
        t.app,
        '{ postsAggregate(where: { author: { role: { eq: admin } } }) { count sum { views } } users(sort: [ID_ASC], first: 3) { name postsAggregate(where: { _or: [{ views: { gt: 100 } }, { published: { eq: false } }] }) { count } } }',
      ),
    );
    expect(aggregate.postsAggregate).toEqual([{ count: 2, sum: { views: 123 } }]);
    expect(aggregate.users.map((u) => [u.name, u.postsAggregate.count])).toEqual([['Alice', 2], ['Bob', 0], ['ÉLAN vital', 0]]);
  });

  it('on nested relation lists: one statement per level, not one per parent', async () => {
    statements.length = 0;
    const data = dataOf(
      await graphql<{ users: { name: string; posts: Row[]; postsConnection: { totalCount: number } }[] }>(
        t.app,
        '{ users(sort: [ID_ASC]) { name posts(where: { _or: [{ title: { contains: "sqlite" } }, { author: { age: { gt: 40 } } }] }, sort: [TITLE_ASC]) { title } postsConnection(where: { published: { eq: true } }) { totalCount } } }',
      ),
    );
    expect(data.users.map((u) => [u.name, u.posts.map((p) => p.title), u.postsConnection.totalCount])).toEqual([
      ['Alice', ['Draft on sqlite', 'SQLite indexes'], 1],
      ['Bob', [], 0],
      ['ÉLAN vital', ['Élan'], 1],
      ['100%_sure', [], 0],
    ]);
    // The users, then one statement for every user's posts, one for every user's connection page, one for its counts.
    expect(statements.filter((sql) => /^\s*select/i.test(sql)), statements.join('\n')).toHaveLength(4);
  });
});

describe('where: refusals', () => {
  it('a bad value or operator is invalid-query naming the input path', async () => {
    const ask = (query: string, variables?: Record<string, unknown>) => graphql(t.app, query, variables === undefined ? {} : { variables });
    expect(refusal(await ask('query ($w: PostWhere) { posts(where: $w) { id } }', { w: { author: { born: { lt: '2024-02-30' } } } }))).toEqual({
      code: 'invalid-query',
      parameter: 'where.author.born.lt',
      detail: '"2024-02-30" is not a date (YYYY-MM-DD)',
    });
    expect(refusal(await ask('{ users(where: { _or: [{ age: { lt: 1 } }, { seen: { eq: "yesterday" } }] }) { id } }'))).toMatchObject({ code: 'invalid-query', parameter: 'where._or.1.seen.eq' });
    expect(refusal(await ask('{ users(where: { age: { lt: null } }) { id } }'))).toMatchObject({ code: 'invalid-query', parameter: 'where.age.lt' });
    expect(refusal(await ask('{ users(where: { name: { contains: "a\\u0000" } }) { id } }'))).toMatchObject({ code: 'invalid-query', parameter: 'where.name.contains' });
    // An operator the type does not have is not in its input type at all.
    expect(refusal(await ask('{ users(where: { age: { contains: "1" } }) { id } }')).code).toBe('graphql-validation');
  });

  it('is bounded: nesting, conditions, hops, in values; 10,000 _or members answer an error, not a 5xx', async () => {
    let deep: Row = { age: { eq: 1 } };
    for (let i = 0; i < 9; i++) deep = { _not: deep };
    expect(refusal(await graphql(t.app, 'query ($w: UserWhere) { users(where: $w) { id } }', { variables: { w: deep } }))).toMatchObject({ code: 'invalid-query', parameter: `where${'._not'.repeat(9)}` });
    const wide = { _or: Array.from({ length: 10_000 }, (_, i) => ({ age: { eq: i } })) };
    const many = refusal(await graphql(t.app, 'query ($w: UserWhere) { users(where: $w) { id } }', { variables: { w: wide } }));
    expect(many).toMatchObject({ code: 'invalid-query', parameter: 'where._or.100.age.eq' });
    const hops = { posts: { _some: { author: { posts: { _some: { author: { name: { eq: 'x' } } } } } } } };
    expect(refusal(await graphql(t.app, 'query ($w: UserWhere) { users(where: $w) { id } }', { variables: { w: hops } }))).toMatchObject({
      code: 'invalid-query',
      parameter: 'where.posts._some.author.posts._some.author',
    });
    const values = { age: { in: Array.from({ length: 101 }, (_, i) => i) } };
    expect(refusal(await graphql(t.app, 'query ($w: UserWhere) { users(where: $w) { id } }', { variables: { w: values } }))).toMatchObject({ code: 'invalid-query', parameter: 'where.age.in' });
    // Nested far deeper: refused by the document's and the variables' own nesting limits, before any work.
    let deeper: Row = {};
    for (let i = 0; i < 200; i++) deeper = { _not: deeper };
    expect(refusal(await graphql(t.app, 'query ($w: UserWhere) { users(where: $w) { id } }', { variables: { w: deeper } })).code).toBe('bad-request');
    const literal = `{ users(where: ${'{ _not: '.repeat(200)}{}${' }'.repeat(200)}) { id } }`;
    expect(refusal(await graphql(t.app, literal)).code).toBe('query-too-complex');
    const nested = await graphql(t.app, 'query ($w: PostWhere) { users { posts(where: $w) { id } } }', { variables: { w: { _not: { _not: { _not: { _not: { _not: { _not: { _not: { _not: { _not: {} } } } } } } } } } } });
    expect(refusal(nested).code).toBe('invalid-query');
  });

  it('access: a path into a resource the caller may not read is refused; owner rules hide related rows', async () => {
    const bob = { authorization: `Bearer ${await token({ sub: 'bob', scope: 'x' })}` };
    const refused = await graphql(t.app, '{ users(where: { secrets: { _some: { code: { eq: "s1" } } } }) { id } }', { headers: bob });
    expect(refusal(refused).code).toBe('forbidden');
    const nested = await graphql(t.app, '{ posts { author { id } } users { posts(where: { author: { secrets: { _some: {} } } }) { id } } }', { headers: bob });
    expect(refusal(nested).code).toBe('forbidden');
    const anonymous = await graphql(t.app, '{ users(where: { notes: { _some: {} } }) { id } }', { headers: { authorization: '' } });
    expect(refusal(anonymous).code).toBe('authentication-required');
    expect(await users({ notes: { _some: { text: { contains: 'note' } } } }, bob)).toEqual(['Bob']);
    expect(await users({ notes: { _none: {} } }, bob)).toEqual(['Alice', 'ÉLAN vital', '100%_sure']);
    // Nested: the owner rule applies in the batched loader too.
    const perUser = dataOf(await graphql<{ users: { name: string; postsConnection: { totalCount: number } }[] }>(t.app, '{ users(sort: [ID_ASC]) { name postsConnection(where: { author: { notes: { _some: {} } } }) { totalCount } } }', { headers: bob }));
    expect(perUser.users.map((u) => u.postsConnection.totalCount)).toEqual([0, 0, 0, 0]);
    expect(await users({ secrets: { _some: { code: { eq: 's1' } } } })).toEqual(['Alice']);
  });

  it('its input types do not take the names of the filter: inputs', async () => {
    const names = dataOf(await graphql<{ __schema: { types: { name: string }[] } }>(t.app, '{ __schema { types { name } } }')).__schema.types.map((x) => x.name);
    for (const name of ['UserWhere', 'PostWhere', 'PostRelationWhere', 'StringWhere', 'IDWhere', 'SafeIntWhere', 'DateWhere', 'DateTimeWhere', 'UserRoleWhere', 'JSONWhere', 'UserFilter', 'StringFilter']) {
      expect(names, name).toContain(name);
    }
  });
});
