import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/test-app.js';
import { compileErrors, validate } from '@readme/openapi-parser';
import { comparable, JsonServerComparison, withoutIds } from './helpers/json-server-comparison.js';
import type { Answer } from './helpers/json-server-oracle.js';

/**
 * `restgraph serve db.json` against the real json-server, on the same db.json: every example of
 * json-server's READMEs (0.17.4 and 1.0.0-beta.15) that concerns routes and query parameters is sent
 * to json-server (a child process on a copy of the file) and to restgraph (the CLI as a child
 * process in a folder of its own: the schema inferred from the file, its data imported at the
 * start, json-server compatibility on by default), and the answers must be the same: status, body
 * (ids aside where 1.x writes ids as strings, or where the two number new rows differently;
 * restgraph's createdAt/updatedAt taken out), X-Total-Count and Link. Where restgraph deliberately
 * answers otherwise, the test says so and why (docs/json-server.md, docs/from-json-server.md).
 *
 * The READMEs' sections that concern routes and query parameters, and their tests here:
 * - 0.17 Plural routes: GET /posts, /posts/1 ("plural routes"); POST, PUT, PATCH, DELETE (the
 *   writes). Singular routes: GET /profile ("singular routes"), PUT, PATCH and POST /profile
 *   ("singular writes"; POST is a deliberate 405). Filter, Paginate, Sort, Slice, Operators,
 *   Full-text search, Relationships (_embed, _expand, GET and POST /posts/1/comments), Database
 *   (GET /db): every example, each section in its test, plus more cases of each.
 * - 1.x Routes: array resources (GET "array resources"; POST, PUT, PATCH and DELETE with
 *   _dependent in the writes) and object resources (GET /profile, PUT and PATCH /profile).
 *   Conditions (every operator; id:in=1,2,3 differs deliberately), Sort (_sort=title differs:
 *   1.x compares by locale), Pagination, Embed, Complex filter with `_where`, Delete dependents:
 *   every example.
 * - Where restgraph answers otherwise on purpose, the test's title says so and asserts both
 *   answers: errors as problem documents, ids never reused, fields left out of a PUT set to null,
 *   empty values sorting first, _like as text, POST /profile.
 * Not applicable (server set-up, not routes or query parameters), and why:
 * - 0.17 Homepage (GET /): json-server's own page; restgraph's / is an index of its own and
 *   /openapi.json its API description.
 * - 0.17 Extras (static file server, alternative port, access from anywhere, remote schema,
 *   generate random data, HTTPS, custom routes and routes.json, middlewares, CLI usage, module,
 *   deployment), 1.x Usage (db.json5, the options of `json-server --help`) and Static Files:
 *   restgraph's own options are in docs/cli.md; a remote, generated (db.js) or JSON5 database is
 *   not a db.json file. 1.x Query Capabilities repeats examples compared under its own sections
 *   (its `_where={"or":[...]}` is a placeholder, not JSON).
 * - 1.x Migration Notes: about json-server itself (its string ids are compared as such throughout).
 */

/** json-server's README db.json (its posts 1 and 2, comments 1 and 2, profile), and more rows for paging, sorting and search. */
const POSTS = [
  { id: 1, title: 'a title', views: 100 },
  { id: 2, title: 'another title', views: 200 },
  { id: 3, title: 'json-server', views: 15 },
  { id: 4, title: 'Hello world', views: 10 },
  { id: 5, title: 'hello, internet', views: 20 },
  { id: 6, title: 'Serverless: 50% off', views: 150 },
  { id: 7, title: '100_000 views', views: 100 },
  { id: 8, title: 'The Internet of things', views: 5 },
  { id: 9, title: 'zebra', views: 300 },
  { id: 10, title: 'Another world', views: 20 },
  { id: 11, title: 'last but one', views: 1 },
  { id: 12, title: 'last', views: 2 },
];
/**
 * `votes` (the README's `_sort=votes`) is given where the README sorts by it and null elsewhere:
 * json-server answers an explicit null as restgraph answers an empty field.
 */
