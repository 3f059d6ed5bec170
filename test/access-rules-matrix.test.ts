import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { dataOf, graphql, type GraphqlReply } from './helpers/graphql-request.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { credentialOf, seedMultiTenant } from './helpers/multi-tenant-seed.js';
import { PRINCIPALS, postsByOrg, seesEmail, seesPost, seesUser, type Post, type User } from './helpers/multi-tenant-model.js';
import { runWriteMatrix } from './helpers/multi-tenant-writes.js';
import { RULES_JWT_SECRET } from './helpers/rule-tokens.js';

/**
 * Issue 35's matrix: the multi-tenant schema of docs/auth.md (examples/multi-tenant.yaml: three
 * tenants, published and draft posts, private emails, an admin) on the suite's database, every
 * principal of the model (anonymous, an author, another author of the same tenant, a user of
 * another tenant, the admin, an API key with claims, JWTs with claims and scopes, one without a
 * subject) × every read interface (REST lists with counts and cursors, single rows, include,
 * relation routes, aggregates, search, relation paths in filters; GraphQL lists, connections and
 * totalCount, single rows, nested relations and their aggregates, aggregates, search) and every
 * write (REST and GraphQL creates, updates, deletes), each answer held to the in-memory model
 * (test/helpers/multi-tenant-model.ts): no row, field or count the rules hide, no write they
 * refuse, every one they allow. Subscriptions and /v1/events: access-rules-matrix-events.test.ts.
 */

type Row = Record<string, unknown> & { id: number };

