// The json-server comparison (bench/scenarios.js appends these): restgraph serving a json-server
// db.json (`restgraph serve db.json`, server restgraph-dbjson) against json-server serving the same
// file (json-server: 0.17.4, the line most projects install; json-server-1x: 1.0.0-beta.15), the
// file a db.json of `size` posts (bench/lib/seed.js: makePostsDb; bench/servers.js). These servers
// run these scenarios only, and the other servers never run them. The requests are json-server's
// own: the same for restgraph-dbjson and json-server 0.17, 1.x's spelling for json-server-1x where
// 1.x has no such parameter (no _order or _limit: _sort=-views and a page of 20).
import { makePostsDb, randomSeededId, topByViews } from './lib/seed.js';

/** The servers of the db.json of posts, and the scenarios they run. */
export const DBJSON_SERVERS = ['restgraph-dbjson', 'json-server', 'json-server-1x'];
export const DBJSON_SUBJECT = 'restgraph-dbjson';

/**
 * restgraph-dbjson / json-server: restgraph serving a db.json is at least this many times faster
 * than json-server 0.17 serving it (the target restgraph / json-server had on the users before).
 * restgraph-dbjson / json-server-1x is shown, not judged (null): 1.x is there for reference.
 */
const targets = { 'json-server': 10, 'json-server-1x': null };
const servers = DBJSON_SERVERS;

/** The seeded posts of a size, for the checks (made once per size). */
const postsOf = (() => {
  const made = new Map();
  return (size) => {
    if (!made.has(size)) made.set(size, makePostsDb(size).posts);
    return made.get(size);
  };
})();

const LIST = '/posts?_sort=views&_order=desc&_limit=20';

export const dbJsonScenarios = [
  {
    name: 'db.json get-by-id',
    method: 'GET',
    path: (ctx) => `/posts/${randomSeededId(ctx)}`,
    servers,
    targets,
    async check({ request, size }) {
      const problems = [];
      const hit = await request('GET', '/posts/1');
      // json-server 1.x answers ids as strings ("1"), restgraph and 0.17 as numbers.
      if (hit.status !== 200) problems.push(`GET /posts/1 -> ${hit.status}`);
      else if (String(hit.json?.id) !== '1' || hit.json?.title !== postsOf(size)[0].title) problems.push('GET /posts/1 returned another row');
      const miss = await request('GET', `/posts/${size + 1000}`);
      if (miss.status !== 404) problems.push(`GET /posts/${size + 1000} -> ${miss.status}, expected 404`);
      return problems;
    },
  },
  {
    name: 'db.json list _sort _limit 20',
    method: 'GET',
    path: LIST,
    variants: { 'json-server-1x': { path: '/posts?_sort=-views&_page=1&_per_page=20' } },
    servers,
    targets,
    async check({ request, size, path }) {
      const res = await request('GET', path);
      if (res.status !== 200) return [`GET ${path} -> ${res.status}`];
      // json-server 1.x answers a page as { first, prev, next, last, pages, items, data }.
      const items = Array.isArray(res.json) ? res.json : res.json?.data;
      if (!Array.isArray(items)) return [`GET ${path}: no array of posts`];
      const got = items.map((p) => String(p.id)).join(',');
      return got === topByViews(postsOf(size), 20).join(',') ? [] : [`GET ${path}: not the 20 posts with the most views`];
    },
  },
  {
    name: 'db.json create',
    method: 'POST',
    path: '/posts',
    headers: { 'content-type': 'application/json' },
    body: ({ seq, runId }) => ({ title: `bench-${runId}-${seq}`, views: seq, author: 'bench' }),
    unique: true,
    servers,
    targets,
    async check({ request }) {
      const title = `check-${Date.now()}`;
      const res = await request('POST', '/posts', { title, views: 1, author: 'check' });
      const problems = [];
      if (res.status !== 201) problems.push(`POST /posts -> ${res.status}, expected 201`);
      if (res.json?.title !== title || res.json?.id == null) problems.push('POST /posts did not return the created post');
      return problems;
    },
  },
];

export const DBJSON_SCENARIOS = dbJsonScenarios.map((s) => s.name);