const COMMENTS = [
  { id: 1, text: 'a comment about post 1', postId: 1, votes: 3 },
  { id: 2, text: 'another comment about post 1', postId: 1, votes: 1 },
  { id: 3, text: 'nice', postId: 2, votes: null },
  { id: 4, text: 'Great server', postId: 3, votes: null },
  { id: 5, text: 'meh', postId: 3, votes: null },
];
/** A collection with a json field (an object in every item): filters on it are refused. */
const SETTINGS = [{ id: 1, name: 'dark mode', prefs: { theme: 'dark' } }];
/** `drafts`: an empty collection, a resource without fields. */
const DB = { posts: POSTS, comments: COMMENTS, settings: SETTINGS, drafts: [], profile: { name: 'typicode' } };

const c = new JsonServerComparison();
const dir = tempDir('restgraph-json-server-');

beforeAll(async () => {
  await c.start(DB, dir.path);
}, 60_000);
afterAll(async () => {
  await c.stop();
  dir.cleanup();
});

const ids = (answer: Answer): unknown => (answer.body as { id: unknown }[]).map((r) => r.id);

describe("json-server 0.17's README examples", () => {
  const v = '0.17';

  it('plural routes: GET /posts and /posts/1; a collection with a json field; an empty collection', async () => {
    await c.expectSameForEach(v, [
      '/posts',
      '/posts/1',
      '/comments',
      '/settings',
      '/settings/1',
      '/drafts',
      '/drafts?_page=1&_limit=5',
    ]);
  });

  it('database: GET /db answers the whole data set, as 0.17 does (restgraph gives the singleton the id 1; 1.x has no /db)', async () => {
    const [ours, theirs, v1] = await Promise.all([c.restgraph('GET', '/db'), c.oracle('0.17').request('GET', '/db'), c.oracle('1.x').request('GET', '/db')]);
    expect(ours.status).toBe(200);
    const body = comparable(ours.body, false) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['posts', 'comments', 'settings', 'drafts', 'profile']);
    expect(body.profile).toEqual({ id: 1, name: 'typicode' });
    expect({ ...body, profile: withoutIds(body.profile) }).toEqual(theirs.body);
    expect(v1.status).toBe(404);
  });

  it('singular routes: GET /profile (restgraph gives the singleton the id 1)', async () => {
    const profile = await c.expectSame(v, 'GET', '/profile', undefined, { idsAside: true });
    expect(profile.body).toMatchObject({ id: 1, name: 'typicode' });
    // 0.17 reads no query parameter on a singular route; restgraph passes over an _embed it has no relation for.
    await c.expectSame(v, 'GET', '/profile?_embed=comments', undefined, { idsAside: true });
  });

  it('filter: field=value, repeated values, deep paths of fields no row has', async () => {
    await c.expectSame(v, 'GET', '/posts?title=json-server&author=typicode');
    expect(ids(await c.expectSame(v, 'GET', '/posts?id=1&id=2'))).toEqual([1, 2]);
    await c.expectSameForEach(v, [
      '/comments?author.name=typicode',
      '/posts?views=100',
      '/comments?postId=3',
    ]);
  });

  it('paginate: _page, _page with _limit (X-Total-Count and the Link header)', async () => {
    await c.expectSame(v, 'GET', '/posts?_page=7');
    await c.expectSame(v, 'GET', '/posts?_page=7&_limit=20');
    const page = await c.expectSame(v, 'GET', '/posts?_page=2&_limit=5');
    expect(page.totalCount).toBe('12');
    expect(page.link).toContain('rel="last"');
    await c.expectSameForEach(v, [
      '/posts?_page=1&_limit=5',
      '/posts?_page=3&_limit=5',
      '/posts?_page=1&_limit=20',
      '/posts?_page=1',
      '/posts?_page=2',
    ]);
  });

  it('sort: _sort with _order, on nested routes, several fields', async () => {
    expect(ids(await c.expectSame(v, 'GET', '/posts?_sort=views&_order=asc'))).toEqual([11, 12, 8, 4, 3, 5, 10, 1, 7, 6, 2, 9]);
    await c.expectSameForEach(v, [
      '/posts/1/comments?_sort=votes&_order=asc',
      '/posts?_sort=user,views&_order=desc,asc',
      '/posts?_sort=views,title&_order=desc,desc',
      '/posts?_sort=views&_order=desc',
      '/comments?_sort=postId,text&_order=desc',
    ]);
  });

  it('slice: _start with _end or _limit, with X-Total-Count', async () => {
    await c.expectSameForEach(v, [
      '/posts?_start=20&_end=30',
      '/posts/1/comments?_start=20&_end=30',
      '/posts/1/comments?_start=20&_limit=10',
    ]);
    expect(ids(await c.expectSame(v, 'GET', '/posts?_start=2&_end=5'))).toEqual([3, 4, 5]);
    await c.expectSameForEach(v, [
      '/posts?_start=3&_limit=2',
      '/posts?_end=2',
      '/posts?_limit=3&_sort=views&_order=desc',
      '/posts/1/comments?_start=1&_limit=10',
    ]);
  });

  it('operators: _gte and _lte, _ne, _like', async () => {
    expect(ids(await c.expectSame(v, 'GET', '/posts?views_gte=10&views_lte=20'))).toEqual([3, 4, 5, 10]);
    await c.expectSameForEach(v, [
      '/posts?id_ne=1',
      '/posts?title_like=server',
      '/posts?title_like=SERVER',
      '/posts?title_like=^last',
      '/posts?title_like=world$',
      '/posts?id_ne=1&id_ne=2',
      '/posts?views_gte=150&views_gte=300',
      '/posts?title_like=hello&title_like=zebra',
    ]);
  });

  it('full-text search: q', async () => {
    expect(ids(await c.expectSame(v, 'GET', '/posts?q=internet'))).toEqual([5, 8]);
    await c.expectSameForEach(v, [
      '/posts?q=INTERNET',
      '/comments?q=server',
      '/posts?q=',
    ]);
  });

  it('relationships: _embed, _expand on lists and single reads', async () => {
    await c.expectSameForEach(v, [
      '/posts?_embed=comments',
      '/posts/1?_embed=comments',
      '/comments?_expand=post',
      '/comments/1?_expand=post',
      '/posts?_embed=comments&_start=1&_end=3',
    ]);
  });

  it('relationships: _embed of a name that is no resource is ignored, as 1.x does (0.17 adds an empty array under that name to every row)', async () => {
    const theirs = await c.oracle(v).request('GET', '/posts/1?_embed=nothing');
    expect(theirs.body).toMatchObject({ nothing: [] });
    await c.expectSame('1.x', 'GET', '/posts?_embed=nothing');
    expect(await c.restgraph('GET', '/posts/1?_embed=nothing')).not.toHaveProperty('body.nothing');
  });

  it('nested routes: GET /posts/1/comments', async () => {
    expect(ids(await c.expectSame(v, 'GET', '/posts/1/comments'))).toEqual([1, 2]);
    await c.expectSame(v, 'GET', '/posts/3/comments?text=meh');
    await c.expectSame(v, 'GET', '/posts/4/comments');
  });
});