describe('the multi-tenant matrix', () => {
  let t: TestApp;
  const users: User[] = [];
  const posts: Post[] = [];
  /** Each principal's Authorization header ('' for none); absent: it cannot be made here yet. */
  const authorization = new Map<string, string>();

  beforeAll(async () => {
    t = await startTestApp({ schema: 'examples/multi-tenant.yaml', jwt: { secret: RULES_JWT_SECRET } });
    const seeded = await seedMultiTenant(t.app);
    users.push(...seeded.users);
    posts.push(...seeded.posts);
    for (const who of PRINCIPALS) {
      const header = await credentialOf(t.app, who);
      if (header !== undefined) authorization.set(who.name, header);
    }
  });
  afterAll(async () => t.close());

  for (const who of PRINCIPALS) {
    describe(who.name, () => {
      const headers = (_context: TestContext): { authorization: string } => {
        const header = authorization.get(who.name);
        if (header === undefined) throw new Error(`no credential was made for ${who.name}`);
        return { authorization: header };
      };
      const visiblePosts = (): Post[] => posts.filter((p) => seesPost(who, p));
      const ids = (rows: readonly { id: number | string }[]): number[] => rows.map((r) => Number(r.id));

      it('REST lists: the rows, X-Total-Count and every cursor page', async (context) => {
        const h = headers(context);
        const pages: number[] = [];
        let url: string | undefined = '/posts?count=true&limit=2&sort=id';
        while (url !== undefined) {
          const page: LightMyRequestResponse = await t.app.inject({ url, headers: h });
          expect(page.statusCode, page.body).toBe(200);
          expect(page.headers['x-total-count']).toBe(String(visiblePosts().length));
          pages.push(...ids(json<Row[]>(page)));
          url = /<([^>]+)>; rel="next"/.exec(String(page.headers.link ?? ''))?.[1]?.replace(/^https?:\/\/[^/]+/, '');
        }
        expect(pages).toEqual(ids(visiblePosts()));
        const head = await t.app.inject({ method: 'HEAD', url: '/posts?count=true', headers: h });
        expect(head.headers['x-total-count'], 'HEAD').toBe(String(visiblePosts().length));
        const drafts = await t.app.inject({ url: '/posts?filter=published = false&count=true', headers: h });
        expect(ids(json<Row[]>(drafts))).toEqual(ids(visiblePosts().filter((p) => !p.published)));
        const usersList = await t.app.inject({ url: '/users?count=true', headers: h });
        if (who.anonymous) {
          expect(usersList.statusCode).toBe(401);
        } else {
          expect(ids(json<Row[]>(usersList))).toEqual(ids(users.filter((u) => seesUser(who, u))));
          expect(usersList.headers['x-total-count']).toBe(String(users.filter((u) => seesUser(who, u)).length));
        }
      });

      it('REST single rows: 200 with the row, or 404', async (context) => {
        const h = headers(context);
        for (const post of posts) {
          const read = await t.app.inject({ url: `/posts/${post.id}`, headers: h });
          expect(read.statusCode, `post ${post.id}`).toBe(seesPost(who, post) ? 200 : 404);
          if (read.statusCode === 200) expect(json<Post>(read)).toMatchObject(post);
        }
        for (const user of users) {
          const read = await t.app.inject({ url: `/users/${user.id}`, headers: h });
          expect(read.statusCode, `user ${user.id}`).toBe(who.anonymous ? 401 : seesUser(who, user) ? 200 : 404);
        }
      });

      it('REST include and relation routes', async (context) => {
        const h = headers(context);
        if (!who.anonymous) {
          const embedded = await t.app.inject({ url: '/users?include=posts', headers: h });
          expect(embedded.statusCode).toBe(200);
          const expected = users.filter((u) => seesUser(who, u)).map((u) => ({ id: u.id, posts: ids(visiblePosts().filter((p) => p.authorId === u.id)) }));
          expect(json<(Row & { posts: Row[] })[]>(embedded).map((u) => ({ id: u.id, posts: ids(u.posts) }))).toEqual(expected);
          for (const user of users) {
            const route = await t.app.inject({ url: `/users/${user.id}/posts?count=true`, headers: h });
            if (!seesUser(who, user)) {
              expect(route.statusCode, `users/${user.id}/posts`).toBe(404);
              continue;
            }
            expect(route.statusCode).toBe(200);
            const mine = visiblePosts().filter((p) => p.authorId === user.id);
            expect(ids(json<Row[]>(route))).toEqual(ids(mine));
            expect(route.headers['x-total-count']).toBe(String(mine.length));
          }
        }
        const withAuthors = await t.app.inject({ url: '/posts?include=author', headers: h });
        // Embedding users needs their read access: an anonymous request is asked for a credential.
        expect(withAuthors.statusCode).toBe(who.anonymous ? 401 : 200);
        if (!who.anonymous) {
          const expected = visiblePosts().map((p) => ({ id: p.id, author: seesUser(who, users[p.authorId - 1] as User) ? p.authorId : null }));
          expect(json<(Row & { author: Row | null })[]>(withAuthors).map((p) => ({ id: p.id, author: p.author?.id ?? null }))).toEqual(expected);
        }
        for (const post of posts) {
          const author = await t.app.inject({ url: `/posts/${post.id}/author`, headers: h });
          expect(author.statusCode, `posts/${post.id}/author`).toBe(who.anonymous ? 401 : seesPost(who, post) && seesUser(who, users[post.authorId - 1] as User) ? 200 : 404);
        }
      });

      it('REST aggregates, search and relation paths in filters', async (context) => {
        const h = headers(context);
        const aggregate = await t.app.inject({ url: '/posts/aggregate?groupBy=orgId&count=true&sum=views', headers: h });
        expect(aggregate.statusCode, aggregate.body).toBe(200);
        expect(json(aggregate)).toEqual(postsByOrg(who, posts));
        for (const [words, matches] of [['draft', (p: Post) => !p.published], ['secret', (p: Post) => !p.published], ['report', (p: Post) => p.published]] as const) {
          const found = await t.app.inject({ url: `/posts?search=${words}&count=true&sort=id`, headers: h });
          expect(found.statusCode, found.body).toBe(200);
          expect(ids(json<Row[]>(found)), `search=${words}`).toEqual(ids(visiblePosts().filter(matches)));
          expect(found.headers['x-total-count']).toBe(String(visiblePosts().filter(matches).length));
        }
        if (!who.anonymous) {
          const byAuthor = await t.app.inject({ url: `/posts?filter=${encodeURIComponent("author.name = 'amy' or author.name = 'gus'")}`, headers: h });
          expect(byAuthor.statusCode, byAuthor.body).toBe(200);
          // A hasMany path too: the users with a draft the principal may read.
          const withDrafts = await t.app.inject({ url: `/users?filter=${encodeURIComponent('posts.any(published = false)')}`, headers: h });
          expect(ids(json<Row[]>(withDrafts))).toEqual(ids(users.filter((u) => seesUser(who, u) && visiblePosts().some((p) => p.authorId === u.id && !p.published))));
          const where = await graphql<{ users: { id: string }[] }>(t.app, '{ users(where: { posts: { _some: { published: { eq: false } } } }, first: 100) { id } }', { headers: h });
          expect(ids(dataOf(where).users)).toEqual(ids(json<Row[]>(withDrafts)));
          // A relation path sees only the related rows the principal may read (gus is not acme's).
          expect(ids(json<Row[]>(byAuthor))).toEqual(ids(visiblePosts().filter((p) => (p.authorId === 2 || p.authorId === 3) && seesUser(who, users[p.authorId - 1] as User))));
        }
      });

      it('GraphQL lists, connections with totalCount and cursors, single rows, nested relations, aggregates and search', async (context) => {
        const h = headers(context);
        type Page = { postsConnection: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: { id: string }[] } };
        const paged: number[] = [];
        let after: string | null = null;
        for (;;) {
          const reply: GraphqlReply<Page> = await graphql<Page>(t.app, 'query ($after: String) { postsConnection(first: 2, after: $after, sort: [ID_ASC]) { totalCount pageInfo { hasNextPage endCursor } nodes { id } } }', { headers: h, variables: { after } });
          const page = dataOf(reply).postsConnection;
          expect(page.totalCount).toBe(visiblePosts().length);
          paged.push(...ids(page.nodes));
          if (!page.pageInfo.hasNextPage) break;
          after = page.pageInfo.endCursor;
        }
        expect(paged).toEqual(ids(visiblePosts()));
        type Lists = { posts: { id: string; author: { id: string } | null }[]; drafts: { id: string }[]; postsAggregate: unknown[] };
        const lists = dataOf(await graphql<Lists>(t.app, '{ posts(first: 100, sort: [ID_ASC]) { id author { id } } drafts: posts(search: "draft", first: 100, sort: [ID_ASC]) { id } postsAggregate(groupBy: [orgId]) { group { orgId } count sum { views } } }', { headers: h }));
        expect(ids(lists.posts)).toEqual(ids(visiblePosts()));
        expect(lists.posts.map((p) => (p.author === null ? null : Number(p.author.id)))).toEqual(visiblePosts().map((p) => (seesUser(who, users[p.authorId - 1] as User) ? p.authorId : null)));
        expect(ids(lists.drafts)).toEqual(ids(visiblePosts().filter((p) => !p.published)));
        expect(lists.postsAggregate).toEqual(postsByOrg(who, posts));
        for (const post of posts) {
          const one = await graphql<{ post: { id: string } | null }>(t.app, `{ post(id: "${post.id}") { id } }`, { headers: h });
          expect(one.body.data?.post ?? null, `post ${post.id}`).toEqual(seesPost(who, post) ? { id: String(post.id) } : null);
        }
        type Nested = { users: { id: string; posts: { id: string }[]; postsConnection: { totalCount: number }; postsAggregate: { count: number } }[] | null };
        const nested = await graphql<Nested>(t.app, '{ users(first: 100) { id posts(first: 100, sort: [ID_ASC]) { id } postsConnection { totalCount } postsAggregate { count } } }', { headers: h });
        if (who.anonymous) {
          expect(nested.body.data?.users ?? null).toBeNull();
          expect(nested.body.errors?.map((e) => e.extensions.code)).toEqual(['authentication-required']);
          return;
        }
        const expected = users.filter((u) => seesUser(who, u)).map((u) => {
          const mine = ids(visiblePosts().filter((p) => p.authorId === u.id));
          return { id: u.id, posts: mine, total: mine.length, count: mine.length };
        });
        expect(dataOf(nested).users?.map((u) => ({ id: Number(u.id), posts: ids(u.posts), total: u.postsConnection.totalCount, count: u.postsAggregate.count }))).toEqual(expected);
      });

      // Field access (issue 35 point 2) is being built on another branch.
      it('REST and GraphQL leave out the emails the rules hide; filtering, sorting or searching on email is a 403', async (context) => {
        const h = headers(context);
        if (who.anonymous) return;
        const listed = json<(Row & { email?: string })[]>(await t.app.inject({ url: '/users', headers: h }));
        for (const row of listed) {
          const user = users[row.id - 1] as User;
          if (seesEmail(who, user)) expect(row.email, `email of ${user.name}`).toBe(user.email);
          else expect(Object.hasOwn(row, 'email'), `email of ${user.name}`).toBe(false);
        }
        const reply = await graphql<{ users: { id: string; email: string | null }[] }>(t.app, '{ users(first: 100) { id email } }', { headers: h });
        const hidden = users.filter((u) => seesUser(who, u) && !seesEmail(who, u));
        expect(reply.body.data?.users.map((u) => u.email)).toEqual(users.filter((u) => seesUser(who, u)).map((u) => (seesEmail(who, u) ? u.email : null)));
        expect((reply.body.errors ?? []).map((e) => e.extensions.code)).toEqual(hidden.map(() => 'forbidden'));
        const everyEmail = users.every((u) => !seesUser(who, u) || seesEmail(who, u));
        for (const url of ["/users?filter=email ~ 'a'", '/users?sort=email', '/users/aggregate?groupBy=email&count=true']) {
          const response = await t.app.inject({ url: encodeURI(url), headers: h });
          expect(response.statusCode, url).toBe(everyEmail ? 200 : 403);
        }
      });
    });
  }

  describe('writes', () => {
    runWriteMatrix(() => ({ app: t.app, users, authorization }));
  });
});
