import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * Field read access (docs/auth.md#field-access) through REST and GraphQL: a field the principal may
 * not read on a row is left out of REST bodies (lists, one row, relation routes, include, fields=,
 * write answers, json-server's routes) and is null with a `forbidden` error at its path in GraphQL;
 * filtering, sorting, searching, grouping or aggregating on a field it may not read on every row is
 * a 403, so no answer tells what the field holds.
 */

// Every answer conforms to /openapi.json, whose records do not require a restricted field.
checkResponsesAgainstOpenApi();

const SCHEMA = `
resources:
  users:
    access: { read: public, write: authenticated }
    fields:
      name: { type: string, required: true, searchable: true }
      email: { type: string, required: true, searchable: true, read: "id = @auth.sub or 'users:admin' in @auth.scopes" }
      salary: { type: integer, read: [users:admin] }
      bio: { type: string, read: "bioPublic = true or id = @auth.sub or 'users:admin' in @auth.scopes" }
      bioPublic: { type: boolean, default: false }
    relations:
      posts: { hasMany: posts, foreignKey: authorId }
      reviews: { hasMany: reviews, foreignKey: reviewerId }
  posts:
    access: { read: public, write: authenticated }
    fields:
      title: { type: string, required: true }
      authorId: { type: integer, references: users }
    relations:
      author: { belongsTo: users, foreignKey: authorId }
  reviews:
    access: { read: public, write: authenticated }
    fields:
      verdict: { type: string }
      reviewerId: { type: integer, references: users, read: "reviewerId = @auth.sub or 'users:admin' in @auth.scopes" }
    relations:
      reviewer: { belongsTo: users, foreignKey: reviewerId }
`;

const USERS = [
  { name: 'alice', email: 'alice@example.com', salary: 100, bio: 'alice bio', bioPublic: false },
  { name: 'bob', email: 'bob@example.com', salary: 200, bio: 'bob bio', bioPublic: true },
  { name: 'carol', email: 'carol@example.com', salary: 300, bio: 'carol bio', bioPublic: false },
];

type User = { id: number; name: string; email?: string; salary?: number; bio?: string; posts?: unknown[] };
type Post = { id: number; title: string; authorId: number; author?: User | null };

for (const compat of ['none', 'json-server'] as const) {
  describe(`field read access (${compat === 'none' ? 'restgraph queries' : 'json-server compat'})`, () => {
    let t: TestApp;
    let alice: string; // user 1
    let usersAdmin: string;

    beforeAll(async () => {
      t = await startTestApp({ schema: parseSchemaText(SCHEMA), jwt: { secret: RULES_JWT_SECRET }, ...(compat === 'none' ? {} : { compat }) });
      alice = await bearerJwt({ sub: '1' });
      usersAdmin = await bearerJwt({ sub: 'someone', scope: 'users:admin' });
      for (const user of USERS) expect((await t.app.inject({ method: 'POST', url: '/users', payload: user })).statusCode).toBe(201);
      for (const [title, authorId] of [['a1', 1], ['b1', 2], ['b2', 2]] as const) {
        expect((await t.app.inject({ method: 'POST', url: '/posts', payload: { title, authorId } })).statusCode).toBe(201);
      }
      for (const [verdict, reviewerId] of [['fine', 1], ['poor', 2]] as const) {
        expect((await t.app.inject({ method: 'POST', url: '/reviews', payload: { verdict, reviewerId } })).statusCode).toBe(201);
      }
    });
    afterAll(async () => t.close());

    const get = async <T>(url: string, authorization: string): Promise<T> => {
      const response = await t.app.inject({ url, headers: { authorization } });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
      return json<T>(response);
    };
    const emails = (users: User[]): (string | undefined)[] => users.map((u) => u.email);

    it('leaves a field out of lists where the principal may not read it', async () => {
      const anonymous = await get<User[]>('/users', '');
      expect(anonymous.map((u) => u.name)).toEqual(['alice', 'bob', 'carol']);
      expect(anonymous.every((u) => !('email' in u) && !('salary' in u))).toBe(true);
      expect(anonymous.map((u) => u.bio)).toEqual([undefined, 'bob bio', undefined]);
      const own = await get<User[]>('/users', alice);
      expect(emails(own)).toEqual(['alice@example.com', undefined, undefined]);
      expect(own.map((u) => u.bio)).toEqual(['alice bio', 'bob bio', undefined]);
      expect(own.every((u) => !('salary' in u))).toBe(true);
      for (const admin of [usersAdmin, undefined]) {
        const all = admin === undefined ? json<User[]>(await t.app.inject({ url: '/users' })) : await get<User[]>('/users', admin);
        expect(emails(all)).toEqual(USERS.map((u) => u.email));
        expect(all.map((u) => u.salary)).toEqual([100, 200, 300]);
      }
    });

    it('leaves it out of one row, relation routes and embeds', async () => {
      expect((await get<User>('/users/1', alice)).email).toBe('alice@example.com');
      const other = await get<User>('/users/2', alice);
      expect(other.name).toBe('bob');
      expect('email' in other).toBe(false);
      expect((await get<User>('/posts/2/author', alice)).email).toBeUndefined();
      expect((await get<User>('/posts/1/author', alice)).email).toBe('alice@example.com');
      const posts = await get<Post[]>('/posts?include=author', alice);
      expect(posts.map((p) => p.author?.email)).toEqual(['alice@example.com', undefined, undefined]);
      expect(posts.map((p) => p.author?.name)).toEqual(['alice', 'bob', 'bob']);
      expect((await get<Post>('/posts/2?include=author', alice)).author).not.toHaveProperty('email');
      const users = await get<User[]>('/users?include=posts', alice);
      expect(emails(users)).toEqual(['alice@example.com', undefined, undefined]);
      expect(users.map((u) => u.posts?.length)).toEqual([1, 2, 0]);
      expect((await get<Post[]>('/users/2/posts', alice)).map((p) => p.title)).toEqual(['b1', 'b2']);
      expect((await get<Post[]>('/users/2/posts', usersAdmin)).map((p) => p.title)).toEqual(['b1', 'b2']);
    });

    it('hides what a foreign key the principal may not read points to', async () => {
      const reviews = await get<{ verdict: string; reviewerId?: number; reviewer?: User | null }[]>('/reviews?include=reviewer', alice);
      expect(reviews.map((r) => [r.verdict, r.reviewerId, r.reviewer?.name])).toEqual([['fine', 1, 'alice'], ['poor', undefined, undefined]]);
      expect(reviews[1]).not.toHaveProperty('reviewer');
      expect((await get<User>('/reviews/1/reviewer', alice)).name).toBe('alice');
      const refused = compat === 'none'
        ? ['/reviews/2/reviewer', '/users/2/reviews', '/users?include=reviews', "/reviews?filter=reviewer.name = 'bob'", "/users?filter=reviews.any(verdict = 'poor')", '/reviews/aggregate?groupBy=reviewerId']
        : ['/reviews/2/reviewer', '/users/2/reviews', '/users?_embed=reviews', '/reviews?reviewerId=2'];
      for (const url of refused) {
        const response = await t.app.inject({ url, headers: { authorization: alice } });
        expect(response.statusCode, `${url}: ${response.body}`).toBe(403);
        const admin = await t.app.inject({ url, headers: { authorization: usersAdmin } });
        expect(admin.statusCode, `${url} (users:admin): ${admin.body}`).toBe(200);
      }
    });

    it('reads the fields a rule tests under fields=, and shows only what was asked', async () => {
      if (compat !== 'none') return;
      const shown = await get<User[]>('/users?fields=name,bio', alice);
      expect(shown).toEqual([{ name: 'alice', bio: 'alice bio' }, { name: 'bob', bio: 'bob bio' }, { name: 'carol' }]);
      expect(await get<User[]>('/users?fields=email', alice)).toEqual([{ email: 'alice@example.com' }, {}, {}]);
      expect(await get<User>('/users/2?fields=name,email', alice)).toEqual({ name: 'bob' });
    });

    it('leaves it out of write answers', async () => {
      const created = await t.app.inject({ method: 'POST', url: '/users', headers: { authorization: alice }, payload: { name: 'dave', email: 'dave@example.com', salary: 1 } });
      expect(created.statusCode, created.body).toBe(201);
      const body = json<User>(created);
      expect(body.name).toBe('dave');
      expect('email' in body || 'salary' in body).toBe(false);
      const patched = await t.app.inject({ method: 'PATCH', url: `/users/${body.id}`, headers: { authorization: alice }, payload: { name: 'david' } });
      expect(patched.statusCode).toBe(200);
      expect(json<User>(patched)).not.toHaveProperty('email');
      const own = await t.app.inject({ method: 'PATCH', url: '/users/1', headers: { authorization: alice }, payload: { name: 'alice' } });
      expect(json<User>(own).email).toBe('alice@example.com');
      expect(json<User>(own)).not.toHaveProperty('salary');
      expect((await t.app.inject({ method: 'DELETE', url: `/users/${body.id}` })).statusCode).toBeLessThan(300);
    });

    it('takes an If-Match of the representation the principal was shown', async () => {
      const shown = await t.app.inject({ url: '/users/2', headers: { authorization: alice } });
      const tag = shown.headers.etag as string;
      const patched = await t.app.inject({ method: 'PATCH', url: '/users/2', headers: { authorization: alice, 'if-match': tag }, payload: { name: 'bob' } });
      expect(patched.statusCode, patched.body).toBe(200);
    });

    const oracles = compat === 'none'
      ? [
          "/users?filter=email ~ 'a'",
          "/users?filter=name = 'alice' or not (email ~ 'b')",
          '/users?email=bob@example.com',
          '/users?email[startsWith]=b',
          "/users?filter=bio = 'bob bio'",
          '/users?sort=email',
          '/users?sort=-salary',
          '/users?search=bob',
          '/users?fields=name&sort=bio',
          '/users/aggregate?groupBy=email',
          '/users/aggregate?sum=salary',
          '/users/aggregate?min=email',
          '/users/aggregate?countDistinct=bio',
          "/users/aggregate?filter=salary > 150",
          "/posts?filter=author.email ~ 'bob'",
          "/posts/aggregate?filter=author.salary > 150",
          "/users?filter=posts.any(title = 'b1') and email ~ 'b'",
          '/users/2/posts?sort=title&filter=author.email ~ \'b\'',
        ]
      : ['/users?email=bob@example.com', '/users?email_like=b', '/users?q=bob', '/users?_sort=email', '/users?email_ne=x', `/users?_where=${encodeURIComponent(JSON.stringify({ or: [{ name: { eq: 'x' } }, { email: { eq: 'bob@example.com' } }] }))}`, '/users?salary:gt=150'];

    it('refuses every filter, sort, search and group that would tell what the field holds', async () => {
      for (const url of oracles) {
        for (const authorization of ['', alice]) {
          const response = await t.app.inject({ url, headers: { authorization } });
          expect(response.statusCode, `${url}: ${response.body}`).toBe(403);
          expect(json<{ code: string }>(response).code).toBe('forbidden');
        }
        for (const admin of [usersAdmin, undefined]) {
          const response = await t.app.inject({ url, ...(admin === undefined ? {} : { headers: { authorization: admin } }) });
          expect(response.statusCode, `${url} (${admin === undefined ? 'admin' : 'users:admin'}): ${response.body}`).toBe(200);
        }
      }
    });

    it('still filters and sorts by the fields everyone reads', async () => {
      const url = compat === 'none' ? "/users?filter=name ~ 'o'&sort=-name" : '/users?name_like=o&_sort=name&_order=desc';
      expect((await get<User[]>(url, alice)).map((u) => u.name)).toEqual(['carol', 'bob']);
    });

    if (compat !== 'none') return;

    const graphql = async (query: string, authorization: string): Promise<{ data: Record<string, unknown> | null; errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string } }[] }> => {
      const response = await t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization, 'content-type': 'application/json' }, payload: JSON.stringify({ query }) });
      expect(response.statusCode, response.body).toBe(200);
      return json(response);
    };

    it('answers null with a forbidden error at the path in GraphQL', async () => {
      const answer = await graphql('{ users { id name email bio } }', alice);
      expect(answer.data).toEqual({
        users: [
          { id: '1', name: 'alice', email: 'alice@example.com', bio: 'alice bio' },
          { id: '2', name: 'bob', email: null, bio: 'bob bio' },
          { id: '3', name: 'carol', email: null, bio: null },
        ],
      });
      const paths = (answer.errors ?? []).map((e) => [e.path?.join('.'), e.extensions?.code]);
      expect(paths.sort()).toEqual([['users.1.email', 'forbidden'], ['users.2.bio', 'forbidden'], ['users.2.email', 'forbidden']]);
      const nested = await graphql('{ posts { title author { name email posts { title } } } user(id: "2") { salary } }', alice);
      expect(nested.data).toEqual({
        posts: [
          { title: 'a1', author: { name: 'alice', email: 'alice@example.com', posts: [{ title: 'a1' }] } },
          { title: 'b1', author: { name: 'bob', email: null, posts: [{ title: 'b1' }, { title: 'b2' }] } },
          { title: 'b2', author: { name: 'bob', email: null, posts: [{ title: 'b1' }, { title: 'b2' }] } },
        ],
        user: { salary: null },
      });
      expect((nested.errors ?? []).map((e) => e.path?.join('.')).sort()).toEqual(['posts.1.author.email', 'posts.2.author.email', 'user.salary']);
      const reviews = await graphql('{ reviews { verdict reviewer { name } } }', alice);
      expect(reviews.data).toEqual({ reviews: [{ verdict: 'fine', reviewer: { name: 'alice' } }, { verdict: 'poor', reviewer: null }] });
      expect(reviews.errors?.map((e) => [e.path?.join('.'), e.extensions?.code])).toEqual([['reviews.1.reviewer', 'forbidden']]);
      const admin = await graphql('{ users { email salary } }', usersAdmin);
      expect(admin.errors).toBeUndefined();
      expect(admin.data).toEqual({ users: USERS.map((u) => ({ email: u.email, salary: u.salary })) });
    });

    it('makes restricted fields nullable in the GraphQL schema', async () => {
      const answer = await graphql('{ __type(name: "User") { fields { name type { kind } } } }', '');
      const kinds = Object.fromEntries((answer.data?.__type as { fields: { name: string; type: { kind: string } }[] }).fields.map((f) => [f.name, f.type.kind]));
      expect(kinds.email).toBe('SCALAR');
      expect(kinds.name).toBe('NON_NULL');
    });

    it('refuses GraphQL filters, sorts, searches and aggregates on the field', async () => {
      const queries = [
        '{ users(where: { email: { contains: "b" } }) { id } }',
        '{ users(filter: { email: { eq: "bob@example.com" } }) { id } }',
        '{ users(where: { _or: [{ name: { eq: "x" } }, { _not: { bio: { eq: "bob bio" } } }] }) { id } }',
        '{ users(sort: [SALARY_DESC]) { id } }',
        '{ usersConnection(sort: [EMAIL_ASC]) { totalCount } }',
        '{ users(search: "bob") { id } }',
        '{ usersAggregate(groupBy: [email]) { count } }',
        '{ usersAggregate { sum { salary } } }',
        '{ posts(where: { author: { email: { eq: "bob@example.com" } } }) { id } }',
        '{ user(id: "2") { name } posts { author { posts(sort: [TITLE_ASC]) { id } } } }',
        '{ users { reviews { id } } }',
        '{ users { reviewsConnection { totalCount } } }',
        '{ users { reviewsAggregate { count } } }',
      ];
      for (const query of queries) {
        const answer = await graphql(query, alice);
        const refused = query.includes('TITLE_ASC') ? undefined : answer.errors?.[0];
        if (query.includes('TITLE_ASC')) {
          expect(answer.errors, query).toBeUndefined();
          continue;
        }
        expect(refused?.extensions?.code, `${query}: ${JSON.stringify(answer)}`).toBe('forbidden');
        const admin = await graphql(query, usersAdmin);
        expect(admin.errors, `${query} (users:admin): ${JSON.stringify(admin)}`).toBeUndefined();
      }
    });
  });
}