describe("json-server 1.x's README examples", () => {
  const v = '1.x';

  it('array resources: GET /posts and /posts/1; an empty collection', async () => {
    await c.expectSame(v, 'GET', '/posts');
    await c.expectSame(v, 'GET', '/posts/1');
    await c.expectSame(v, 'GET', '/drafts');
    await c.expectSame(v, 'GET', '/drafts?_page=1&_per_page=5');
  });

  it('object resources: GET /profile', async () => {
    await c.expectSame(v, 'GET', '/profile', undefined, { idsAside: true });
  });

  it('conditions: field:op=value', async () => {
    expect(ids(await c.expectSame(v, 'GET', '/posts?views:gt=100'))).toEqual([2, 6, 9]);
    await c.expectSameForEach(v, [
      '/posts?title:eq=Hello',
      '/posts?title:eq=Hello world',
      '/posts?author.name:eq=typicode',
      '/posts?title:contains=hello',
      '/posts?title:startsWith=Hello',
      '/posts?title:endsWith=world',
      '/posts?views:lt=10',
      '/posts?views:lte=10&views:gte=5',
      '/posts?views:ne=100',
      '/posts?views:in=100,200',
      '/posts?views_gt=150',
    ]);
  });

  it('conditions: id:in=1,2,3 (1.x compares its string ids with numbers, and finds none; restgraph ids are numbers)', async () => {
    const theirs = await c.oracle(v).request('GET', '/posts?id:in=1,2,3');
    expect(theirs.body).toEqual([]);
    expect(ids(await c.restgraph('GET', '/posts?id:in=1,2,3'))).toEqual([1, 2, 3]);
  });

  it('sort: _sort=field, _sort=-field, several fields', async () => {
    await c.expectSameForEach(v, [
      '/posts?_sort=-views',
      '/posts?_sort=views',
      '/posts?_sort=author.name,-views',
      '/comments?_sort=-postId,text',
    ]);
  });

  it('sort: _sort=title (1.x compares strings by locale, 0.17 and restgraph by code point)', async () => {
    const theirs = await c.oracle('0.17').request('GET', '/posts?_sort=title');
    const ours = await c.restgraph('GET', '/posts?_sort=title');
    expect(ids(ours)).toEqual((theirs.body as { id: number }[]).map((p) => p.id));
    expect((ours.body as { title: string }[])[0]?.title).toBe('100_000 views');
  });

  it('pagination: _page with _per_page, in an envelope', async () => {
    await c.expectSame(v, 'GET', '/posts?_page=1&_per_page=25');
    const envelope = await c.expectSame(v, 'GET', '/posts?_page=2&_per_page=5');
    expect(envelope.body).toMatchObject({ first: 1, prev: 1, next: 3, last: 3, pages: 3, items: 12 });
    await c.expectSameForEach(v, [
      '/posts?_page=1&_per_page=10',
      '/posts?_page=9&_per_page=5',
      '/posts?_page=1&_per_page=0',
      '/posts?_page=1&_per_page=x',
      '/posts?_per_page=5',
      '/posts?_page=2&_per_page=3&_sort=-views&views:gte=20',
    ]);
  });

  it('complex filter: _where, which takes the place of the other filters when it is a JSON object', async () => {
    const where = (value: unknown): string => `/posts?_where=${encodeURIComponent(JSON.stringify(value))}`;
    await c.expectSame(v, 'GET', where({ or: [{ views: { gt: 100 } }, { author: { name: { lt: 'm' } } }] }));
    expect(ids(await c.expectSame(v, 'GET', where({ or: [{ views: { gt: 100 } }, { title: { contains: 'WORLD' } }] })))).toEqual([2, 4, 6, 9, 10]);
    await c.expectSameForEach(v, [
      where({ views: { gte: 20, lte: 100 }, title: { startsWith: 'a' } }),
      `${where({ views: { lt: 10 } })}&views=100`,
      '/posts?_where=not-json&views=100',
      where({ or: [] }),
      where({ nope: { eq: 1 } }),
      where({ or: [{ or: [{ views: { in: [1, 2] } }] }, { title: { eq: 'zebra' } }] }),
    ]);
  });

  it('_where with a plain value is equality (1.x matches nothing); one nested too deep or too large is refused', async () => {
    const theirs = await c.oracle(v).request('GET', `/posts?_where=${encodeURIComponent('{"views":100}')}`);
    expect(theirs.body).toEqual([]);
    expect(ids(await c.restgraph('GET', `/posts?_where=${encodeURIComponent('{"views":100}')}`))).toEqual([1, 7]);
    let deep: unknown = { views: { gt: 1 } };
    for (let i = 0; i < 20; i++) deep = { or: [deep] };
    expect(await c.restgraph('GET', `/posts?_where=${encodeURIComponent(JSON.stringify(deep))}`)).toMatchObject({ status: 400, body: { code: 'invalid-query' } });
    const wide = { or: Array.from({ length: 150 }, (_, i) => ({ views: { eq: i } })) };
    expect(await c.restgraph('GET', `/posts?_where=${encodeURIComponent(JSON.stringify(wide))}`)).toMatchObject({ status: 400, body: { code: 'invalid-query' } });
  });

  it('embed: _embed=comments (children) and _embed=post (parent)', async () => {
    await c.expectSameForEach(v, [
      '/posts?_embed=comments',
      '/comments?_embed=post',
      '/posts/3?_embed=comments',
      '/comments/4?_embed=post',
    ]);
  });
});

