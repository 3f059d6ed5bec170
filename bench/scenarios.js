// The benchmark scenarios. Add one by appending an entry:
//
//   name      unique label (also the key in results/latest.json)
//   method    HTTP method
//   path      string, or (ctx) => string, called for every request
//   headers   static headers (object), or (ctx) => object
//   body      optional (ctx) => object | string; an object is sent as JSON
//   variants  optional { [serverName]: { ...fields to override } }, for servers whose
//             API spells the same query differently (json-server 1.x: _sort=-views, _per_page)
//   servers   optional list of server names the scenario applies to (default: all)
//   unique    true when no two requests may be the same (creates): the wrk pool is
//             then sized so it never wraps around
//   targets   { [referenceServer]: minimum ratio restgraph / reference, or null to show the
//             ratio without judging it }; a reference on PostgreSQL (baseline-pg) is compared
//             with restgraph-pg instead, json-server with restgraph-dbjson (bench/lib/report.js)
//   scenarioTargets  { [otherScenario]: minimum ratio of restgraph's req/s in this scenario to
//             its req/s in the other one, same run (GraphQL vs REST on the same server)
//   check     optional async ({ request, size, users, server }) => [problem, ...]; run
//             once against each server before the load, to prove it does the real work
//
// ctx = { size, server, seq, random }: size = rows seeded, seq = a counter unique within
// one load run (warm-up included), random() = seeded PRNG in [0, 1).
//
// Scenarios run in this order against each freshly seeded server; those that write
// come last so the reads see exactly the seeded rows.
//
// The `db.json …` scenarios, last, are the json-server comparison (bench/dbjson-scenarios.js).
import { DBJSON_SCENARIOS, DBJSON_SERVERS, dbJsonScenarios } from './dbjson-scenarios.js';
import { randomSeededId as randomId } from './lib/seed.js';
import { restgraphVariantNames, variantPairs } from './lib/variants.js';

/** The first `limit` seeded users in ORDER BY name, id. */
function firstByName(users, limit) {
  return [...users]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id))
    .slice(0, limit)
    .map((u) => String(u.id));
}

const USER_QUERY = 'query User($id: ID!) { user(id: $id) { id name email bio createdAt updatedAt } }';
const USER_POSTS_QUERY = 'query UserPosts($id: ID!) { user(id: $id) { name posts(last: 2) { title } } }';

/** restgraph against another version of itself (BENCH_BEFORE, bench/servers.js): a change may cost at most this. */
const BEFORE = { 'restgraph/restgraph-before': 0.9, ...variantPairs };

export const scenarios = [
  {
    name: 'get-by-id',
    method: 'GET',
    path: (ctx) => `/users/${randomId(ctx)}`,
    // restgraph-public: the same server with users readable without a token (the cost of authentication).
    targets: { baseline: 0.8, 'restgraph-public': 0.9, 'baseline-pg': 0.8 },
    // restgraph-ratelimited: the same server with a request quota on (the cost of rate limiting).
    pairTargets: { 'restgraph-ratelimited/restgraph': 0.9, ...BEFORE },
    async check({ request, size, users }) {
      const problems = [];
      const hit = await request('GET', '/users/1');
      if (hit.status !== 200) problems.push(`GET /users/1 -> ${hit.status}`);
      else if (String(hit.json?.id) !== '1' || hit.json?.email !== users[0].email) {
        problems.push('GET /users/1 returned another row');
      } else if (typeof hit.json.id !== 'number') {
        // pg reads bigint as a string unless told otherwise.
        problems.push('GET /users/1: id is not a JSON number');
      }
      const miss = await request('GET', `/users/${size + 1000}`);
      if (miss.status !== 404) problems.push(`GET /users/${size + 1000} -> ${miss.status}, expected 404`);
      return problems;
    },
  },
  {
    name: 'list sorted limit 20',
    method: 'GET',
    path: '/users?sort=name&limit=20',
    targets: { baseline: 0.7, 'baseline-pg': 0.7 },
    pairTargets: BEFORE,
    async check({ request, users, path }) {
      const res = await request('GET', path);
      if (res.status !== 200) return [`GET ${path} -> ${res.status}`];
      if (!Array.isArray(res.json)) return [`GET ${path}: not a bare JSON array`];
      const got = res.json.map((u) => String(u.id)).join(',');
      return got === firstByName(users, 20).join(',') ? [] : [`GET ${path}: not the first 20 rows by name, id`];
    },
  },
  {
    // GraphQL's single-object read, as clients send it (the query text fixed, the id a variable,
    // so the parsed document is reused), against REST's get-by-id on the same server.
    name: 'graphql user(id)',
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json' },
    body: (ctx) => ({ query: USER_QUERY, variables: { id: String(randomId(ctx)) } }),
    servers: ['restgraph', 'restgraph-public', 'restgraph-before', ...restgraphVariantNames],
    scenarioTargets: { 'get-by-id': 0.5 },
    pairTargets: BEFORE,
    async check({ request, users }) {
      const res = await request('POST', '/graphql', { query: USER_QUERY, variables: { id: '1' } });
      const user = res.json?.data?.user;
      if (res.status !== 200 || user?.id !== '1' || user.email !== users[0].email) return [`POST /graphql user(id: 1) -> ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`];
      return [];
    },
  },
  {
    // A user with their last two posts' titles: a relation field, read with one batched statement.
    name: 'graphql user with last 2 post titles',
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json' },
    body: (ctx) => ({ query: USER_POSTS_QUERY, variables: { id: String(randomId(ctx)) } }),
    servers: ['restgraph', 'restgraph-public', 'restgraph-before', ...restgraphVariantNames],
    scenarioTargets: { 'get-by-id': 0.3 },
    pairTargets: BEFORE,
    async check({ request, users }) {
      const res = await request('POST', '/graphql', { query: USER_POSTS_QUERY, variables: { id: '1' } });
      const user = res.json?.data?.user;
      if (res.status !== 200 || user?.name !== users[0].name || !Array.isArray(user.posts)) return [`POST /graphql user(id: 1) { name posts(last: 2) { title } } -> ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`];
      return [];
    },
  },
  {
    name: 'create',
    method: 'POST',
    path: '/users',
    headers: { 'content-type': 'application/json' },
    body: ({ seq, runId }) => ({ name: `bench-${runId}-${seq}`, email: `bench-${runId}-${seq}@example.com` }),
    unique: true,
    targets: { baseline: 0.8, 'baseline-pg': 0.8 },
    // What durability costs: the default (synchronous = FULL, every commit waits for the disk) over
    // synchronous = NORMAL. The floor is ours: durability may cost creates at most half.
    pairTargets: { 'restgraph/restgraph-sync-normal': 0.5, ...BEFORE },
    async check({ request }) {
      const email = `check-${Date.now()}@example.com`;
      const res = await request('POST', '/users', { name: 'check', email });
      const problems = [];
      if (res.status !== 201) problems.push(`POST /users -> ${res.status}, expected 201`);
      if (res.json?.email !== email) problems.push('POST /users did not return the created row');
      if (!res.headers.get('location')) problems.push('POST /users: no Location header');
      return problems;
    },
  },
  ...dbJsonScenarios,
];

