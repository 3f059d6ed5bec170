import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, graphql, onlyError } from './helpers/graphql-request.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * What the generated GraphQL API does on the example schema, through POST /graphql: the seed's
 * example query, one identity with REST (number id ↔ string ID), Relay paging, every filter
 * operator (checked against the REST filter of the same meaning), mutations and their errors,
 * and batch loading (a bounded number of SQL statements whatever the number of rows).
 */

type Row = Record<string, unknown> & { id: number };
type Node = Record<string, unknown> & { id: string };

interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

interface Connection {
  edges: { cursor: string; node: { id: string } }[];
  nodes: { id: string }[];
  pageInfo: PageInfo;
  totalCount: number;
}

interface PageArgs {
  first?: number;
  after?: string;
  last?: number;
  before?: string;
}

function must<T>(value: T | undefined | null, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`missing ${what}`);
  return value;
}

async function rest(t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return t.app.inject({ method, url, ...(payload === undefined ? {} : { payload }) });
}

async function create(t: TestApp, resource: string, body: Record<string, unknown>): Promise<Row> {
  const response = await rest(t, 'POST', `/${resource}`, body);
  if (response.statusCode !== 201) throw new Error(`seeding ${resource} failed: ${String(response.statusCode)} ${response.body}`);
  return json<Row>(response);
}

/** The rows of a REST list (a 200 with a JSON array). */
async function restRows(t: TestApp, url: string): Promise<Row[]> {
  const response = await rest(t, 'GET', url);
  expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
  return json<Row[]>(response);
}

const restIds = (rows: readonly { id: number }[]): string[] => rows.map((r) => String(r.id));
const nodeIds = (nodes: readonly { id: string }[]): string[] => nodes.map((n) => n.id);

/** Everything stored, as REST shows it: a rejected mutation must leave this unchanged. */
async function snapshot(t: TestApp): Promise<string> {
  const parts: string[] = [];
  for (const resource of ['users', 'posts', 'products', 'orders']) parts.push((await rest(t, 'GET', `/${resource}?limit=1000`)).body);
  return parts.join('\n');
}

/** A GraphQL row as REST shows it: ID and reference fields (strings) become numbers. */
function asRest(node: Record<string, unknown>, references: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = { ...node };
  for (const name of ['id', ...references]) {
    const value = out[name];
    if (typeof value === 'string') out[name] = Number(value);
  }
  return out;
}

/** GraphQL sort enum values (NAME_DESC) → the REST sort parameter (-name). */
function restSort(values: readonly string[]): string {
  return values
    .map((value) => {
      const match = must(/^([A-Z_]+)_(ASC|DESC)$/.exec(value), value);
      const field = must(match[1])
        .toLowerCase()
        .replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
      return match[2] === 'DESC' ? `-${field}` : field;
    })
    .join(',');
}