describe('the API description', () => {
  it("the OpenAPI document describes json-server's parameters, envelope, DELETE answer and nested POST, and is valid OpenAPI 3.1 (the schema inferred from db.json, compat on by default)", async () => {
    const document = await c.openApi();
    const result = await validate(structuredClone(document) as unknown as Parameters<typeof validate>[0]);
    expect(result.valid ? 'valid' : compileErrors(result)).toBe('valid');
    expect(result.warnings).toEqual([]);
    const paths = document.paths as Record<string, Record<string, { parameters?: { $ref: string }[]; responses: Record<string, unknown> }>>;
    expect(paths['/posts']?.get?.parameters?.map((p) => p.$ref)).toContain('#/components/parameters/jsonServer._page');
    expect(Object.keys(paths['/posts/{id}']?.delete?.responses ?? {})).toContain('200');
    expect(paths['/posts/{id}/comments']?.post).toBeDefined();
    expect(paths['/comments/{id}/post']?.post).toBeUndefined();
    expect(Object.keys(paths['/profile'] ?? {}).sort()).toEqual(['get', 'patch', 'put']);
    // The singleton's GET reads one record (its answer is checked against this on every request above).
    expect(paths['/profile']?.get?.parameters?.map((p) => p.$ref)).toContain('#/components/parameters/jsonServer._embed');
    expect(paths['/profile']?.get?.parameters?.map((p) => p.$ref)).not.toContain('#/components/parameters/jsonServer._page');
  });

});

