import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { itWithFolder } from './helpers/cli-process.js';
import { run, serve, writeSchema } from './helpers/cli-serve.js';
import { buildApp } from '../src/app/build-app.js';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { ConfigError } from '../src/errors.js';
import { compileErrors, validate } from '@readme/openapi-parser';
import type { OpenApiDocument } from '../src/openapi/openapi-types.js';
import { startJsonServer, type Answer, type JsonServer, type JsonServerVersion } from './helpers/json-server-oracle.js';

/**
 * `--compat json-server` against the real json-server: every example of json-server's READMEs (0.17.4
 * and 1.x) that concerns plural and nested routes and query parameters is sent to json-server
 * (started as a child process on a copy of the db.json) and to restgraph (the same data, in a
 * schema equivalent to that db.json), and the answers must be the same: status, body (ids aside
 * where 1.x writes ids as strings; restgraph's createdAt/updatedAt taken out), X-Total-Count and
 * Link. Where restgraph deliberately answers otherwise, the test says so and why (docs/json-server.md).
 */

const SCHEMA = `
resources:
  posts:
    access: { read: public, write: public }
    fields:
      title: { type: string }
      views: { type: integer }
    relations:
      comments: { hasMany: comments, foreignKey: postId }
  comments:
    access: { read: public, write: public }
    fields:
      text: { type: string }
      postId: { type: integer, references: posts, onDelete: cascade }
    relations:
      post: { belongsTo: posts, foreignKey: postId }
  settings:
    access: { read: public, write: public }
    fields:
      name: { type: string }
      prefs: { type: json }
`;

/** json-server's README db.json (its posts 1 and 2, comments 1 and 2), and more rows for paging, sorting and search. */
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
const COMMENTS = [
  { id: 1, text: 'a comment about post 1', postId: 1 },
  { id: 2, text: 'another comment about post 1', postId: 1 },
  { id: 3, text: 'nice', postId: 2 },
  { id: 4, text: 'Great server', postId: 3 },
  { id: 5, text: 'meh', postId: 3 },
];
const DB = { posts: POSTS, comments: COMMENTS, settings: [] };

/** 1.x writes and looks up ids as strings (its README's db.json has "id": "1"). */
function withStringIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withStringIds);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, (k === 'id' || k.endsWith('Id')) && typeof v === 'number' ? String(v) : withStringIds(v)]));
}

/** A body as compared: restgraph's createdAt/updatedAt taken out; for 1.x, ids as strings. */
function comparable(body: unknown, stringIds: boolean): unknown {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'createdAt' && k !== 'updatedAt').map(([k, v]) => [k, strip(v)]));
  };
  const stripped = strip(body);
  return stringIds ? withStringIds(stripped) : stripped;
}

/** Without the `id` members (restgraph never reuses an id; json-server 0.17 takes the largest id left plus one). */
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'id').map(([k, v]) => [k, withoutIds(v)]));
}

// Every answer restgraph gives here must be what its OpenAPI document (with json-server's parameters,
// envelope, DELETE answer and nested POST) says.
checkResponsesAgainstOpenApi();

let t: TestApp;
const oracles = new Map<JsonServerVersion, JsonServer>();
const dir = tempDir('restgraph-json-server-');

beforeAll(async () => {
  const schemaFile = join(dir.path, 'schema.yaml');
  writeFileSync(schemaFile, SCHEMA);
  const [app, v017, v1] = await Promise.all([
    startTestApp({ schema: schemaFile, compat: 'json-server' }),
    startJsonServer('0.17', DB, dir.path),
    startJsonServer('1.x', withStringIds(DB), dir.path),
  ]);
  t = app;
  oracles.set('0.17', v017);
  oracles.set('1.x', v1);
  for (const post of POSTS) await send('POST', '/posts', { title: post.title, views: post.views }, 201);
  for (const comment of COMMENTS) await send('POST', '/comments', { text: comment.text, postId: comment.postId }, 201);
}, 60_000);
afterAll(async () => {
  for (const oracle of oracles.values()) await oracle.stop();
  await t.close();
  dir.cleanup();
});

async function send(method: string, url: string, payload: unknown, status: number): Promise<void> {
  const response = await t.app.inject({ method: method as 'POST', url, payload: payload as object, headers: { authorization: '' } });
  expect(response.statusCode, response.body).toBe(status);
}