/** The edges, nodes and cursors of a connection agree with each other. */
function expectConsistent(connection: Connection): void {
  expect(nodeIds(connection.nodes)).toEqual(connection.edges.map((e) => e.node.id));
  expect(connection.pageInfo.startCursor).toBe(connection.edges[0]?.cursor ?? null);
  expect(connection.pageInfo.endCursor).toBe(connection.edges[connection.edges.length - 1]?.cursor ?? null);
  for (const edge of connection.edges) expect(edge.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
}

/**
 * Walks a connection forward with first/endCursor to its end; checks every page (full pages while
 * hasNextPage, hasPreviousPage false on the first page) and returns the ids in order.
 */
async function walkForward(fetch: (args: PageArgs) => Promise<Connection>, size: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after: string | undefined;
  for (let pages = 1; pages < 200; pages++) {
    const page = await fetch(after === undefined ? { first: size } : { first: size, after });
    expectConsistent(page);
    if (after === undefined) expect(page.pageInfo.hasPreviousPage).toBe(false);
    ids.push(...nodeIds(page.nodes));
    if (!page.pageInfo.hasNextPage) {
      expect(page.edges.length).toBeLessThanOrEqual(size);
      return { ids, pages };
    }
    expect(page.edges.length).toBe(size);
    after = must(page.pageInfo.endCursor, 'endCursor');
  }
  throw new Error('forward paging does not end');
}

/** Walks a connection backward with last/startCursor to its start; returns the ids in list order. */
async function walkBackward(fetch: (args: PageArgs) => Promise<Connection>, size: number): Promise<{ ids: string[]; pages: number }> {
  let ids: string[] = [];
  let before: string | undefined;
  for (let pages = 1; pages < 200; pages++) {
    const page = await fetch(before === undefined ? { last: size } : { last: size, before });
    expectConsistent(page);
    if (before === undefined) expect(page.pageInfo.hasNextPage).toBe(false);
    ids = [...nodeIds(page.nodes), ...ids];
    if (!page.pageInfo.hasPreviousPage) {
      expect(page.edges.length).toBeLessThanOrEqual(size);
      return { ids, pages };
    }
    expect(page.edges.length).toBe(size);
    before = must(page.pageInfo.startCursor, 'startCursor');
  }
  throw new Error('backward paging does not end');
}

const CONNECTION_FIELDS = 'edges { cursor node { id } } nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount';

describe('the seed example: { user(id: "1") { name posts(last: 2) { title } } }', () => {
  let t: TestApp;
  const query = '{ user(id: "1") { name posts(last: 2) { title } } }';
  const expected = JSON.stringify({ data: { user: { name: 'Alice', posts: [{ title: 'Beta' }, { title: 'Omega' }] } } });

  beforeAll(async () => {
    t = await startTestApp();
    await create(t, 'users', { name: 'Alice', email: 'alice@example.com', bio: 'Writes a lot' });
    await create(t, 'users', { name: 'Bob' });
    // Titles out of alphabetical order, another user's posts in between: "last 2" means by id.
    for (const [title, userId] of [['Zeta', 1], ['Alpha', 1], ['Bob first', 2], ['Mid', 1], ['Beta', 1], ['Bob second', 2], ['Omega', 1]] as const) {
      await create(t, 'posts', { title, userId, body: `${title} body`, published: true, tags: ['x'] });
    }
    await create(t, 'posts', { title: 'Bob last', userId: 2 });
  });
  afterAll(async () => t.close());

  it('POST returns exactly the fields asked for, the last two posts in id order, and nothing else', async () => {
    const reply = await graphql(t.app, query);
    expect(reply.status).toBe(200);
    expect(reply.response.body).toBe(expected);
  });

  it('GET /graphql?query= returns the same body', async () => {
    const response = await t.app.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent(query)}`, headers: { accept: 'application/json' } });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(expected);
  });

  it('the posts are the ones REST lists last for that user', async () => {
    const posts = await restRows(t, '/users/1/posts?limit=1000');
    expect(posts.slice(-2).map((p) => p.title)).toEqual(['Beta', 'Omega']);
  });
});

describe('one object, two APIs: the REST id (number) and the GraphQL ID (string)', () => {
  let t: TestApp;
  const USER_FIELDS = 'id name email bio createdAt updatedAt';
  const POST_FIELDS = 'id title body userId published publishedAt tags createdAt updatedAt';

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  async function gqlUser(id: string): Promise<Node | null> {
    return dataOf(await graphql<{ user: Node | null }>(t.app, `query($id: ID!) { user(id: $id) { ${USER_FIELDS} } }`, { variables: { id } })).user;
  }

  it('a row created through REST is the GraphQL node with the same id as a string, field for field', async () => {
    const row = await create(t, 'users', { name: 'Rest Made', email: 'rest@example.com', bio: 'from REST' });
    const node = must(await gqlUser(String(row.id)));
    expect(node.id).toBe(String(row.id));
    expect(asRest(node)).toEqual(row);
  });

  it('a row created through GraphQL is at /users/{id} and /v1/users/{id}, field for field', async () => {
    const created = dataOf(
      await graphql<{ createUser: Node }>(t.app, `mutation($input: UserCreateInput!) { createUser(input: $input) { ${USER_FIELDS} } }`, {
        variables: { input: { name: 'Graph Made', email: 'graph@example.com' } },
      }),
    ).createUser;
    expect(created.id).toMatch(/^[1-9]\d*$/);
    for (const url of [`/users/${created.id}`, `/v1/users/${created.id}`]) {
      const response = await rest(t, 'GET', url);
      expect(response.statusCode).toBe(200);
      expect(json(response)).toEqual(asRest(created));
    }
  });

  it('references agree too: a post’s userId is the user’s REST id, and post.user is that user', async () => {
    const user = await create(t, 'users', { name: 'Author' });
    const post = await create(t, 'posts', { title: 'Linked', userId: user.id, tags: { k: [1, 'two'] }, publishedAt: '2024-05-01T10:00:00.000Z' });
    const node = dataOf(
      await graphql<{ post: Node & { user: Node } }>(t.app, `query($id: ID!) { post(id: $id) { ${POST_FIELDS} user { id name } } }`, { variables: { id: String(post.id) } }),
    ).post;
    expect(node.userId).toBe(String(user.id));
    expect(node.user).toEqual({ id: String(user.id), name: 'Author' });
    const fields: Record<string, unknown> = { ...node };
    delete fields.user;
    expect(asRest(fields, ['userId'])).toEqual(post);
  });

  it('a change through GraphQL is visible through REST at once, and the reverse', async () => {
    const row = await create(t, 'users', { name: 'Changing', bio: 'first' });
    const id = String(row.id);

    const updated = dataOf(await graphql<{ updateUser: Node }>(t.app, `mutation { updateUser(id: "${id}", input: { bio: "from GraphQL" }) { ${USER_FIELDS} } }`)).updateUser;
    expect(json(await rest(t, 'GET', `/users/${id}`))).toEqual(asRest(updated));
    expect(updated.bio).toBe('from GraphQL');

    const patched = await rest(t, 'PATCH', `/users/${id}`, { name: 'Patched by REST' });
    expect(patched.statusCode).toBe(200);
    expect(asRest(must(await gqlUser(id)))).toEqual(json(patched));

    const replaced = await rest(t, 'PUT', `/users/${id}`, { name: 'Replaced by REST' });
    expect(replaced.statusCode).toBe(200);
    const afterPut = must(await gqlUser(id));
    expect(afterPut).toMatchObject({ name: 'Replaced by REST', bio: null, email: null });
    expect(asRest(afterPut)).toEqual(json(replaced));

    const replacedByGraphql = dataOf(
      await graphql<{ replaceUser: Node }>(t.app, `mutation { replaceUser(id: "${id}", input: { name: "Replaced by GraphQL", bio: "again" }) { ${USER_FIELDS} } }`),
    ).replaceUser;
    expect(json(await rest(t, 'GET', `/users/${id}`))).toEqual(asRest(replacedByGraphql));

    expect((await rest(t, 'DELETE', `/users/${id}`)).statusCode).toBe(204);
    const gone = await graphql<{ user: Node | null }>(t.app, `{ user(id: "${id}") { id } }`);
    expect(gone.body.data).toEqual({ user: null });
    onlyError(gone, 'not-found', ['user']);
  });

  it('deleteUser returns the ID, and REST then answers 404', async () => {
    const row = await create(t, 'users', { name: 'Doomed' });
    const reply = await graphql(t.app, `mutation { deleteUser(id: "${row.id}") }`);
    expect(dataOf(reply)).toEqual({ deleteUser: String(row.id) });
    expect((await rest(t, 'GET', `/users/${row.id}`)).statusCode).toBe(404);
  });

  it('an ID that is not a REST id names no row: not-found, for reads and writes alike', async () => {
    const row = await create(t, 'users', { name: 'Present' });
    for (const id of ['0', '-1', `0${row.id}`, `${row.id}.0`, ' 1', 'abc', '', '99999999999999999999']) {
      const read = await graphql(t.app, 'query($id: ID!) { user(id: $id) { id } }', { variables: { id } });
      expect(read.body.data, `user(id: ${JSON.stringify(id)})`).toEqual({ user: null });
      onlyError(read, 'not-found', ['user']);
      const write = await graphql(t.app, 'mutation($id: ID!) { updateUser(id: $id, input: { bio: "x" }) { id } }', { variables: { id } });
      expect(write.body.data).toEqual({ updateUser: null });
      onlyError(write, 'not-found', ['updateUser']);
    }
    expect(json(await rest(t, 'GET', `/users/${row.id}`))).toMatchObject({ name: 'Present', bio: null });
  });
});

describe('paging (Relay): first/after, last/before, against REST’s order', () => {
  let t: TestApp;
  let all: Row[];
  const NAMES = ['Mia', 'Ann', 'Zoe', 'Bob', 'Ann', 'Eve', 'Mia', 'Cat', 'Ann', 'Dan', 'Zoe', 'Eve', 'Fay', 'Gus', 'Ann', 'Hal', 'Ivy', 'Bob', 'Jon', 'Kim', 'Mia', 'Lou', 'Ann'];
  const SORTS: string[][] = [[], ['NAME_ASC'], ['NAME_DESC'], ['BIO_ASC', 'NAME_DESC'], ['BIO_DESC'], ['ID_DESC'], ['CREATED_AT_DESC', 'NAME_ASC']];
  /** Posts per user, created interleaved: user 1 has 11, user 2 has 4, user 3 none. */
  const postsOf = new Map<number, Row[]>();

  beforeAll(async () => {
    t = await startTestApp();
    for (const [i, name] of NAMES.entries()) await create(t, 'users', { name, ...(i % 3 === 0 ? {} : { bio: `bio ${(i * 7) % 5}` }) });
    all = await restRows(t, '/users?limit=1000');
    const titles = ['kiwi', 'apple', 'fig', 'date', 'apple', 'lime', 'cherry', 'banana', 'grape', 'elder', 'mango'];
    for (const [i, title] of titles.entries()) {
      const post = await create(t, 'posts', { title, userId: 1, published: i % 2 === 0 });
      postsOf.set(1, [...(postsOf.get(1) ?? []), post]);
      if (i % 3 === 0) postsOf.set(2, [...(postsOf.get(2) ?? []), await create(t, 'posts', { title: `${title} two`, userId: 2, published: true })]);
    }
  });
  afterAll(async () => t.close());

  async function usersConnection(args: PageArgs & { sort?: string[]; filter?: Record<string, unknown> }): Promise<Connection> {
    const reply = await graphql<{ usersConnection: Connection }>(
      t.app,
      `query($first: Int, $after: String, $last: Int, $before: String, $sort: [UserSort!], $filter: UserFilter) {
        usersConnection(first: $first, after: $after, last: $last, before: $before, sort: $sort, filter: $filter) { ${CONNECTION_FIELDS} }
      }`,
      { variables: { ...args } },
    );
    return dataOf(reply).usersConnection;
  }

  async function users(args: PageArgs & { sort?: string[] }): Promise<string[]> {
    const reply = await graphql<{ users: { id: string }[] }>(
      t.app,
      'query($first: Int, $after: String, $last: Int, $before: String, $sort: [UserSort!]) { users(first: $first, after: $after, last: $last, before: $before, sort: $sort) { id } }',
      { variables: { ...args } },
    );
    return nodeIds(dataOf(reply).users);
  }

  async function restOrder(sort: readonly string[], extra = ''): Promise<string[]> {
    const sortParameter = sort.length === 0 ? '' : `&sort=${restSort(sort)}`;
    return restIds(await restRows(t, `/users?limit=1000${sortParameter}${extra}`));
  }

  it('without arguments: the default page, id ascending, as REST lists it', async () => {
    const expected = restIds(all);
    expect(expected).toHaveLength(NAMES.length);
    expect(await users({})).toEqual(expected);
    const connection = await usersConnection({});
    expectConsistent(connection);
    expect(nodeIds(connection.nodes)).toEqual(expected);
    expect(connection.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    expect(connection.totalCount).toBe(NAMES.length);
  });

  for (const sort of SORTS) {
    describe(`sort ${sort.length === 0 ? '(default)' : sort.join(', ')}`, () => {
      it('the whole list is REST’s order for the same sort', async () => {
        const expected = await restOrder(sort);
        expect(expected).toHaveLength(NAMES.length);
        expect(await users({ first: 1000, sort })).toEqual(expected);
        expect(nodeIds((await usersConnection({ first: 1000, sort })).nodes)).toEqual(expected);
      });

      it('walking forward with first 4 and endCursor visits every row once, in order', async () => {
        const expected = await restOrder(sort);
        const walk = await walkForward((args) => usersConnection({ ...args, sort }), 4);
        expect(walk.ids).toEqual(expected);
        expect(walk.pages).toBe(Math.ceil(NAMES.length / 4));
      });

      it('walking backward with last 4 and startCursor visits every row once, in order', async () => {
        const expected = await restOrder(sort);
        const walk = await walkBackward((args) => usersConnection({ ...args, sort }), 4);
        expect(walk.ids).toEqual(expected);
        expect(walk.pages).toBe(Math.ceil(NAMES.length / 4));
      });

      it('users(first, after) and users(last, before) give the connection’s pages', async () => {
        const expected = await restOrder(sort);
        const first = await usersConnection({ first: 5, sort });
        expect(await users({ first: 5, sort })).toEqual(expected.slice(0, 5));
        const after = must(first.pageInfo.endCursor);
        expect(await users({ first: 5, after, sort })).toEqual(expected.slice(5, 10));
        expect(await users({ last: 3, sort })).toEqual(expected.slice(-3));
        const last = await usersConnection({ last: 3, sort });
        expect(await users({ last: 3, before: must(last.pageInfo.startCursor), sort })).toEqual(expected.slice(-6, -3));
      });
    });
  }

  it('after and before together bound the page from both sides; first and last pick from that window', async () => {
    const expected = restIds(all);
    const edges = (await usersConnection({ first: 1000 })).edges;
    const after = must(edges[4]).cursor;
    const before = must(edges[15]).cursor;
    const window = expected.slice(5, 15);
    expect(nodeIds((await usersConnection({ after, before, first: 1000 })).nodes)).toEqual(window);
    const head = await usersConnection({ after, before, first: 3 });
    expect(nodeIds(head.nodes)).toEqual(window.slice(0, 3));
    expect(head.pageInfo.hasNextPage).toBe(true);
    const tail = await usersConnection({ after, before, last: 3 });
    expect(nodeIds(tail.nodes)).toEqual(window.slice(-3));
    expect(tail.pageInfo.hasPreviousPage).toBe(true);
    const whole = await usersConnection({ after, before, last: 10 });
    expect(nodeIds(whole.nodes)).toEqual(window);
    expect(whole.pageInfo.hasPreviousPage).toBe(false);
  });

  it('pageInfo at the ends: first page, last page, and a page that is the whole list', async () => {
    const expected = restIds(all);
    const first = await usersConnection({ first: 10 });
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const last = await usersConnection({ last: 10 });
    expect(nodeIds(last.nodes)).toEqual(expected.slice(-10));
    expect(last.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const exact = await usersConnection({ first: NAMES.length });
    expect(exact.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    const exactBack = await usersConnection({ last: NAMES.length });
    expect(exactBack.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    const afterLast = await usersConnection({ first: 5, after: must(exact.pageInfo.endCursor) });
    expect(afterLast.edges).toEqual([]);
    expect(afterLast.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null });
  });

  it('totalCount counts every row the filter matches, whatever the page', async () => {
    const filter = { name: { eq: 'Ann' } };
    const response = await rest(t, 'GET', '/users?name=Ann&count=true&limit=1');
    const restTotal = Number(response.headers['x-total-count']);
    expect(restTotal).toBe(NAMES.filter((n) => n === 'Ann').length);
    const page = await usersConnection({ first: 2, filter });
    expect(page.totalCount).toBe(restTotal);
    expect(page.edges).toHaveLength(2);
    const second = await usersConnection({ first: 2, after: must(page.pageInfo.endCursor), filter });
    expect(second.totalCount).toBe(restTotal);
    const walk = await walkForward((args) => usersConnection({ ...args, filter }), 2);
    expect(walk.ids).toEqual(restIds(await restRows(t, '/users?name=Ann&limit=1000')));
    expect((await usersConnection({ first: 1, filter: { name: { eq: 'Nobody' } } })).totalCount).toBe(0);
  });

  it('first: 0 → no rows (and, Relay: hasNextPage when rows exist); last: 0 likewise', async () => {
    expect(await users({ first: 0 })).toEqual([]);
    const none = await usersConnection({ first: 0 });
    expect(none).toEqual({ edges: [], nodes: [], pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null }, totalCount: NAMES.length });
    const noneBack = await usersConnection({ last: 0 });
    expect(noneBack).toEqual({ edges: [], nodes: [], pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null }, totalCount: NAMES.length });
    expect(await users({ first: 1000 })).toHaveLength(NAMES.length);
  });

  describe('bad paging arguments → invalid-query naming the argument, and the field null', () => {
    const badCases: { name: string; args: () => Promise<PageArgs & { sort?: string[] }>; parameter: string }[] = [
      { name: 'first: -1', args: () => Promise.resolve({ first: -1 }), parameter: 'first' },
      { name: 'first: 1001 (over the maximum 1000)', args: () => Promise.resolve({ first: 1001 }), parameter: 'first' },
      { name: 'last: -1', args: () => Promise.resolve({ last: -1 }), parameter: 'last' },
      { name: 'last: 1001', args: () => Promise.resolve({ last: 1001 }), parameter: 'last' },
      { name: 'first and last together', args: () => Promise.resolve({ first: 2, last: 2 }), parameter: 'last' },
      { name: 'after: garbage', args: () => Promise.resolve({ first: 2, after: 'garbage' }), parameter: 'after' },
      { name: 'after: not base64url', args: () => Promise.resolve({ first: 2, after: 'a+b/c=' }), parameter: 'after' },
      { name: 'after: base64url of JSON that is no cursor', args: () => Promise.resolve({ first: 2, after: Buffer.from('{"s":"id","v":"x"}').toString('base64url') }), parameter: 'after' },
      { name: 'before: garbage', args: () => Promise.resolve({ last: 2, before: '!!!' }), parameter: 'before' },
      {
        name: 'after: a cursor from another sort (NAME_DESC used with the default sort)',
        args: async () => ({ first: 2, after: must((await usersConnection({ first: 2, sort: ['NAME_DESC'] })).pageInfo.endCursor) }),
        parameter: 'after',
      },
      {
        name: 'before: a cursor from the default sort used with NAME_ASC',
        args: async () => ({ last: 2, sort: ['NAME_ASC'], before: must((await usersConnection({ last: 2 })).pageInfo.startCursor) }),
        parameter: 'before',
      },
    ];
    for (const c of badCases) {
      it(c.name, async () => {
        const args = await c.args();
        for (const field of ['users', 'usersConnection']) {
          const selection = field === 'users' ? '{ id }' : '{ totalCount edges { node { id } } }';
          const reply = await graphql(
            t.app,
            `query($first: Int, $after: String, $last: Int, $before: String, $sort: [UserSort!]) { ${field}(first: $first, after: $after, last: $last, before: $before, sort: $sort) ${selection} }`,
            { variables: { ...args } },
          );
          expect(reply.status).toBe(200);
          expect(reply.body.data).toEqual({ [field]: null });
          const error = onlyError(reply, 'invalid-query', [field]);
          expect(must(error.extensions.errors).map((e) => e.parameter)).toEqual([c.parameter]);
          expect(error.message).toContain(c.parameter);
        }
      });
    }

    it('a failing list field is null on its own: the other root fields of the document keep their data', async () => {
      const reply = await graphql(t.app, '{ user(id: "1") { name } users(first: -1) { id } usersConnection(first: 1) { nodes { id } } }');
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ user: { name: 'Mia' }, users: null, usersConnection: { nodes: [{ id: '1' }] } });
      onlyError(reply, 'invalid-query', ['users']);
    });

    it('on a relation field too: the error has the relation’s path, the relation is null and its parent stays', async () => {
      const reply = await graphql(t.app, '{ user(id: "1") { name posts(first: -1) { id } } }');
      expect(reply.body.data).toEqual({ user: { name: 'Mia', posts: null } });
      onlyError(reply, 'invalid-query', ['user', 'posts']);
      const connection = await graphql(t.app, '{ user(id: "1") { name postsConnection(after: "garbage") { totalCount } } }');
      expect(connection.body.data).toEqual({ user: { name: 'Mia', postsConnection: null } });
      const error = onlyError(connection, 'invalid-query', ['user', 'postsConnection']);
      expect(must(error.extensions.errors).map((e) => e.parameter)).toEqual(['after']);
    });
  });

  describe('relation fields page the same way, per parent', () => {
    interface UserPosts {
      id: string;
      posts: { id: string }[];
      postsConnection: Connection;
    }

    async function postsConnectionOf(userId: number, args: PageArgs & { sort?: string[]; filter?: Record<string, unknown> }): Promise<Connection> {
      const reply = await graphql<{ user: { postsConnection: Connection } }>(
        t.app,
        `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String, $sort: [PostSort!], $filter: PostFilter) {
          user(id: $id) { postsConnection(first: $first, after: $after, last: $last, before: $before, sort: $sort, filter: $filter) { ${CONNECTION_FIELDS} } }
        }`,
        { variables: { id: String(userId), ...args } },
      );
      return dataOf(reply).user.postsConnection;
    }

    it('each user’s posts and postsConnection (one query, several parents) are REST’s /users/{id}/posts', async () => {
      for (const [args, restQuery] of [
        // Without first/last a relation list is a page of 10 (RESTGRAPH_GRAPHQL_RELATION_PAGE_SIZE).
        ['', 'limit=10'],
        ['(first: 2)', 'limit=2'],
        ['(sort: [TITLE_DESC])', 'sort=-title&limit=10'],
        ['(sort: [TITLE_ASC], first: 3)', 'sort=title&limit=3'],
      ] as const) {
        const reply = await graphql<{ users: UserPosts[] }>(
          t.app,
          `{ users(filter: { id: { in: ["1", "2", "3"] } }, first: 3) { id posts${args} { id } postsConnection${args} { ${CONNECTION_FIELDS} } } }`,
        );
        const users = dataOf(reply).users;
        expect(users.map((u) => u.id)).toEqual(['1', '2', '3']);
        for (const user of users) {
          const expected = restIds(await restRows(t, `/users/${user.id}/posts?${restQuery}`));
          expect(nodeIds(user.posts), `user ${user.id} posts${args}`).toEqual(expected);
          expect(nodeIds(user.postsConnection.nodes)).toEqual(expected);
          expectConsistent(user.postsConnection);
          expect(user.postsConnection.totalCount).toBe(postsOf.get(Number(user.id))?.length ?? 0);
        }
      }
    });

    it('last: 2 per parent is each parent’s last two', async () => {
      const users = dataOf(await graphql<{ users: UserPosts[] }>(t.app, '{ users(first: 3) { id posts(last: 2) { id } } }')).users;
      expect(users.map((u) => [u.id, nodeIds(u.posts)])).toEqual([
        ['1', restIds(must(postsOf.get(1)).slice(-2))],
        ['2', restIds(must(postsOf.get(2)).slice(-2))],
        ['3', []],
      ]);
    });

    for (const sort of [[], ['TITLE_DESC'], ['PUBLISHED_ASC', 'TITLE_ASC']]) {
      it(`walking user 1’s postsConnection forward and backward (sort ${sort.join(', ') || 'default'}) visits every post once`, async () => {
        const sortParameter = sort.length === 0 ? '' : `&sort=${restSort(sort)}`;
        const expected = restIds(await restRows(t, `/users/1/posts?limit=1000${sortParameter}`));
        expect(expected).toHaveLength(11);
        const forward = await walkForward((args) => postsConnectionOf(1, { ...args, sort }), 3);
        expect(forward.ids).toEqual(expected);
        expect(forward.pages).toBe(4);
        const backward = await walkBackward((args) => postsConnectionOf(1, { ...args, sort }), 3);
        expect(backward.ids).toEqual(expected);
        expect(backward.pages).toBe(4);
      });
    }

    it('a relation connection’s totalCount respects its filter; first: 0 still tells that rows exist', async () => {
      const filter = { published: { eq: true } };
      const expected = restIds(await restRows(t, '/users/1/posts?published=true&limit=1000'));
      const page = await postsConnectionOf(1, { first: 2, filter });
      expect(page.totalCount).toBe(expected.length);
      expect(nodeIds(page.nodes)).toEqual(expected.slice(0, 2));
      const walk = await walkForward((args) => postsConnectionOf(1, { ...args, filter }), 2);
      expect(walk.ids).toEqual(expected);
      const empty = await postsConnectionOf(1, { first: 0 });
      expect(empty).toEqual({ edges: [], nodes: [], pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null }, totalCount: 11 });
      const emptyBack = await postsConnectionOf(1, { last: 0 });
      expect(emptyBack).toEqual({ edges: [], nodes: [], pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null }, totalCount: 11 });
    });

    it('a cursor of one sort is refused by a relation of another sort', async () => {
      const cursor = must((await postsConnectionOf(1, { first: 2, sort: ['TITLE_DESC'] })).pageInfo.endCursor);
      const reply = await graphql(t.app, 'query($after: String) { user(id: "1") { id posts(first: 2, after: $after) { id } } }', { variables: { after: cursor } });
      expect(reply.body.data).toEqual({ user: { id: '1', posts: null } });
      const error = onlyError(reply, 'invalid-query', ['user', 'posts']);
      expect(must(error.extensions.errors).map((e) => e.parameter)).toEqual(['after']);
    });
  });
});

describe('filters: every operator on every type agrees with the REST filter of the same meaning', () => {
  let t: TestApp;
  const totals = new Map<string, number>();

  beforeAll(async () => {
    t = await startTestApp();
    await create(t, 'users', { name: 'Alice', email: 'alice@example.com', bio: 'Likes cats' });
    await create(t, 'users', { name: 'bob', bio: 'cat person' });
    await create(t, 'users', { name: 'Carol', email: 'carol@example.org' });
    await create(t, 'users', { name: 'Alice B', email: 'ab@example.com', bio: 'Zebra' });
    await create(t, 'users', { name: 'Dave' });
    await create(t, 'products', { name: 'Widget', sku: 'W-1', price: 9.5, currency: 'EUR', stock: 0 });
    await create(t, 'products', { name: 'Gadget', sku: 'G-1', price: 20, currency: 'USD', stock: 5 });
    await create(t, 'products', { name: 'Gizmo', sku: 'GZ-1', price: 0, currency: 'GBP', stock: Number.MAX_SAFE_INTEGER, active: false });
    await create(t, 'products', { name: 'Doohickey', sku: 'D-1', price: 9.49, currency: 'USD', stock: 3_000_000_000 });
    await create(t, 'products', { name: 'Thing', sku: 'T-1', price: 1e6, stock: 7, active: false });
    const posts: Record<string, unknown>[] = [
      { title: 'One', userId: 1, published: true, publishedAt: '2024-01-01T00:00:00.000Z', tags: { a: 1 } },
      { title: 'Two', userId: 1, published: true, publishedAt: '2024-05-01T10:00:00.000Z', tags: ['x', 'y'] },
      { title: 'Three', userId: 2 },
      { title: 'Four', userId: 3, published: true, publishedAt: '2024-05-01T09:59:59.999Z', tags: 'plain' },
      { title: 'Five', userId: 4, published: false, publishedAt: '2023-12-31T23:59:59.000Z', tags: null },
      { title: 'Six', userId: 2, publishedAt: '2025-02-28T12:00:00.000Z', tags: 0 },
    ];
    for (const post of posts) await create(t, 'posts', post);
    const orders: Record<string, unknown>[] = [
      { userId: 1, productId: 1, quantity: 1, status: 'paid', placedOn: '2024-02-29', note: 'gift wrap' },
      { userId: 1, productId: 2, quantity: 5, placedOn: '2024-03-01' },
      { userId: 2, productId: 2, quantity: 10, status: 'shipped', placedOn: '2023-12-31', note: 'leave at door' },
      { userId: 3, productId: 3, quantity: 10000, status: 'cancelled' },
      { userId: 2, productId: 1, quantity: 7, status: 'paid', placedOn: '2024-02-28', note: 'Gift' },
    ];
    for (const order of orders) await create(t, 'orders', order);
    for (const resource of ['users', 'products', 'posts', 'orders']) totals.set(resource, (await restRows(t, `/${resource}?limit=1000`)).length);
  });
  afterAll(async () => t.close());

  interface FilterCase {
    resource: 'users' | 'products' | 'posts' | 'orders';
    filter: Record<string, Record<string, unknown>>;
    rest: string;
    /** What the case selects: by default some rows but not all (so the filter is seen to work). */
    selects?: 'none' | 'all';
  }

  const TYPE_OF = { users: 'User', products: 'Product', posts: 'Post', orders: 'Order' } as const;
  const cases: FilterCase[] = [
    // String
    { resource: 'users', filter: { name: { eq: 'Alice' } }, rest: 'name=Alice' },
    { resource: 'users', filter: { name: { ne: 'Alice' } }, rest: 'name[ne]=Alice' },
    { resource: 'users', filter: { name: { lt: 'Carol' } }, rest: 'name[lt]=Carol' },
    { resource: 'users', filter: { name: { lte: 'Carol' } }, rest: 'name[lte]=Carol' },
    { resource: 'users', filter: { name: { gt: 'Alice' } }, rest: 'name[gt]=Alice' },
    { resource: 'users', filter: { name: { gte: 'Alice B' } }, rest: `name[gte]=${encodeURIComponent('Alice B')}` },
    { resource: 'users', filter: { name: { in: ['Alice', 'Dave', 'nobody'] } }, rest: 'name[in]=Alice,Dave,nobody' },
    { resource: 'users', filter: { name: { contains: 'li' } }, rest: 'name[contains]=li' },
    { resource: 'users', filter: { name: { contains: 'LI' } }, rest: 'name[contains]=LI', selects: 'none' },
    { resource: 'users', filter: { name: { startsWith: 'Al' } }, rest: 'name[startsWith]=Al' },
    { resource: 'users', filter: { name: { startsWith: '%' } }, rest: `name[startsWith]=${encodeURIComponent('%')}`, selects: 'none' },
    { resource: 'users', filter: { email: { isNull: true } }, rest: 'email[isNull]=true' },
    { resource: 'users', filter: { email: { isNull: false } }, rest: 'email[isNull]=false' },
    { resource: 'users', filter: { bio: { ne: 'cat person' } }, rest: `bio[ne]=${encodeURIComponent('cat person')}` },
    { resource: 'users', filter: { email: { contains: '@example.c' } }, rest: 'email[contains]=@example.c' },
    { resource: 'users', filter: { name: { startsWith: 'A' }, bio: { isNull: false } }, rest: 'name[startsWith]=A&bio[isNull]=false' },
    { resource: 'users', filter: { name: { gte: 'B', lt: 'D' } }, rest: 'name[gte]=B&name[lt]=D' },
    { resource: 'orders', filter: { note: { contains: 'ift' } }, rest: 'note[contains]=ift' },
    { resource: 'orders', filter: { note: { isNull: true } }, rest: 'note[isNull]=true' },
    { resource: 'products', filter: { sku: { startsWith: 'G' } }, rest: 'sku[startsWith]=G' },
    // ID (the id and reference fields)
    { resource: 'users', filter: { id: { eq: '3' } }, rest: 'id=3' },
    { resource: 'users', filter: { id: { ne: '1' } }, rest: 'id[ne]=1' },
    { resource: 'users', filter: { id: { in: ['1', '3', '99'] } }, rest: 'id[in]=1,3,99' },
    { resource: 'users', filter: { id: { gt: '2' } }, rest: 'id[gt]=2' },
    { resource: 'users', filter: { id: { lte: '2' } }, rest: 'id[lte]=2' },
    { resource: 'posts', filter: { userId: { eq: '2' } }, rest: 'userId=2' },
    { resource: 'posts', filter: { userId: { in: ['1', '3'] } }, rest: 'userId[in]=1,3' },
    { resource: 'orders', filter: { productId: { ne: '2' } }, rest: 'productId[ne]=2' },
    // Int (orders.quantity: 1..10000)
    { resource: 'orders', filter: { quantity: { eq: 10000 } }, rest: 'quantity=10000' },
    { resource: 'orders', filter: { quantity: { ne: 10 } }, rest: 'quantity[ne]=10' },
    { resource: 'orders', filter: { quantity: { gte: 5 } }, rest: 'quantity[gte]=5' },
    { resource: 'orders', filter: { quantity: { gt: 5 } }, rest: 'quantity[gt]=5' },
    { resource: 'orders', filter: { quantity: { lt: 10 } }, rest: 'quantity[lt]=10' },
    { resource: 'orders', filter: { quantity: { lte: 10 } }, rest: 'quantity[lte]=10' },
    { resource: 'orders', filter: { quantity: { in: [1, 10] } }, rest: 'quantity[in]=1,10' },
    { resource: 'orders', filter: { quantity: { gte: 5, lte: 10 } }, rest: 'quantity[gte]=5&quantity[lte]=10' },
    // SafeInt (products.stock: no maximum)
    { resource: 'products', filter: { stock: { eq: Number.MAX_SAFE_INTEGER } }, rest: `stock=${Number.MAX_SAFE_INTEGER}` },
    { resource: 'products', filter: { stock: { gt: 2_147_483_647 } }, rest: 'stock[gt]=2147483647' },
    { resource: 'products', filter: { stock: { lt: 5 } }, rest: 'stock[lt]=5' },
    { resource: 'products', filter: { stock: { in: [0, 5, 3_000_000_000] } }, rest: 'stock[in]=0,5,3000000000' },
    { resource: 'products', filter: { stock: { ne: 0 } }, rest: 'stock[ne]=0' },
    // Float (products.price)
    { resource: 'products', filter: { price: { eq: 0 } }, rest: 'price=0' },
    { resource: 'products', filter: { price: { lt: 9.5 } }, rest: 'price[lt]=9.5' },
    { resource: 'products', filter: { price: { lte: 9.5 } }, rest: 'price[lte]=9.5' },
    { resource: 'products', filter: { price: { gt: 9.49 } }, rest: 'price[gt]=9.49' },
    { resource: 'products', filter: { price: { gte: 20 } }, rest: 'price[gte]=20' },
    { resource: 'products', filter: { price: { ne: 20 } }, rest: 'price[ne]=20' },
    { resource: 'products', filter: { price: { in: [0, 20, 1e6] } }, rest: 'price[in]=0,20,1000000' },
    // Boolean
    { resource: 'products', filter: { active: { eq: false } }, rest: 'active=false' },
    { resource: 'products', filter: { active: { ne: false } }, rest: 'active[ne]=false' },
    { resource: 'posts', filter: { published: { eq: true } }, rest: 'published=true' },
    { resource: 'posts', filter: { published: { ne: true } }, rest: 'published[ne]=true' },
    // DateTime (posts.publishedAt; createdAt)
    { resource: 'posts', filter: { publishedAt: { eq: '2024-05-01T10:00:00Z' } }, rest: 'publishedAt=2024-05-01T10:00:00Z' },
    { resource: 'posts', filter: { publishedAt: { eq: '2024-05-01T12:00:00+02:00' } }, rest: `publishedAt=${encodeURIComponent('2024-05-01T12:00:00+02:00')}` },
    { resource: 'posts', filter: { publishedAt: { lt: '2024-05-01T10:00:00.000Z' } }, rest: 'publishedAt[lt]=2024-05-01T10:00:00.000Z' },
    { resource: 'posts', filter: { publishedAt: { lte: '2024-05-01T12:00:00+02:00' } }, rest: `publishedAt[lte]=${encodeURIComponent('2024-05-01T12:00:00+02:00')}` },
    { resource: 'posts', filter: { publishedAt: { gt: '2024-01-01' } }, rest: 'publishedAt[gt]=2024-01-01' },
    { resource: 'posts', filter: { publishedAt: { gte: '2024-01-01T00:00:00Z' } }, rest: 'publishedAt[gte]=2024-01-01T00:00:00Z' },
    { resource: 'posts', filter: { publishedAt: { ne: '2024-01-01T00:00:00Z' } }, rest: 'publishedAt[ne]=2024-01-01T00:00:00Z' },
    { resource: 'posts', filter: { publishedAt: { in: ['2024-01-01T00:00:00Z', '2025-02-28T13:00:00+01:00'] } }, rest: `publishedAt[in]=2024-01-01T00:00:00Z,${encodeURIComponent('2025-02-28T13:00:00+01:00')}` },
    { resource: 'posts', filter: { publishedAt: { isNull: true } }, rest: 'publishedAt[isNull]=true' },
    { resource: 'users', filter: { createdAt: { gte: '2000-01-01T00:00:00Z' } }, rest: 'createdAt[gte]=2000-01-01T00:00:00Z', selects: 'all' },
    // Date (orders.placedOn)
    { resource: 'orders', filter: { placedOn: { eq: '2024-02-29' } }, rest: 'placedOn=2024-02-29' },
    { resource: 'orders', filter: { placedOn: { ne: '2024-02-29' } }, rest: 'placedOn[ne]=2024-02-29' },
    { resource: 'orders', filter: { placedOn: { lt: '2024-03-01' } }, rest: 'placedOn[lt]=2024-03-01' },
    { resource: 'orders', filter: { placedOn: { lte: '2024-02-29' } }, rest: 'placedOn[lte]=2024-02-29' },
    { resource: 'orders', filter: { placedOn: { gt: '2024-02-28' } }, rest: 'placedOn[gt]=2024-02-28' },
    { resource: 'orders', filter: { placedOn: { gte: '2024-01-01' } }, rest: 'placedOn[gte]=2024-01-01' },
    { resource: 'orders', filter: { placedOn: { in: ['2023-12-31', '2024-03-01'] } }, rest: 'placedOn[in]=2023-12-31,2024-03-01' },
    { resource: 'orders', filter: { placedOn: { isNull: true } }, rest: 'placedOn[isNull]=true' },
    // Enum (products.currency, orders.status)
    { resource: 'products', filter: { currency: { eq: 'USD' } }, rest: 'currency=USD' },
    { resource: 'products', filter: { currency: { ne: 'USD' } }, rest: 'currency[ne]=USD' },
    { resource: 'products', filter: { currency: { in: ['EUR', 'GBP'] } }, rest: 'currency[in]=EUR,GBP' },
    { resource: 'orders', filter: { status: { eq: 'pending' } }, rest: 'status=pending' },
    { resource: 'orders', filter: { status: { in: ['paid', 'shipped'] } }, rest: 'status[in]=paid,shipped' },
    { resource: 'orders', filter: { status: { ne: 'paid' } }, rest: 'status[ne]=paid' },
    // JSON: only isNull
    { resource: 'posts', filter: { tags: { isNull: true } }, rest: 'tags[isNull]=true' },
    { resource: 'posts', filter: { tags: { isNull: false } }, rest: 'tags[isNull]=false' },
  ];

  for (const c of cases) {
    it(`${c.resource}(filter: ${JSON.stringify(c.filter)}) = GET /${c.resource}?${decodeURIComponent(c.rest)}`, async () => {
      const expected = restIds(await restRows(t, `/${c.resource}?${c.rest}&limit=1000`));
      const total = must(totals.get(c.resource));
      if (c.selects === 'none') expect(expected).toEqual([]);
      else if (c.selects === 'all') expect(expected).toHaveLength(total);
      else {
        expect(expected.length, 'the case must select some rows').toBeGreaterThan(0);
        expect(expected.length, 'the case must leave some rows out').toBeLessThan(total);
      }
      const type = TYPE_OF[c.resource];
      const list = await graphql<Record<string, { id: string }[]>>(t.app, `query($f: ${type}Filter) { ${c.resource}(filter: $f, first: 1000) { id } }`, { variables: { f: c.filter } });
      expect(nodeIds(must(dataOf(list)[c.resource]))).toEqual(expected);
      const connection = await graphql<Record<string, Connection>>(t.app, `query($f: ${type}Filter) { ${c.resource}Connection(filter: $f, first: 1) { totalCount nodes { id } } }`, {
        variables: { f: c.filter },
      });
      const page = must(dataOf(connection)[`${c.resource}Connection`]);
      expect(page.totalCount).toBe(expected.length);
      expect(nodeIds(page.nodes)).toEqual(expected.slice(0, 1));
    });
  }

  it('a filter written inline (enum and ID literals) works as with variables', async () => {
    const reply = await graphql<{ products: { id: string; currency: string }[] }>(t.app, '{ products(filter: { currency: { in: [USD, GBP] }, id: { ne: 2 } }) { id currency } }');
    expect(dataOf(reply).products).toEqual([
      { id: '3', currency: 'GBP' },
      { id: '4', currency: 'USD' },
    ]);
  });

  it('relation fields take the same filters: user.posts(filter) = /users/{id}/posts?…', async () => {
    const reply = await graphql<{ users: { id: string; posts: { id: string }[] }[] }>(t.app, '{ users { id posts(filter: { published: { eq: true } }) { id } } }');
    for (const user of dataOf(reply).users) {
      expect(nodeIds(user.posts)).toEqual(restIds(await restRows(t, `/users/${user.id}/posts?published=true`)));
    }
  });

  describe('bad filter values → invalid-query naming the argument, the field null', () => {
    const bad: { resource: FilterCase['resource']; filter: Record<string, Record<string, unknown>>; parameters: string[] }[] = [
      { resource: 'orders', filter: { placedOn: { eq: '2024-02-30' } }, parameters: ['filter.placedOn.eq'] },
      { resource: 'orders', filter: { placedOn: { lt: '2023-02-29' } }, parameters: ['filter.placedOn.lt'] },
      { resource: 'orders', filter: { placedOn: { eq: '24-01-01' } }, parameters: ['filter.placedOn.eq'] },
      { resource: 'orders', filter: { placedOn: { in: ['2024-01-01', '2024-13-01'] } }, parameters: ['filter.placedOn.in'] },
      { resource: 'posts', filter: { publishedAt: { gte: 'garbage' } }, parameters: ['filter.publishedAt.gte'] },
      { resource: 'posts', filter: { publishedAt: { eq: '2024-02-30T10:00:00Z' } }, parameters: ['filter.publishedAt.eq'] },
      { resource: 'posts', filter: { publishedAt: { lt: '2024-01-01T25:00:00Z' } }, parameters: ['filter.publishedAt.lt'] },
      { resource: 'users', filter: { id: { eq: 'abc' } }, parameters: ['filter.id.eq'] },
      { resource: 'posts', filter: { userId: { in: ['1', 'x'] } }, parameters: ['filter.userId.in'] },
      { resource: 'users', filter: { name: { in: Array.from({ length: 101 }, (_, i) => `n${i}`) } }, parameters: ['filter.name.in'] },
      { resource: 'orders', filter: { placedOn: { eq: '2024-02-30' }, id: { gt: 'x' } }, parameters: ['filter.placedOn.eq', 'filter.id.gt'] },
    ];
    for (const c of bad) {
      it(`${c.resource}(filter: ${JSON.stringify(c.filter).slice(0, 80)})`, async () => {
        const type = TYPE_OF[c.resource];
        const reply = await graphql(t.app, `query($f: ${type}Filter) { ${c.resource}(filter: $f) { id } }`, { variables: { f: c.filter } });
        expect(reply.status).toBe(200);
        expect(reply.body.data).toEqual({ [c.resource]: null });
        const error = onlyError(reply, 'invalid-query', [c.resource]);
        expect(must(error.extensions.errors).map((e) => e.parameter).sort()).toEqual([...c.parameters].sort());
        for (const parameter of c.parameters) expect(error.message).toContain(parameter);
      });
    }

    it('the same values through REST are refused as well (400 invalid-query)', async () => {
      for (const url of ['/orders?placedOn=2024-02-30', '/posts?publishedAt[gte]=garbage', '/users?id=abc']) {
        const response = await rest(t, 'GET', url);
        expect(response.statusCode, url).toBe(400);
        expect(json(response)).toMatchObject({ code: 'invalid-query' });
      }
    });

    it('a value of the wrong GraphQL type is refused before execution (graphql-validation)', async () => {
      const literal = await graphql(t.app, '{ orders(filter: { quantity: { eq: "many" } }) { id } }');
      expect(literal.body.data).toBeUndefined();
      onlyError(literal, 'graphql-validation');
      const variable = await graphql(t.app, 'query($f: OrderFilter) { orders(filter: $f) { id } }', { variables: { f: { quantity: { eq: 2.5 } } } });
      expect(variable.body.data).toBeUndefined();
      onlyError(variable, 'graphql-validation');
      const operator = await graphql(t.app, '{ products(filter: { active: { gt: true } }) { id } }');
      onlyError(operator, 'graphql-validation');
      const jsonEquality = await graphql(t.app, '{ posts(filter: { tags: { eq: 1 } }) { id } }');
      onlyError(jsonEquality, 'graphql-validation');
    });
  });
});

describe('mutations', () => {
  let t: TestApp;
  let productId: number;
  const POST_FIELDS = 'id title body userId published publishedAt tags createdAt updatedAt';

  beforeAll(async () => {
    t = await startTestApp();
    await create(t, 'users', { name: 'Alice', email: 'alice@example.com' });
    await create(t, 'users', { name: 'Bob', email: 'bob@example.com' });
    productId = (await create(t, 'products', { name: 'Widget', sku: 'W-1', price: 5 })).id;
  });
  afterAll(async () => t.close());

  /**
   * A rejected mutation: its (nullable) field is null, with one error of this code at its path, and
   * nothing stored changed.
   */
  async function expectRejected(query: string, variables: Record<string, unknown> | undefined, code: string, pointers?: string[]): Promise<void> {
    const field = must(must(/\{\s*(\w+)\s*\(/.exec(query.replace(/^mutation[^{]*/, '')), 'mutation field')[1]);
    const before = await snapshot(t);
    const reply = await graphql(t.app, query, variables === undefined ? {} : { variables });
    expect(reply.status).toBe(200);
    expect(reply.body.data, reply.response.body).toEqual({ [field]: null });
    const error = onlyError(reply, code, [field]);
    if (pointers !== undefined) expect(must(error.extensions.errors, 'extensions.errors').map((e) => e.pointer)).toEqual(pointers);
    expect(await snapshot(t)).toBe(before);
  }

  describe('create', () => {
    it('applies defaults and returns typed fields (ID strings, Boolean, DateTime, JSON as given)', async () => {
      const tags = { list: [1, 2.5, 'three', true, null, { deep: ['x'] }], text: 'ünïcødé', empty: {}, n: -0.5 };
      const reply = await graphql<{ createPost: Node }>(t.app, `mutation($input: PostCreateInput!) { createPost(input: $input) { ${POST_FIELDS} } }`, {
        variables: { input: { title: 'Typed', userId: '1', tags } },
      });
      const post = dataOf(reply).createPost;
      expect(post).toMatchObject({ title: 'Typed', body: null, userId: '1', published: false, publishedAt: null, tags });
      expect(typeof post.published).toBe('boolean');
      expect(Date.parse(String(post.createdAt))).not.toBeNaN();
      expect(post.updatedAt).toBe(post.createdAt);
      expect(json(await rest(t, 'GET', `/posts/${post.id}`))).toEqual(asRest(post, ['userId']));
    });

    it('JSON written inline in the document round-trips too; a DateTime input comes back as stored', async () => {
      const reply = await graphql<{ createPost: Node }>(
        t.app,
        'mutation { createPost(input: { title: "Inline", userId: 2, published: true, publishedAt: "2024-05-01T10:00:00.000Z", tags: { a: [1, "b", false, null], n: { k: 2.5 } } }) { id userId published publishedAt tags } }',
      );
      expect(dataOf(reply).createPost).toMatchObject({ userId: '2', published: true, publishedAt: '2024-05-01T10:00:00.000Z', tags: { a: [1, 'b', false, null], n: { k: 2.5 } } });
      const stored = json<Row>(await rest(t, 'GET', `/posts/${dataOf(reply).createPost.id}`));
      expect(stored).toMatchObject({ userId: 2, published: true, tags: { a: [1, 'b', false, null], n: { k: 2.5 } } });
    });

    it('product and order defaults: currency EUR, stock 0, active true; status pending', async () => {
      const product = dataOf(
        await graphql<{ createProduct: Node }>(t.app, 'mutation { createProduct(input: { name: "Plain", sku: "PLAIN-1", price: 2.5 }) { id name sku price currency stock active } }'),
      ).createProduct;
      expect(product).toEqual({ id: product.id, name: 'Plain', sku: 'PLAIN-1', price: 2.5, currency: 'EUR', stock: 0, active: true });
      const order = dataOf(
        await graphql<{ createOrder: Node }>(t.app, `mutation { createOrder(input: { userId: "1", productId: "${product.id}", quantity: 3 }) { id userId productId quantity status placedOn note } }`),
      ).createOrder;
      expect(order).toEqual({ id: order.id, userId: '1', productId: product.id, quantity: 3, status: 'pending', placedOn: null, note: null });
      expect(json(await rest(t, 'GET', `/orders/${order.id}`))).toMatchObject({ userId: 1, productId: Number(product.id), quantity: 3, status: 'pending' });
    });

    it('a SafeInt beyond 32 bits is written and read exactly', async () => {
      const product = dataOf(
        await graphql<{ createProduct: Node }>(t.app, `mutation { createProduct(input: { name: "Big", sku: "BIG-1", price: 1, stock: ${Number.MAX_SAFE_INTEGER} }) { id stock } }`),
      ).createProduct;
      expect(product.stock).toBe(Number.MAX_SAFE_INTEGER);
      expect(json<Row>(await rest(t, 'GET', `/products/${product.id}`)).stock).toBe(Number.MAX_SAFE_INTEGER);
    });
  });

  describe('update and replace', () => {
    it('update changes only the given fields; null clears a nullable field', async () => {
      const user = await create(t, 'users', { name: 'Up', email: 'up@example.com', bio: 'old bio' });
      const reply = await graphql<{ updateUser: Node }>(t.app, `mutation { updateUser(id: "${user.id}", input: { bio: "new bio" }) { id name email bio createdAt updatedAt } }`);
      const updated = dataOf(reply).updateUser;
      expect(updated).toMatchObject({ id: String(user.id), name: 'Up', email: 'up@example.com', bio: 'new bio', createdAt: user.createdAt });
      expect(Date.parse(String(updated.updatedAt))).toBeGreaterThan(Date.parse(String(user.updatedAt)));
      const cleared = dataOf(await graphql<{ updateUser: Node }>(t.app, `mutation { updateUser(id: "${user.id}", input: { email: null }) { id name email bio } }`)).updateUser;
      expect(cleared).toEqual({ id: String(user.id), name: 'Up', email: null, bio: 'new bio' });
      expect(json(await rest(t, 'GET', `/users/${user.id}`))).toMatchObject({ name: 'Up', email: null, bio: 'new bio' });
    });

    it('update with nothing that differs keeps the row as it was (updatedAt too)', async () => {
      const user = await create(t, 'users', { name: 'Same' });
      const reply = await graphql<{ updateUser: Node }>(t.app, `mutation { updateUser(id: "${user.id}", input: { name: "Same" }) { id name updatedAt } }`);
      expect(dataOf(reply).updateUser).toEqual({ id: String(user.id), name: 'Same', updatedAt: user.updatedAt });
    });

    it('update of a JSON field sets it to the value given (GraphQL has no merge patch)', async () => {
      const post = await create(t, 'posts', { title: 'Json', userId: 1, tags: { a: 1, keep: true, nested: { x: 1, y: 2 } } });
      const reply = await graphql<{ updatePost: Node }>(t.app, `mutation { updatePost(id: "${post.id}", input: { tags: { b: 2, a: null, nested: { y: 3 } } }) { tags } }`);
      // A merge patch would have kept keep and nested.x and removed a; the value is taken as given.
      const expected = { b: 2, a: null, nested: { y: 3 } };
      expect(dataOf(reply).updatePost.tags).toEqual(expected);
      expect(json<Row>(await rest(t, 'GET', `/posts/${post.id}`)).tags).toEqual(expected);
      const list = await graphql<{ updatePost: Node }>(t.app, `mutation { updatePost(id: "${post.id}", input: { tags: ["only"] }) { tags } }`);
      expect(dataOf(list).updatePost.tags).toEqual(['only']);
      const cleared = await graphql<{ updatePost: Node }>(t.app, `mutation { updatePost(id: "${post.id}", input: { tags: null }) { tags } }`);
      expect(dataOf(cleared).updatePost.tags).toBeNull();
      expect(json<Row>(await rest(t, 'GET', `/posts/${post.id}`)).tags).toBeNull();
    });

    it('REST PATCH still merges a JSON object into the stored value (RFC 7396), unlike GraphQL update', async () => {
      const post = await create(t, 'posts', { title: 'Merge', userId: 1, tags: { a: 1, keep: true } });
      const patched = await rest(t, 'PATCH', `/posts/${post.id}`, { tags: { b: 2, a: null } });
      expect(patched.statusCode).toBe(200);
      expect(json<Row>(patched).tags).toEqual({ keep: true, b: 2 });
    });

    it('replace resets every field left out to its default or null', async () => {
      const post = await create(t, 'posts', { title: 'Full', body: 'text', userId: 1, published: true, publishedAt: '2024-05-01T10:00:00.000Z', tags: ['t'] });
      const reply = await graphql<{ replacePost: Node }>(t.app, `mutation { replacePost(id: "${post.id}", input: { title: "Bare", userId: "2" }) { ${POST_FIELDS} } }`);
      const replaced = dataOf(reply).replacePost;
      expect(replaced).toMatchObject({ id: String(post.id), title: 'Bare', body: null, userId: '2', published: false, publishedAt: null, tags: null, createdAt: post.createdAt });
      expect(json(await rest(t, 'GET', `/posts/${post.id}`))).toEqual(asRest(replaced, ['userId']));
    });
  });

  describe('delete', () => {
    it('returns the id; REST then 404s; cascade removes the user’s posts', async () => {
      const user = await create(t, 'users', { name: 'Leaving' });
      const post = await create(t, 'posts', { title: 'Goes too', userId: user.id });
      const reply = await graphql(t.app, `mutation { deleteUser(id: "${user.id}") }`);
      expect(dataOf(reply)).toEqual({ deleteUser: String(user.id) });
      expect((await rest(t, 'GET', `/users/${user.id}`)).statusCode).toBe(404);
      expect((await rest(t, 'GET', `/posts/${post.id}`)).statusCode).toBe(404);
      const again = await graphql(t.app, `mutation { deleteUser(id: "${user.id}") }`);
      expect(again.body.data).toEqual({ deleteUser: null });
      onlyError(again, 'not-found', ['deleteUser']);
    });

    it('a user or product still referenced by an order (onDelete restrict) → reference-conflict, nothing deleted', async () => {
      const user = await create(t, 'users', { name: 'Buyer' });
      await create(t, 'posts', { title: 'Would cascade', userId: user.id });
      const order = await create(t, 'orders', { userId: user.id, productId, quantity: 1 });
      await expectRejected(`mutation { deleteUser(id: "${user.id}") }`, undefined, 'reference-conflict');
      await expectRejected(`mutation { deleteProduct(id: "${productId}") }`, undefined, 'reference-conflict');
      expect(dataOf(await graphql(t.app, `mutation { deleteOrder(id: "${order.id}") }`))).toEqual({ deleteOrder: String(order.id) });
      expect(dataOf(await graphql(t.app, `mutation { deleteUser(id: "${user.id}") }`))).toEqual({ deleteUser: String(user.id) });
    });
  });

  describe('rejected mutations: the REST error codes, pointers to the fields, and no change', () => {
    it('validation-failed with a pointer per bad field', async () => {
      await expectRejected('mutation { createUser(input: { name: "" }) { id } }', undefined, 'validation-failed', ['/name']);
      await expectRejected('mutation { createUser(input: { name: "X", email: "not an email" }) { id } }', undefined, 'validation-failed', ['/email']);
      await expectRejected('mutation($input: UserCreateInput!) { createUser(input: $input) { id } }', { input: { name: 'x'.repeat(201) } }, 'validation-failed', ['/name']);
      await expectRejected('mutation { createProduct(input: { name: "P", sku: "bad sku", price: -1 }) { id } }', undefined, 'validation-failed', ['/sku', '/price']);
      await expectRejected(`mutation { createOrder(input: { userId: "1", productId: "${productId}", quantity: 0 }) { id } }`, undefined, 'validation-failed', ['/quantity']);
      await expectRejected(`mutation { createOrder(input: { userId: "1", productId: "${productId}", quantity: 10001 }) { id } }`, undefined, 'validation-failed', ['/quantity']);
      await expectRejected('mutation { updateUser(id: "1", input: { name: "" }) { id } }', undefined, 'validation-failed', ['/name']);
      await expectRejected('mutation { updateUser(id: "1", input: { name: null }) { id } }', undefined, 'validation-failed', ['/name']);
      await expectRejected('mutation { replaceUser(id: "1", input: { name: "" }) { id } }', undefined, 'validation-failed', ['/name']);
      await expectRejected('mutation { createPost(input: { title: "T", userId: "abc" }) { id } }', undefined, 'validation-failed', ['/userId']);
    });

    it('unique-conflict on users.email and products.sku, for create, update and replace', async () => {
      await expectRejected('mutation { createUser(input: { name: "Twin", email: "alice@example.com" }) { id } }', undefined, 'unique-conflict', ['/email']);
      await expectRejected('mutation { updateUser(id: "2", input: { email: "alice@example.com" }) { id } }', undefined, 'unique-conflict', ['/email']);
      await expectRejected('mutation { replaceUser(id: "2", input: { name: "Bob", email: "alice@example.com" }) { id } }', undefined, 'unique-conflict', ['/email']);
      await expectRejected('mutation { createProduct(input: { name: "Copy", sku: "W-1", price: 1 }) { id } }', undefined, 'unique-conflict', ['/sku']);
    });

    it('a reference to a missing row → validation-failed pointing at the reference field', async () => {
      const post = await create(t, 'posts', { title: 'Anchored', userId: 1 });
      await expectRejected('mutation { createPost(input: { title: "Orphan", userId: "999999" }) { id } }', undefined, 'validation-failed', ['/userId']);
      await expectRejected(`mutation { updatePost(id: "${post.id}", input: { userId: "999999" }) { id } }`, undefined, 'validation-failed', ['/userId']);
      await expectRejected(`mutation { replacePost(id: "${post.id}", input: { title: "T", userId: "999999" }) { id } }`, undefined, 'validation-failed', ['/userId']);
      await expectRejected('mutation { createOrder(input: { userId: "1", productId: "999999", quantity: 1 }) { id } }', undefined, 'validation-failed', ['/productId']);
    });

    it('in a document of several mutations, a failing one is null and the others keep their data and effect', async () => {
      const before = json<Row[]>(await rest(t, 'GET', '/users?limit=1000')).length;
      const reply = await graphql<{ ok: Node | null; bad: Node | null }>(
        t.app,
        'mutation { ok: createUser(input: { name: "Sibling" }) { name } bad: createUser(input: { name: "" }) { id } }',
      );
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ ok: { name: 'Sibling' }, bad: null });
      const error = onlyError(reply, 'validation-failed', ['bad']);
      expect(must(error.extensions.errors).map((e) => e.pointer)).toEqual(['/name']);
      const users = json<Row[]>(await rest(t, 'GET', '/users?limit=1000'));
      expect(users).toHaveLength(before + 1);
      expect(users.filter((u) => u.name === 'Sibling')).toHaveLength(1);
    });

    it('not-found for ids that name no row, on update, replace and delete', async () => {
      for (const id of ['999999', 'abc', '0']) {
        await expectRejected(`mutation { updateUser(id: "${id}", input: { bio: "x" }) { id } }`, undefined, 'not-found');
        await expectRejected(`mutation { replaceUser(id: "${id}", input: { name: "x" }) { id } }`, undefined, 'not-found');
        await expectRejected(`mutation { deletePost(id: "${id}") }`, undefined, 'not-found');
      }
    });

    it('a missing required input field or an unknown one is a graphql-validation error, and nothing changes', async () => {
      const before = await snapshot(t);
      const missing = await graphql(t.app, 'mutation { createUser(input: { email: "x@example.com" }) { id } }');
      expect(missing.body.data).toBeUndefined();
      onlyError(missing, 'graphql-validation');
      const unknown = await graphql(t.app, 'mutation { createUser(input: { name: "X", role: "admin" }) { id } }');
      onlyError(unknown, 'graphql-validation');
      const system = await graphql(t.app, 'mutation { updateUser(id: "1", input: { createdAt: "2000-01-01T00:00:00Z" }) { id } }');
      onlyError(system, 'graphql-validation');
      expect(await snapshot(t)).toBe(before);
    });
  });
});

describe('batch loading: SQL statements grow with the depth of a query, not with its rows', () => {
  let t: TestApp;
  const statements: string[] = [];

  beforeAll(async () => {
    // Only the statements of the queries: the event dispatcher and webhook worker read their own
    // (_restgraph_) tables in the background on timers.
    t = await startTestApp({ onSqlStatement: (sql) => (sql.includes('"_restgraph_') ? undefined : statements.push(sql)) });
    for (let u = 1; u <= 100; u++) {
      await create(t, 'users', { name: `User ${u}` });
      for (let p = 1; p <= 10; p++) await create(t, 'posts', { title: `Post ${u}.${p}`, userId: u });
    }
  }, 120_000);
  afterAll(async () => t.close());

  /** Runs a query and returns its data and the SQL statements it ran. */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the shape the test expects of data
  async function counted<D>(query: string): Promise<{ data: D; sql: string[] }> {
    statements.length = 0;
    const data = dataOf(await graphql<D>(t.app, query));
    return { data, sql: [...statements] };
  }

  interface Nested {
    users: { name: string; posts: { title: string; user: { name: string } }[] }[];
  }

  it('users(first: 100) { posts(first: 10) { user } }: 3 statements for 100 users, 1000 posts', async () => {
    const { data, sql } = await counted<Nested>('{ users(first: 100) { name posts(first: 10) { title user { name } } } }');
    expect(data.users).toHaveLength(100);
    for (const [i, user] of data.users.entries()) {
      expect(user.name).toBe(`User ${i + 1}`);
      expect(user.posts.map((p) => p.title)).toEqual(Array.from({ length: 10 }, (_, p) => `Post ${i + 1}.${p + 1}`));
      for (const post of user.posts) expect(post.user).toEqual({ name: user.name });
    }
    expect(sql, sql.join('\n')).toHaveLength(3);
  });

  it('the same query over 10 users runs the same number of statements', async () => {
    const hundred = await counted<Nested>('{ users(first: 100) { name posts(first: 10) { title user { name } } } }');
    const ten = await counted<Nested>('{ users(first: 10) { name posts(first: 10) { title user { name } } } }');
    expect(ten.data.users).toHaveLength(10);
    expect(ten.sql).toHaveLength(hundred.sql.length);
    const one = await counted<Nested>('{ users(first: 1) { name posts(first: 1) { title user { name } } } }');
    expect(one.sql).toHaveLength(hundred.sql.length);
  });

  interface ConnectionShape {
    usersConnection: {
      totalCount: number;
      pageInfo: { hasNextPage: boolean };
      edges: { node: { name: string; postsConnection: { totalCount: number; pageInfo: { hasNextPage: boolean }; edges: { node: { title: string; user: { name: string } } }[] } } }[];
    };
  }
  const connectionQuery = (n: number, totals: boolean): string =>
    `{ usersConnection(first: ${n}) { ${totals ? 'totalCount' : ''} pageInfo { hasNextPage } edges { cursor node { name postsConnection(first: 5) { ${totals ? 'totalCount' : ''} pageInfo { hasNextPage endCursor } edges { node { title user { name } } } } } } } }`;

  it('usersConnection { totalCount … postsConnection { totalCount … } }: the same statements for 100 users as for 10', async () => {
    const hundred = await counted<ConnectionShape>(connectionQuery(100, true));
    const data = hundred.data.usersConnection;
    expect(data.totalCount).toBe(100);
    expect(data.pageInfo.hasNextPage).toBe(false);
    expect(data.edges).toHaveLength(100);
    for (const edge of data.edges) {
      expect(edge.node.postsConnection.totalCount).toBe(10);
      expect(edge.node.postsConnection.pageInfo.hasNextPage).toBe(true);
      expect(edge.node.postsConnection.edges).toHaveLength(5);
      for (const post of edge.node.postsConnection.edges) expect(post.node.user.name).toBe(edge.node.name);
    }
    // users page, users count, posts pages, posts counts, users of the posts.
    expect(hundred.sql, hundred.sql.join('\n')).toHaveLength(5);
    const ten = await counted<ConnectionShape>(connectionQuery(10, true));
    expect(ten.data.usersConnection.edges).toHaveLength(10);
    expect(ten.data.usersConnection.pageInfo.hasNextPage).toBe(true);
    expect(ten.sql).toHaveLength(hundred.sql.length);
  });

  it('without totalCount the connections cost one statement per level; each totalCount costs one statement more (as its description says)', async () => {
    const plain = await counted<ConnectionShape>(connectionQuery(100, false));
    expect(plain.sql, plain.sql.join('\n')).toHaveLength(3);
    const counting = await counted<ConnectionShape>(connectionQuery(100, true));
    const isCount = (sql: string): boolean => /count\(\*\)/.test(sql);
    expect(counting.sql.filter(isCount)).toHaveLength(2);
    expect(counting.sql, counting.sql.join('\n')).toHaveLength(5);
    // The counts are all that totalCount adds: the other statements are those of the plain query.
    expect(counting.sql.filter((sql) => !isCount(sql))).toEqual(plain.sql);
  });

  it('the same relation asked twice with different arguments costs one statement per argument set', async () => {
    const { data, sql } = await counted<{ users: { first: { title: string }[]; last: { title: string }[] }[] }>(
      '{ users(first: 50) { first: posts(first: 2) { title } last: posts(last: 2) { title } } }',
    );
    expect(data.users).toHaveLength(50);
    expect(data.users[49]).toEqual({ first: [{ title: 'Post 50.1' }, { title: 'Post 50.2' }], last: [{ title: 'Post 50.9' }, { title: 'Post 50.10' }] });
    expect(sql).toHaveLength(3);
  });

  it('the seed example runs 2 statements', async () => {
    const { data, sql } = await counted<{ user: { name: string; posts: { title: string }[] } }>('{ user(id: "1") { name posts(last: 2) { title } } }');
    expect(data).toEqual({ user: { name: 'User 1', posts: [{ title: 'Post 1.9' }, { title: 'Post 1.10' }] } });
    expect(sql).toHaveLength(2);
  });
});