describe('hostile and odd input, as json-server 0.17 answers it', () => {
  const v = '0.17';

  it('negative, NaN and zero slice and page numbers read as Array.prototype.slice and parseInt read them', async () => {
    expect(ids(await c.expectSame(v, 'GET', '/posts?_start=-3&_end=-1'))).toEqual([10, 11]);
    await c.expectSameForEach(v, [
      '/posts?_start=-2&_limit=1',
      '/posts?_start=abc&_end=3',
      '/posts?_end=abc',
      '/posts?_limit=0',
      '/posts?_limit=-5',
      '/posts?_start=5',
      '/posts?_start=99999999999999999999&_end=1',
      '/posts?_start=100000000000000000000&_limit=2',
      '/posts?_page=0&_limit=5',
      '/posts?_page=-1&_limit=5',
      '/posts?_page=abc&_limit=5',
      '/posts?_page=1&_limit=abc',
    ]);
  });

  it('a page past any table (an offset of 1e21) is an empty page (1.x: its last page), not a database error', async () => {
    expect(await c.restgraph('GET', '/posts?_page=100000000000000000000&_limit=10')).toMatchObject({ status: 200, body: [] });
    const envelope = await c.restgraph('GET', '/posts?_page=100000000000000000000&_per_page=10');
    const last = await c.restgraph('GET', '/posts?_page=2&_per_page=10');
    expect(envelope.status).toBe(200);
    expect(envelope.body).toEqual(last.body);
  });

  it('unknown fields: a plain filter is ignored, one with an operator matches nothing', async () => {
    await c.expectSameForEach(v, [
      '/posts?nope=1',
      '/posts?nope_like=1',
      '/posts?nope_gte=1',
      '/posts?views=abc',
      '/posts?views_gte=abc',
      '/posts?_sort=nope&_order=desc',
      '/posts?_=123&callback=',
    ]);
  });

  it('q and _like match % and _ as text (LIKE wildcards escaped)', async () => {
    expect(ids(await c.expectSame(v, 'GET', '/posts?q=50%25'))).toEqual([6]);
    expect(ids(await c.expectSame(v, 'GET', '/posts?q=_'))).toEqual([7]);
    await c.expectSameForEach(v, [
      '/posts?title_like=%25',
      '/posts?title_like=0_0',
      '/posts?q=%5C',
    ]);
  });

  it('_like: a pattern that would backtrack for ever as a regular expression is text (0.17 runs it: zebra ends in a)', async () => {
    // Run as a regular expression, this pattern would not finish within the test's timeout.
    const evil = encodeURIComponent(`${'(a+)+'.repeat(200)}$`);
    expect((await c.restgraph('GET', `/posts?title_like=${evil}`)).body).toEqual([]);
    const theirs = await c.oracle(v).request('GET', `/posts?title_like=${encodeURIComponent('(a+)+$')}`);
    expect((theirs.body as { id: number }[]).map((p) => p.id)).toEqual([9]);
  });

  it('_like reads ^ and $ only: other regular-expression syntax is text (0.17 runs the RegExp; deliberate: no ReDoS)', async () => {
    const theirs = await c.oracle(v).request('GET', '/posts?title_like=a.title');
    expect((theirs.body as { id: number }[]).map((p) => p.id)).toEqual([1]);
    expect((await c.restgraph('GET', '/posts?title_like=a.title')).body).toEqual([]);
    const anchored = await c.restgraph('GET', '/posts?title_like=^a title$');
    expect(ids(anchored)).toEqual([1]);
  });

  it('q of 7 KB answers at once; a URL past 8 KiB is refused (414), as every restgraph URL is', async () => {
    expect((await c.restgraph('GET', `/posts?q=${'x'.repeat(7000)}`)).body).toEqual([]);
    const long = await c.restgraph('GET', `/posts?q=${'x'.repeat(10 * 1024)}`);
    expect(long.status).toBe(414);
  });

  it('a parameter given twice: the first value counts for _sort, _page and the like (0.17 fails with a 500 on a repeated _sort)', async () => {
    const theirs = await c.oracle(v).request('GET', '/posts?_sort=views&_sort=title');
    expect(theirs.status).toBe(500);
    const ours = await c.restgraph('GET', '/posts?_sort=views&_sort=title&_limit=3');
    expect(ids(ours)).toEqual([11, 12, 8]);
  });

  it('filters on json fields and paths into them are refused with 400 invalid-query (json-server compares their text)', async () => {
    for (const path of ['/settings?prefs.theme=dark', '/settings?prefs=x', '/settings?prefs_like=x']) {
      const answer = await c.restgraph('GET', path);
      expect(answer.status, path).toBe(400);
      expect(answer.body).toMatchObject({ code: 'invalid-query' });
    }
  });

  it("restgraph's own parameters keep working beside json-server's, and the two ways of paging or sorting do not mix", async () => {
    expect((await c.restgraph('GET', '/posts?sort=-views&limit=2&fields=id,title')).body).toEqual([{ id: 9, title: 'zebra' }, { id: 2, title: 'another title' }]);
    expect(ids(await c.restgraph('GET', '/posts?views[gte]=200&title_like=zebra'))).toEqual([9]);
    expect(ids(await c.restgraph('GET', '/posts?_sort=views&_order=desc&fields=id&_limit=2'))).toEqual([9, 2]);
    expect((await c.restgraph('GET', '/posts?_sort=views&sort=title')).status).toBe(400);
    expect((await c.restgraph('GET', '/posts?_page=1&limit=3')).status).toBe(400);
    expect((await c.restgraph('GET', '/posts?_start=1&_end=2&offset=3')).status).toBe(400);
    expect((await c.restgraph('GET', '/posts?include=comments&_embed=comments&_start=0&_end=1')).body).toMatchObject([{ id: 1, comments: [{ id: 1 }, { id: 2 }] }]);
  });
});

