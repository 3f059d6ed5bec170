import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { PRINCIPALS, postWriteStatus, seesPost, seesUser, type Post, type User } from './helpers/multi-tenant-model.js';
import { credentialOf, seedMultiTenant } from './helpers/multi-tenant-seed.js';
import { RULES_JWT_SECRET } from './helpers/rule-tokens.js';

/**
 * The json-server compatibility routes (docs/json-server.md) under the access rules of the
 * multi-tenant matrix (test/access-rules-matrix.test.ts): json-server's paging, filters, search,
 * `_where`, `_embed`, `_expand` and nested routes list, count and write exactly what the rules
 * allow each principal, as restgraph's own parameters do.
 */

type Row = Record<string, unknown> & { id: number };

describe('the multi-tenant matrix under --compat json-server', () => {
  let t: TestApp;
  let users: User[];
  let posts: Post[];
  const authorization = new Map<string, string>();

  beforeAll(async () => {
    t = await startTestApp({ schema: 'examples/multi-tenant.yaml', jwt: { secret: RULES_JWT_SECRET }, compat: 'json-server' });
    ({ users, posts } = await seedMultiTenant(t.app));
    for (const who of PRINCIPALS) {
      const header = await credentialOf(t.app, who);
      if (header !== undefined) authorization.set(who.name, header);
    }
  });
  afterAll(async () => t.close());

  for (const who of PRINCIPALS) {
    it(`${who.name}: paging, filters, search, _where, _embed, _expand and nested routes`, async () => {
      const header = authorization.get(who.name);
      if (header === undefined) throw new Error(`no credential was made for ${who.name}`);
      const headers = { authorization: header };
      const get = async (url: string): Promise<{ status: number; body: unknown; total: string | undefined }> => {
        const response = await t.app.inject({ url, headers });
        return { status: response.statusCode, body: json(response), total: response.headers['x-total-count'] as string | undefined };
      };
      const ids = (rows: unknown): number[] => (rows as Row[]).map((r) => r.id);
      const visible = posts.filter((p) => seesPost(who, p));
      const drafts = visible.filter((p) => !p.published);

      // 0.17's _page/_limit, page by page; 1.x's envelope; _start/_end.
      const paged: number[] = [];
      for (let page = 1; page <= Math.ceil(posts.length / 2); page++) {
        const answer = await get(`/posts?_page=${page}&_limit=2`);
        expect(answer.status).toBe(200);
        expect(answer.total).toBe(String(visible.length));
        paged.push(...ids(answer.body));
      }
      expect(paged).toEqual(ids(visible));
      const envelope = await get('/posts?_page=1&_per_page=100');
      expect(envelope.body).toMatchObject({ items: visible.length });
      expect(ids((envelope.body as { data: Row[] }).data)).toEqual(ids(visible));
      expect((await get('/posts?_start=0&_end=100')).total).toBe(String(visible.length));

      // Filters, search and _where count only the visible rows.
      expect(ids((await get('/posts?published=false')).body)).toEqual(ids(drafts));
      expect(ids((await get('/posts?q=SECRET')).body)).toEqual(ids(drafts));
      expect(ids((await get('/posts?title_like=draft')).body)).toEqual(ids(drafts));
      expect(ids((await get(`/posts?_where=${encodeURIComponent('{"published":{"eq":false}}')}`)).body)).toEqual(ids(drafts));

      // _expand (the author, or nothing when it cannot be read) and _embed, nested routes.
      for (const post of posts) {
        const expanded = await get(`/posts/${post.id}?_expand=author`);
        // Expanding users needs their read access: without a credential, a 401 for every post.
        if (who.anonymous || !seesPost(who, post)) {
          expect(expanded.status, `post ${post.id}`).toBe(who.anonymous ? 401 : 404);
          continue;
        }
        const author = (expanded.body as { author?: Row | null }).author ?? null;
        expect(author?.id ?? null, `author of post ${post.id}`).toBe(seesUser(who, users[post.authorId - 1] as User) ? post.authorId : null);
      }
      for (const user of users) {
        const embedded = await get(`/users/${user.id}?_embed=posts`);
        const nested = await get(`/users/${user.id}/posts`);
        const expected = who.anonymous ? 401 : seesUser(who, user) ? 200 : 404;
        expect([embedded.status, nested.status], `user ${user.id}`).toEqual([expected, expected]);
        if (expected !== 200) continue;
        const mine = ids(visible.filter((p) => p.authorId === user.id));
        expect(ids((embedded.body as { posts: Row[] }).posts)).toEqual(mine);
        expect(ids(nested.body)).toEqual(mine);
      }

      // The nested POST sets authorId from the route; the create rule decides on the row as stored
      // (under a parent the principal cannot read too: a 403 there, as for POST /posts naming it).
      for (const user of [users[0], users[2]] as User[]) {
        const before = (await t.app.inject({ url: '/posts?_start=0&_end=1' })).headers['x-total-count'];
        const created = await t.app.inject({ method: 'POST', url: `/users/${user.id}/posts`, headers, payload: { title: 'nested', orgId: user.orgId } });
        const status = postWriteStatus(who, 'create', undefined, { orgId: user.orgId, authorId: user.id });
        expect(created.statusCode, `POST /users/${user.id}/posts: ${created.body}`).toBe(status);
        if (created.statusCode === 201) expect((await t.app.inject({ method: 'DELETE', url: `/posts/${json<Post>(created).id}` })).statusCode).toBe(200);
        else expect((await t.app.inject({ url: '/posts?_start=0&_end=1' })).headers['x-total-count']).toBe(before);
      }
    });
  }
});