/**
 * Scenarios only the event benchmarks load (bench/events.js, through bench/load.js), never run as
 * REST scenarios: `update` is the realtime scenario's write load, PATCH of a random seeded user's
 * bio (ids uniform over 1..size: with the default 10,000 users, 10 % of them hit the 1,000 ids
 * its userUpdated subscribers watch).
 */
/** The users the realtime scenario's userUpdated listeners watch: ids 1..WATCHED_USERS (bench/events.js). */
export const WATCHED_USERS = 1000;

/** PATCH of a seeded user's bio, the user drawn by `pick` (uniform over a range of ids). */
const updateOf = (name, pick) => ({
  name,
  method: 'PATCH',
  path: (ctx) => `/users/${pick(ctx)}`,
  headers: { 'content-type': 'application/json' },
  body: ({ seq, runId }) => ({ bio: `load-${runId}-${seq}` }),
  unique: true,
});

export const eventLoadScenarios = [
  // Any seeded user (10 % of them watched in the realtime scenario).
  updateOf('update', randomId),
  // Only watched users: every write is an event someone subscribed to.
  updateOf('update-watched', ({ random }) => 1 + Math.floor(random() * WATCHED_USERS)),
  // Only users nobody watches: every write is an event no subscriber of userUpdated(id) wants.
  updateOf('update-unwatched', ({ size, random }) => WATCHED_USERS + 1 + Math.floor(random() * (size - WATCHED_USERS))),
];

/** Servers that run only some scenarios (a variant of restgraph that matters for those alone, the db.json servers). */
const SCENARIOS_OF = {
  'restgraph-sync-normal': ['create'],
  ...Object.fromEntries(DBJSON_SERVERS.map((name) => [name, DBJSON_SCENARIOS])),
};

/** The scenario as it applies to `serverName` (variants merged), or null if it does not apply. */
export function scenarioFor(scenario, serverName) {
  if (scenario.servers && !scenario.servers.includes(serverName)) return null;
  if (SCENARIOS_OF[serverName] && !SCENARIOS_OF[serverName].includes(scenario.name)) return null;
  return { ...scenario, ...scenario.variants?.[serverName] };
}

/** Returns () => {path, headers, body} producing the scenario's successive requests. */
export function requestFactory(scenario, { size, server, random, runId, headers: serverHeaders = {} }) {
  let seq = 0;
  const value = (v, ctx) => (typeof v === 'function' ? v(ctx) : v);
  return () => {
    const ctx = { size, server, seq: seq++, random, runId };
    // Headers every request to this server carries (restgraph: its API key), then the scenario's.
    const headers = { ...serverHeaders, ...value(scenario.headers, ctx) };
    let body = scenario.body ? scenario.body(ctx) : undefined;
    if (body !== undefined && typeof body !== 'string') {
      body = JSON.stringify(body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
        headers['content-type'] = 'application/json';
      }
    }
    return { method: scenario.method, path: value(scenario.path, ctx), headers, body };
  };
}