describe('singular writes: PUT and PATCH /profile (both READMEs), POST /profile (0.17)', () => {
  it('PUT /profile replaces the profile and PATCH /profile changes it: 200 with the profile, as both versions answer', async () => {
    const replaced = await c.expectSameOnBoth('PUT', '/profile', { name: 'replaced' }, { idsAside: true });
    expect(replaced).toMatchObject({ status: 200, body: { id: 1, name: 'replaced' } });
    const patched = await c.expectSameOnBoth('PATCH', '/profile', { name: 'patched' }, { idsAside: true });
    expect(patched).toMatchObject({ status: 200, body: { id: 1, name: 'patched' } });
    await c.expectSameOnBoth('GET', '/profile', undefined, { idsAside: true });
  });

  it('POST /profile: 0.17 replaces the profile (201), 1.x has no such route (404); restgraph answers 405 (PUT replaces it)', async () => {
    const [ours, old, v1] = await Promise.all([
      c.restgraph('POST', '/profile', { name: 'posted' }),
      c.oracle('0.17').request('POST', '/profile', { name: 'posted' }),
      c.oracle('1.x').request('POST', '/profile', { name: 'posted' }),
    ]);
    expect(old).toMatchObject({ status: 201, body: { name: 'posted' } });
    expect(v1.status).toBe(404);
    expect(ours).toMatchObject({ status: 405, body: { code: 'method-not-allowed' } });
    expect((await c.restgraph('GET', '/profile')).body).toMatchObject({ name: 'patched' });
  });
});