/** restgraph's answer, anonymous (the resources are public, as json-server's are). */
async function restgraph(method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await t.app.inject({
    method: method as 'GET',
    url: path,
    headers: { authorization: '', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  const link = response.headers.link;
  return {
    status: response.statusCode,
    body: response.body === '' ? undefined : (JSON.parse(response.body) as unknown),
    totalCount: response.headers['x-total-count'] as string | undefined,
    link: typeof link === 'string' ? link.replace(/<https?:\/\/[^/>]+/g, '<') : undefined,
  };
}

/**
 * Sends the request to restgraph and to json-server `version`, and expects the same answer. `stringIds`
 * compares ids as strings (1.x's ids are strings; 0.17's nested POST stores the parent id as the
 * path's string).
 */
async function expectSame(version: JsonServerVersion, method: string, path: string, body?: unknown, options: { stringIds?: boolean; idsAside?: boolean } = {}): Promise<Answer> {
  const stringIds = options.stringIds ?? version === '1.x';
  const oracle = oracles.get(version);
  if (oracle === undefined) throw new Error(`no json-server ${version}`);
  const [ours, theirs] = await Promise.all([restgraph(method, path, body), oracle.request(method, path, version === '1.x' ? withStringIds(body) : body)]);
  // 0.17 sends an empty Link header with a page that has no links (res.links({})); restgraph sends none.
  const link = theirs.link === '' ? undefined : theirs.link;
  const seen = (answer: unknown): unknown => (options.idsAside === true ? withoutIds(comparable(answer, stringIds)) : comparable(answer, stringIds));
  expect({ ...ours, body: seen(ours.body) }, `${method} ${path}`).toEqual({ ...theirs, link, body: seen(theirs.body) });
  return ours;
}

/** {@link expectSame} for each GET of `paths`, one after the other. */
async function expectSameForEach(version: JsonServerVersion, paths: readonly string[]): Promise<void> {
  for (const path of paths) await expectSame(version, 'GET', path);
}

const ids = (answer: Answer): unknown => (answer.body as { id: unknown }[]).map((r) => r.id);

describe("json-server 0.17's README examples", () => {
  const v = '0.17';

  it('plural routes: GET /posts and /posts/1', async () => {
    await expectSameForEach(v, [
      '/posts',
      '/posts/1',
      '/comments',
    ]);
  });

  it('filter: field=value, repeated values, deep paths of fields no row has', async () => {
    await expectSame(v, 'GET', '/posts?title=json-server&author=typicode');
    expect(ids(await expectSame(v, 'GET', '/posts?id=1&id=2'))).toEqual([1, 2]);
    await expectSameForEach(v, [
      '/comments?author.name=typicode',
      '/posts?views=100',
      '/comments?postId=3',
    ]);
  });

  it('paginate: _page, _page with _limit (X-Total-Count and the Link header)', async () => {
    await expectSame(v, 'GET', '/posts?_page=7');
    await expectSame(v, 'GET', '/posts?_page=7&_limit=20');
    const page = await expectSame(v, 'GET', '/posts?_page=2&_limit=5');
    expect(page.totalCount).toBe('12');
    expect(page.link).toContain('rel="last"');
    await expectSameForEach(v, [
      '/posts?_page=1&_limit=5',
      '/posts?_page=3&_limit=5',
      '/posts?_page=1&_limit=20',
      '/posts?_page=1',
      '/posts?_page=2',
    ]);
  });

  it('sort: _sort with _order, on nested routes, several fields', async () => {
    expect(ids(await expectSame(v, 'GET', '/posts?_sort=views&_order=asc'))).toEqual([11, 12, 8, 4, 3, 5, 10, 1, 7, 6, 2, 9]);
    await expectSameForEach(v, [
      '/posts/1/comments?_sort=votes&_order=asc',
      '/posts?_sort=user,views&_order=desc,asc',
      '/posts?_sort=views,title&_order=desc,desc',
      '/posts?_sort=views&_order=desc',
      '/comments?_sort=postId,text&_order=desc',
    ]);
  });

  it('slice: _start with _end or _limit, with X-Total-Count', async () => {
    await expectSameForEach(v, [
      '/posts?_start=20&_end=30',
      '/posts/1/comments?_start=20&_end=30',
      '/posts/1/comments?_start=20&_limit=10',
    ]);
    expect(ids(await expectSame(v, 'GET', '/posts?_start=2&_end=5'))).toEqual([3, 4, 5]);
    await expectSameForEach(v, [
      '/posts?_start=3&_limit=2',
      '/posts?_end=2',
      '/posts?_limit=3&_sort=views&_order=desc',
      '/posts/1/comments?_start=1&_limit=10',
    ]);
  });

  it('operators: _gte and _lte, _ne, _like', async () => {
    expect(ids(await expectSame(v, 'GET', '/posts?views_gte=10&views_lte=20'))).toEqual([3, 4, 5, 10]);
    await expectSameForEach(v, [
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
    expect(ids(await expectSame(v, 'GET', '/posts?q=internet'))).toEqual([5, 8]);
    await expectSameForEach(v, [
      '/posts?q=INTERNET',
      '/comments?q=server',
      '/posts?q=',
    ]);
  });

  it('relationships: _embed, _expand on lists and single reads', async () => {
    await expectSameForEach(v, [
      '/posts?_embed=comments',
      '/posts/1?_embed=comments',
      '/comments?_expand=post',
      '/comments/1?_expand=post',
      '/posts?_embed=comments&_start=1&_end=3',
    ]);
  });

  it('relationships: _embed of a name that is no resource is ignored, as 1.x does (0.17 adds an empty array under that name to every row)', async () => {
    const theirs = await oracles.get(v)?.request('GET', '/posts/1?_embed=nothing');
    expect(theirs?.body).toMatchObject({ nothing: [] });
    await expectSame('1.x', 'GET', '/posts?_embed=nothing');
    expect(await restgraph('GET', '/posts/1?_embed=nothing')).not.toHaveProperty('body.nothing');
  });

  it('nested routes: GET /posts/1/comments', async () => {
    expect(ids(await expectSame(v, 'GET', '/posts/1/comments'))).toEqual([1, 2]);
    await expectSame(v, 'GET', '/posts/3/comments?text=meh');
    await expectSame(v, 'GET', '/posts/4/comments');
  });
});

describe("json-server 1.x's README examples", () => {
  const v = '1.x';

  it('routes: GET /posts and /posts/1', async () => {
    await expectSame(v, 'GET', '/posts');
    await expectSame(v, 'GET', '/posts/1');
  });

  it('conditions: field:op=value', async () => {
    expect(ids(await expectSame(v, 'GET', '/posts?views:gt=100'))).toEqual([2, 6, 9]);
    await expectSameForEach(v, [
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
    const theirs = await oracles.get(v)?.request('GET', '/posts?id:in=1,2,3');
    expect(theirs?.body).toEqual([]);
    expect(ids(await restgraph('GET', '/posts?id:in=1,2,3'))).toEqual([1, 2, 3]);
  });

  it('sort: _sort=field, _sort=-field, several fields', async () => {
    await expectSameForEach(v, [
      '/posts?_sort=-views',
      '/posts?_sort=views',
      '/posts?_sort=author.name,-views',
      '/comments?_sort=-postId,text',
    ]);
  });

  it('sort: _sort=title (1.x compares strings by locale, 0.17 and restgraph by code point)', async () => {
    const theirs = await oracles.get('0.17')?.request('GET', '/posts?_sort=title');
    const ours = await restgraph('GET', '/posts?_sort=title');
    expect(ids(ours)).toEqual((theirs?.body as { id: number }[]).map((p) => p.id));
    expect((ours.body as { title: string }[])[0]?.title).toBe('100_000 views');
  });

  it('pagination: _page with _per_page, in an envelope', async () => {
    await expectSame(v, 'GET', '/posts?_page=1&_per_page=25');
    const envelope = await expectSame(v, 'GET', '/posts?_page=2&_per_page=5');
    expect(envelope.body).toMatchObject({ first: 1, prev: 1, next: 3, last: 3, pages: 3, items: 12 });
    await expectSameForEach(v, [
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
    await expectSame(v, 'GET', where({ or: [{ views: { gt: 100 } }, { author: { name: { lt: 'm' } } }] }));
    expect(ids(await expectSame(v, 'GET', where({ or: [{ views: { gt: 100 } }, { title: { contains: 'WORLD' } }] })))).toEqual([2, 4, 6, 9, 10]);
    await expectSameForEach(v, [
      where({ views: { gte: 20, lte: 100 }, title: { startsWith: 'a' } }),
      `${where({ views: { lt: 10 } })}&views=100`,
      '/posts?_where=not-json&views=100',
      where({ or: [] }),
      where({ nope: { eq: 1 } }),
      where({ or: [{ or: [{ views: { in: [1, 2] } }] }, { title: { eq: 'zebra' } }] }),
    ]);
  });

  it('_where with a plain value is equality (1.x matches nothing); one nested too deep or too large is refused', async () => {
    const theirs = await oracles.get(v)?.request('GET', `/posts?_where=${encodeURIComponent('{"views":100}')}`);
    expect(theirs?.body).toEqual([]);
    expect(ids(await restgraph('GET', `/posts?_where=${encodeURIComponent('{"views":100}')}`))).toEqual([1, 7]);
    let deep: unknown = { views: { gt: 1 } };
    for (let i = 0; i < 20; i++) deep = { or: [deep] };
    expect(await restgraph('GET', `/posts?_where=${encodeURIComponent(JSON.stringify(deep))}`)).toMatchObject({ status: 400, body: { code: 'invalid-query' } });
    const wide = { or: Array.from({ length: 150 }, (_, i) => ({ views: { eq: i } })) };
    expect(await restgraph('GET', `/posts?_where=${encodeURIComponent(JSON.stringify(wide))}`)).toMatchObject({ status: 400, body: { code: 'invalid-query' } });
  });

  it('embed: _embed=comments (children) and _embed=post (parent)', async () => {
    await expectSameForEach(v, [
      '/posts?_embed=comments',
      '/comments?_embed=post',
      '/posts/3?_embed=comments',
      '/comments/4?_embed=post',
    ]);
  });
});

describe('hostile and odd input, as json-server 0.17 answers it', () => {
  const v = '0.17';

  it('negative, NaN and zero slice and page numbers read as Array.prototype.slice and parseInt read them', async () => {
    expect(ids(await expectSame(v, 'GET', '/posts?_start=-3&_end=-1'))).toEqual([10, 11]);
    await expectSameForEach(v, [
      '/posts?_start=-2&_limit=1',
      '/posts?_start=abc&_end=3',
      '/posts?_end=abc',
      '/posts?_limit=0',
      '/posts?_limit=-5',
      '/posts?_start=5',
      '/posts?_start=99999999999999999999&_end=1',
      '/posts?_page=0&_limit=5',
      '/posts?_page=-1&_limit=5',
      '/posts?_page=abc&_limit=5',
      '/posts?_page=1&_limit=abc',
    ]);
  });

  it('unknown fields: a plain filter is ignored, one with an operator matches nothing', async () => {
    await expectSameForEach(v, [
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
    expect(ids(await expectSame(v, 'GET', '/posts?q=50%25'))).toEqual([6]);
    expect(ids(await expectSame(v, 'GET', '/posts?q=_'))).toEqual([7]);
    await expectSameForEach(v, [
      '/posts?title_like=%25',
      '/posts?title_like=0_0',
      '/posts?q=%5C',
    ]);
  });

  it('_like: a pattern that would backtrack for ever as a regular expression is text (0.17 runs it: zebra ends in a)', async () => {
    const started = Date.now();
    const evil = encodeURIComponent(`${'(a+)+'.repeat(200)}$`);
    expect((await restgraph('GET', `/posts?title_like=${evil}`)).body).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5000);
    const theirs = await oracles.get(v)?.request('GET', `/posts?title_like=${encodeURIComponent('(a+)+$')}`);
    expect((theirs?.body as { id: number }[]).map((p) => p.id)).toEqual([9]);
  });

  it('_like reads ^ and $ only: other regular-expression syntax is text (0.17 runs the RegExp; deliberate: no ReDoS)', async () => {
    const theirs = await oracles.get(v)?.request('GET', '/posts?title_like=a.title');
    expect((theirs?.body as { id: number }[]).map((p) => p.id)).toEqual([1]);
    expect((await restgraph('GET', '/posts?title_like=a.title')).body).toEqual([]);
    const anchored = await restgraph('GET', '/posts?title_like=^a title$');
    expect(ids(anchored)).toEqual([1]);
  });

  it('q of 7 KB answers at once; a URL past 8 KiB is refused (414), as every restgraph URL is', async () => {
    expect((await restgraph('GET', `/posts?q=${'x'.repeat(7000)}`)).body).toEqual([]);
    const long = await restgraph('GET', `/posts?q=${'x'.repeat(10 * 1024)}`);
    expect(long.status).toBe(414);
  });

  it('a parameter given twice: the first value counts for _sort, _page and the like (0.17 fails with a 500 on a repeated _sort)', async () => {
    const theirs = await oracles.get(v)?.request('GET', '/posts?_sort=views&_sort=title');
    expect(theirs?.status).toBe(500);
    const ours = await restgraph('GET', '/posts?_sort=views&_sort=title&_limit=3');
    expect(ids(ours)).toEqual([11, 12, 8]);
  });

  it('filters on json fields and paths into them are refused with 400 invalid-query (json-server compares their text)', async () => {
    for (const path of ['/settings?prefs.theme=dark', '/settings?prefs=x', '/settings?prefs_like=x']) {
      const answer = await restgraph('GET', path);
      expect(answer.status, path).toBe(400);
      expect(answer.body).toMatchObject({ code: 'invalid-query' });
    }
  });

  it("restgraph's own parameters keep working beside json-server's, and the two ways of paging or sorting do not mix", async () => {
    expect((await restgraph('GET', '/posts?sort=-views&limit=2&fields=id,title')).body).toEqual([{ id: 9, title: 'zebra' }, { id: 2, title: 'another title' }]);
    expect(ids(await restgraph('GET', '/posts?views[gte]=200&title_like=zebra'))).toEqual([9]);
    expect(ids(await restgraph('GET', '/posts?_sort=views&_order=desc&fields=id&_limit=2'))).toEqual([9, 2]);
    expect((await restgraph('GET', '/posts?_sort=views&sort=title')).status).toBe(400);
    expect((await restgraph('GET', '/posts?_page=1&limit=3')).status).toBe(400);
    expect((await restgraph('GET', '/posts?_start=1&_end=2&offset=3')).status).toBe(400);
    expect((await restgraph('GET', '/posts?include=comments&_embed=comments&_start=0&_end=1')).body).toMatchObject([{ id: 1, comments: [{ id: 1 }, { id: 2 }] }]);
  });
});

describe('writes, nested create and deletes with dependents', () => {
  it('DELETE /posts/3?_dependent=comments: 200 {} as 0.17 answers (1.x answers the deleted post); its comments are gone in all three', async () => {
    const [ours, old, v1] = await Promise.all([
      restgraph('DELETE', '/posts/3?_dependent=comments'),
      oracles.get('0.17')?.request('DELETE', '/posts/3?_dependent=comments'),
      oracles.get('1.x')?.request('DELETE', '/posts/3?_dependent=comments'),
    ]);
    expect(ours).toEqual(old);
    expect(ours).toMatchObject({ status: 200, body: {} });
    expect(v1).toMatchObject({ status: 200, body: { id: '3', title: 'json-server' } });
    for (const version of ['0.17', '1.x'] as const) {
      await expectSame(version, 'GET', '/comments');
      await expectSame(version, 'GET', '/posts');
    }
  });

  it('PUT and PATCH of an existing post answer the post, as both versions do', async () => {
    for (const [method, body] of [['PUT', { title: 'another title, again', views: 201 }], ['PATCH', { views: 202 }]] as const) {
      const [ours, old, v1] = await Promise.all([restgraph(method, '/posts/2', body), oracles.get('0.17')?.request(method, '/posts/2', body), oracles.get('1.x')?.request(method, '/posts/2', body)]);
      expect(comparable(ours.body, false)).toEqual(old?.body);
      expect(comparable(ours.body, true)).toEqual(v1?.body);
      expect([ours.status, old?.status, v1?.status]).toEqual([200, 200, 200]);
    }
    await expectSame('1.x', 'GET', '/posts/2');
    await expectSame('0.17', 'GET', '/posts/2');
  });

  it('an unknown id: 404 as json-server answers, with a problem document instead of {} (errors stay problem+json)', async () => {
    for (const [method, body] of [['GET', undefined], ['PATCH', { title: 'x' }], ['PUT', { title: 'x' }], ['DELETE', undefined]] as const) {
      const [ours, theirs] = await Promise.all([restgraph(method, '/posts/99', body), oracles.get('0.17')?.request(method, '/posts/99', body)]);
      expect(theirs).toMatchObject({ status: 404, body: {} });
      expect(ours).toMatchObject({ status: 404, body: { code: 'not-found' } });
    }
  });

  it('POST /posts: 201 with the created post; PUT and PATCH: 200 with the post', async () => {
    const created = await expectSame('0.17', 'POST', '/posts', { title: 'new post', views: 7 });
    expect(created).toMatchObject({ status: 201, body: { id: 13, title: 'new post', views: 7 } });
    await expectSame('0.17', 'PUT', '/posts/13', { title: 'renamed', views: 8 });
    await expectSame('0.17', 'PATCH', '/posts/13', { views: 9 });
    await expectSame('0.17', 'GET', '/posts/13');
  });

  it('PUT with fields left out: json-server drops them, restgraph sets them to null (every post has every field of the schema)', async () => {
    const [ours, theirs] = await Promise.all([restgraph('PUT', '/posts/13', { title: 'only a title' }), oracles.get('0.17')?.request('PUT', '/posts/13', { title: 'only a title' })]);
    expect(theirs?.body).toEqual({ id: 13, title: 'only a title' });
    expect(comparable(ours.body, false)).toEqual({ id: 13, title: 'only a title', views: null });
  });

  it('_ne leaves out rows where the field is empty, as 0.17 does; sorting puts them first ascending (0.17: last)', async () => {
    await expectSame('0.17', 'GET', '/posts?views_ne=100');
    const ours = await restgraph('GET', '/posts?_sort=views&_limit=2');
    const theirs = await oracles.get('0.17')?.request('GET', '/posts?_sort=views&_limit=2');
    expect(ids(ours)).toEqual([13, 11]);
    expect((theirs?.body as { id: number }[]).map((p) => p.id)).toEqual([11, 12]);
  });

  it('nested routes: POST /posts/1/comments creates a comment of post 1, then GET /posts/1/comments lists it', async () => {
    // 0.17 stores the parent's id as the path's text ("1"); restgraph's postId is an integer field.
    // The new comment's id: restgraph's 6 (ids are never reused), 0.17's 4 (the largest left plus one).
    const same = { stringIds: true, idsAside: true };
    const created = await expectSame('0.17', 'POST', '/posts/1/comments', { text: 'nested', postId: 2 }, same);
    expect(created).toMatchObject({ status: 201, body: { id: 6, text: 'nested', postId: 1 } });
    expect(ids(await expectSame('0.17', 'GET', '/posts/1/comments', undefined, same))).toEqual([1, 2, 6]);
    await expectSame('0.17', 'GET', '/posts/1/comments?text_like=NEST', undefined, same);
  });

  it('DELETE /posts/1 without _dependent: its comments go too (0.17 removes rows left pointing nowhere; restgraph cascades)', async () => {
    await expectSame('0.17', 'DELETE', '/posts/1');
    expect(ids(await expectSame('0.17', 'GET', '/comments', undefined, { stringIds: true, idsAside: true }))).toEqual([3]);
  });

  it('a nested route of a post that does not exist: 404 (json-server lists nothing, or creates the comment pointing nowhere)', async () => {
    const theirs = await oracles.get('0.17')?.request('GET', '/posts/1/comments');
    expect(theirs).toMatchObject({ status: 200, body: [] });
    expect(await restgraph('GET', '/posts/1/comments')).toMatchObject({ status: 404, body: { code: 'not-found' } });
    expect(await restgraph('GET', '/posts/1/comments?_start=0&_end=5')).toMatchObject({ status: 404, body: { code: 'not-found' } });
    expect(await restgraph('GET', '/posts/1/comments?_page=1&_per_page=5')).toMatchObject({ status: 404, body: { code: 'not-found' } });
    const post = await restgraph('POST', '/posts/1/comments', { text: 'orphan' });
    expect(post.status).toBe(422);
  });
});

describe('the compat option', () => {
  const cli = itWithFolder('restgraph-compat-cli-');

  it('an unknown mode is a configuration error at start, naming the option (buildApp, RESTGRAPH_COMPAT)', async () => {
    await expect(buildApp({ databaseUrl: 'sqlite::memory:', compat: 'jsonserver' as 'json-server' })).rejects.toThrow(
      'Invalid configuration compat: "jsonserver" is not a compatibility mode; the modes are: json-server',
    );
    expect(() => optionsFromEnv({ RESTGRAPH_COMPAT: 'json' })).toThrow(ConfigError);
    expect(optionsFromEnv({ RESTGRAPH_COMPAT: 'json-server' }).compat).toBe('json-server');
    expect(optionsFromEnv({}).compat).toBeUndefined();
  });

  cli('restgraph serve --compat json-server takes json-server parameters; --compat with another mode exits 1 naming the flag', async ({ folder }) => {
    const schema = writeSchema(folder, SCHEMA, 'db-schema.yaml');
    const bad = await run(folder, ['serve', schema, '--compat', 'jsonserver'], { DATABASE_URL: `sqlite:${join(folder.path, 'bad.db')}` });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('restgraph: Invalid configuration --compat: "jsonserver" is not a compatibility mode; the modes are: json-server');
    expect(bad.stderr).toContain('[RG_CONFIG_INVALID]');
    const { base } = await serve(folder, [schema, '--compat', 'json-server']);
    for (const title of ['b', 'a']) await globalThis.fetch(`${base}/posts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title }) });
    const sorted = await globalThis.fetch(`${base}/posts?_sort=title&_limit=1`);
    expect(sorted.headers.get('x-total-count')).toBe('2');
    expect(await sorted.json()).toMatchObject([{ id: 2, title: 'a' }]);
    expect((await globalThis.fetch(`${base}/posts/1`, { method: 'DELETE' })).status).toBe(200);
  });

  it("the OpenAPI document describes json-server's parameters, envelope, DELETE answer and nested POST, and is valid OpenAPI 3.1", async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { authorization: '' } });
    const document = response.json<OpenApiDocument>();
    const result = await validate(structuredClone(document) as unknown as Parameters<typeof validate>[0]);
    expect(result.valid ? 'valid' : compileErrors(result)).toBe('valid');
    expect(result.warnings).toEqual([]);
    const paths = document.paths as Record<string, Record<string, { parameters?: { $ref: string }[]; responses: Record<string, unknown> }>>;
    expect(paths['/posts']?.get?.parameters?.map((p) => p.$ref)).toContain('#/components/parameters/jsonServer._page');
    expect(Object.keys(paths['/posts/{id}']?.delete?.responses ?? {})).toContain('200');
    expect(paths['/posts/{id}/comments']?.post).toBeDefined();
    expect(paths['/comments/{id}/post']?.post).toBeUndefined();
  });

  it('without it, json-server parameters are unknown filters (400) and DELETE answers 204', async () => {
    const file = join(dir.path, 'native.yaml');
    writeFileSync(file, SCHEMA);
    const native = await startTestApp({ schema: file });
    try {
      await native.app.inject({ method: 'POST', url: '/posts', payload: { title: 'x' } });
      expect((await native.app.inject({ method: 'GET', url: '/posts?_sort=title' })).statusCode).toBe(400);
      expect((await native.app.inject({ method: 'POST', url: '/posts/1/comments', payload: { text: 'x' } })).statusCode).toBe(405);
      expect((await native.app.inject({ method: 'DELETE', url: '/posts/1' })).statusCode).toBe(204);
    } finally {
      await native.close();
    }
  });

  it('a list without json-server paging is cut to the largest page, with restgraph\'s Link rel="next" to the rest', async () => {
    const file = join(dir.path, 'small.yaml');
    writeFileSync(file, SCHEMA);
    const small = await startTestApp({ schema: file, compat: 'json-server', listLimits: { maxLimit: 5, defaultLimit: 5 } });
    try {
      for (let i = 1; i <= 7; i++) await small.app.inject({ method: 'POST', url: '/posts', payload: { title: `p${i}`, views: 10 - i } });
      const first = await small.app.inject({ method: 'GET', url: '/posts?_sort=views' });
      expect(first.json<{ id: number }[]>().map((p) => p.id)).toEqual([7, 6, 5, 4, 3]);
      const next = /<https?:\/\/[^/]+([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
      expect(next).toBeDefined();
      expect((await small.app.inject({ method: 'GET', url: next ?? '' })).json<{ id: number }[]>().map((p) => p.id)).toEqual([2, 1]);
      const huge = await small.app.inject({ method: 'GET', url: '/posts?_limit=100000' });
      expect(huge.json<unknown[]>()).toHaveLength(5);
      expect(huge.headers['x-total-count']).toBe('7');
      const envelope = await small.app.inject({ method: 'GET', url: '/posts?_page=1&_per_page=100' });
      expect(envelope.json()).toMatchObject({ first: 1, prev: null, next: 2, last: 2, pages: 2, items: 7 });
    } finally {
      await small.close();
    }
  });
});