describe('writes, nested create and deletes with dependents', () => {
  it('DELETE /posts/3?_dependent=comments: 200 {} as 0.17 answers (1.x answers the deleted post); its comments are gone in all three', async () => {
    const [ours, old, v1] = await Promise.all([
      c.restgraph('DELETE', '/posts/3?_dependent=comments'),
      c.oracle('0.17').request('DELETE', '/posts/3?_dependent=comments'),
      c.oracle('1.x').request('DELETE', '/posts/3?_dependent=comments'),
    ]);
    expect(ours).toEqual(old);
    expect(ours).toMatchObject({ status: 200, body: {} });
    expect(v1).toMatchObject({ status: 200, body: { id: '3', title: 'json-server' } });
    for (const version of ['0.17', '1.x'] as const) {
      await c.expectSame(version, 'GET', '/comments');
      await c.expectSame(version, 'GET', '/posts');
    }
  });

  it('PUT and PATCH of an existing post answer the post, as both versions do', async () => {
    for (const [method, body] of [['PUT', { title: 'another title, again', views: 201 }], ['PATCH', { views: 202 }]] as const) {
      const [ours, old, v1] = await Promise.all([c.restgraph(method, '/posts/2', body), c.oracle('0.17').request(method, '/posts/2', body), c.oracle('1.x').request(method, '/posts/2', body)]);
      expect(comparable(ours.body, false)).toEqual(old.body);
      expect(comparable(ours.body, true)).toEqual(v1.body);
      expect([ours.status, old.status, v1.status]).toEqual([200, 200, 200]);
    }
    await c.expectSame('1.x', 'GET', '/posts/2');
    await c.expectSame('0.17', 'GET', '/posts/2');
  });

  it('an empty collection: POST /drafts with an empty object creates a draft, as both versions do; a key no item of db.json had is refused (422: the schema is the file’s; json-server stores it)', async () => {
    const created = await c.expectSameOnBoth('POST', '/drafts', {}, { idsAside: true });
    expect(created).toMatchObject({ status: 201, body: { id: 1 } });
    const [ours, theirs] = await Promise.all([c.restgraph('POST', '/drafts', { label: 'x' }), c.oracle('0.17').request('POST', '/drafts', { label: 'x' })]);
    expect(theirs).toMatchObject({ status: 201, body: { label: 'x' } });
    expect(ours).toMatchObject({ status: 422, body: { code: 'validation-failed' } });
    expect(await c.restgraph('POST', '/posts', { title: 'x', views: 1, draft: true })).toMatchObject({ status: 422, body: { errors: [{ pointer: '/draft' }] } });
  });

  it('an unknown id: 404 as json-server answers, with a problem document instead of {} (errors stay problem+json)', async () => {
    for (const [method, body] of [['GET', undefined], ['PATCH', { title: 'x' }], ['PUT', { title: 'x', views: 1 }], ['DELETE', undefined]] as const) {
      const [ours, theirs] = await Promise.all([c.restgraph(method, '/posts/99', body), c.oracle('0.17').request(method, '/posts/99', body)]);
      expect(theirs).toMatchObject({ status: 404, body: {} });
      expect(ours).toMatchObject({ status: 404, body: { code: 'not-found' } });
    }
  });

  it('POST /posts: 201 with the created post, as both versions answer; PUT and PATCH: 200 with the post', async () => {
    // 1.x makes up an id of its own (a string of letters and digits): ids aside.
    const created = await c.expectSameOnBoth('POST', '/posts', { title: 'new post', views: 7 }, { idsAside: true });
    expect(created).toMatchObject({ status: 201, body: { id: 13, title: 'new post', views: 7 } });
    await c.expectSame('0.17', 'GET', '/posts/13');
    await c.expectSame('0.17', 'PUT', '/posts/13', { title: 'renamed', views: 8 });
    await c.expectSame('0.17', 'PATCH', '/posts/13', { views: 9 });
    await c.expectSame('0.17', 'GET', '/posts/13');
  });

  it('nested routes: POST /posts/1/comments creates a comment of post 1, then GET /posts/1/comments lists it', async () => {
    // 0.17 stores the parent's id as the path's text ("1"); restgraph's postId is an integer field.
    // The new comment's id: restgraph's 6 (ids are never reused), 0.17's 4 (the largest left plus one).
    const same = { stringIds: true, idsAside: true };
    const created = await c.expectSame('0.17', 'POST', '/posts/1/comments', { text: 'nested', postId: 2, votes: 5 }, same);
    expect(created).toMatchObject({ status: 201, body: { id: 6, text: 'nested', postId: 1 } });
    expect(ids(await c.expectSame('0.17', 'GET', '/posts/1/comments', undefined, same))).toEqual([1, 2, 6]);
    await c.expectSame('0.17', 'GET', '/posts/1/comments?text_like=NEST', undefined, same);
  });

  it('PUT with fields left out: 200, the fields left out set to null, where json-server drops the key (no field of a db.json is required, even one every item has)', async () => {
    const [post, oldPost] = await Promise.all([c.restgraph('PUT', '/posts/13', { title: 'only a title' }), c.oracle('0.17').request('PUT', '/posts/13', { title: 'only a title' })]);
    expect(oldPost).toMatchObject({ status: 200, body: { id: 13, title: 'only a title' } });
    expect(oldPost.body).not.toHaveProperty('views');
    expect(post.status).toBe(200);
    expect(comparable(post.body, false)).toEqual({ id: 13, title: 'only a title', views: null });
    const [comment, oldComment] = await Promise.all([c.restgraph('PUT', '/comments/2', { text: 'only a text', postId: 1 }), c.oracle('0.17').request('PUT', '/comments/2', { text: 'only a text', postId: 1 })]);
    expect(oldComment).toMatchObject({ status: 200, body: { id: 2, text: 'only a text', postId: 1 } });
    expect(oldComment.body).not.toHaveProperty('votes');
    expect(comment.status).toBe(200);
    expect(comparable(comment.body, false)).toEqual({ id: 2, text: 'only a text', postId: 1, votes: null });
  });

  it('_ne leaves out rows where the field is empty, as 0.17 does; sorting puts them first ascending (0.17: last)', async () => {
    // Comment 2 has no votes since the PUT above (0.17: no key; restgraph: null); comment 3 has null.
    expect(ids(await c.expectSame('0.17', 'GET', '/comments?votes_ne=3', undefined, { stringIds: true, idsAside: true }))).toEqual([6]);
    const ours = await c.restgraph('GET', '/comments?_sort=votes&_limit=2');
    const theirs = await c.oracle('0.17').request('GET', '/comments?_sort=votes&_limit=2');
    expect(ids(ours)).toEqual([2, 3]);
    expect((theirs.body as { id: number }[]).map((p) => p.id)).toEqual([1, 4]);
  });

  it('DELETE /posts/1 without _dependent: its comments go too (0.17 removes rows left pointing nowhere; restgraph cascades)', async () => {
    await c.expectSame('0.17', 'DELETE', '/posts/1');
    expect(ids(await c.expectSame('0.17', 'GET', '/comments', undefined, { stringIds: true, idsAside: true }))).toEqual([3]);
  });

  it('a nested route of a post that does not exist: 404 (json-server lists nothing, or creates the comment pointing nowhere)', async () => {
    const theirs = await c.oracle('0.17').request('GET', '/posts/1/comments');
    expect(theirs).toMatchObject({ status: 200, body: [] });
    expect(await c.restgraph('GET', '/posts/1/comments')).toMatchObject({ status: 404, body: { code: 'not-found' } });
    expect(await c.restgraph('GET', '/posts/1/comments?_start=0&_end=5')).toMatchObject({ status: 404, body: { code: 'not-found' } });
    expect(await c.restgraph('GET', '/posts/1/comments?_page=1&_per_page=5')).toMatchObject({ status: 404, body: { code: 'not-found' } });
    const post = await c.restgraph('POST', '/posts/1/comments', { text: 'orphan' });
    expect(post.status).toBe(422);
  });

  it('POST /posts with an id of the client\'s choosing: 201 with that id, as 0.17 answers (1.x makes up its own); the next post numbered after it, as 0.17 numbers it; a taken id is a 409 (0.17: 500)', async () => {
    const [chosen, v1] = await Promise.all([c.expectSame('0.17', 'POST', '/posts', { id: 1000, title: 'chosen', views: 1 }), c.oracle('1.x').request('POST', '/posts', { id: '1000', title: 'chosen', views: 1 })]);
    expect(chosen).toMatchObject({ status: 201, body: { id: 1000, title: 'chosen' } });
    expect(v1.status).toBe(201);
    await c.expectSame('0.17', 'GET', '/posts/1000');
    // 0.17 numbers a new post after the largest id (1001); restgraph's generator has moved past 1000.
    expect(await c.expectSame('0.17', 'POST', '/posts', { title: 'numbered', views: 2 })).toMatchObject({ status: 201, body: { id: 1001 } });
    const [ours, old] = await Promise.all([c.restgraph('POST', '/posts', { id: 1000, title: 'again' }), c.oracle('0.17').request('POST', '/posts', { id: 1000, title: 'again' })]);
    expect(old.status).toBe(500);
    expect(ours).toMatchObject({ status: 409, body: { code: 'unique-conflict', errors: [{ pointer: '/id' }] } });
  });
});

