import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, finish, startCli } from './helpers/cli-process.js';
import { ROOT } from './helpers/cli-serve.js';
import { send, type SentResponse } from './helpers/event-stream.js';
import { scaleOutTest, type Cluster, type Instance } from './helpers/scale-out.js';
import { TEST_DIALECT } from './helpers/test-database.js';

/**
 * End-user accounts on three `restgraph serve` processes sharing one PostgreSQL database and one
 * rate-limit counter store (docs/accounts.md, docs/rate-limits.md): an access token of one instance
 * is accepted by the others, a refresh token is rotated on another and its reuse on a third ends
 * the session, failed sign-ins spread over the instances are throttled together after 10, and
 * after `restgraph keys rotate` every instance verifies tokens of both keys (a key id it has not
 * seen makes it read the keys again at once).
 *
 * PostgreSQL only: SQLite serves one machine.
 */

const it = scaleOutTest;
const PASSWORD = 'correct horse battery staple';
const anonymous = { authorization: '' };

interface Session {
  accessToken: string;
  refreshToken: string;
}

/** The env of the instances: the accounts example, and the counters in `store`. */
function accountsEnv(store: 'database' | 'redis'): Record<string, string> {
  return {
    RESTGRAPH_SCHEMA: join(ROOT, 'examples', 'accounts.yaml'),
    RESTGRAPH_RATE_LIMIT_STORE: store,
    // Every request of the test comes from 127.0.0.1; its count per address is not what is tested here
    // (and Redis counters are shared with whatever else runs against that Redis this minute).
    RESTGRAPH_RATE_LIMIT_ACCOUNT_REQUESTS: '10000/1m',
    RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'off',
    ...(store === 'redis' ? { REDIS_URL: 'redis://127.0.0.1:6379' } : {}),
  };
}

async function trio(cluster: Cluster, store: 'database' | 'redis'): Promise<[Instance, Instance, Instance]> {
  const [a, b, c] = await cluster.instances(3, accountsEnv(store));
  if (a === undefined || b === undefined || c === undefined) throw new Error('three instances');
  return [a, b, c];
}

const post = (on: Instance, path: string, body: unknown): Promise<SentResponse> => send(on.base, 'POST', path, body, anonymous);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function signIn(on: Instance, email: string, password = PASSWORD): Promise<Session> {
  const response = await post(on, '/v1/auth/sign-in', { email, password });
  expect(response.status, response.text).toBe(200);
  return response.json<Session>();
}

async function notesStatus(on: Instance, token: string): Promise<number> {
  return (await send(on.base, 'GET', '/notes', undefined, bearer(token))).status;
}

/** The shared counters: failed sign-ins spread over the three are throttled together after 10, the right password too. */
async function failuresCountTogether([a, b, c]: readonly [Instance, Instance, Instance], email: string): Promise<void> {
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) {
    const on = i % 3 === 0 ? a : i % 3 === 1 ? b : c;
    statuses.push((await post(on, '/v1/auth/sign-in', { email, password: `wrong ${String(i)}` })).status);
  }
  expect(statuses).toEqual([...Array<number>(10).fill(401), 429, 429]);
  for (const on of [a, b, c]) {
    const right = await post(on, '/v1/auth/sign-in', { email, password: PASSWORD });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
  }
}

describe.skipIf(TEST_DIALECT !== 'postgres').concurrent('accounts on three instances', { timeout: CLI_TEST_TIMEOUT_MS * 2 }, () => {
  it('tokens, refresh rotation and reuse, throttling and key rotation work across instances (counters in PostgreSQL)', async ({ cluster }) => {
    const [a, b, c] = await trio(cluster, 'database');
    const email = 'ann@example.com';
    expect((await post(a, '/v1/auth/sign-up', { email, password: PASSWORD })).status).toBe(201);
    expect((await post(b, '/v1/auth/sign-up', { email: 'bob@example.com', password: PASSWORD })).status).toBe(201);

    // An access token of A works on B and C.
    const session = await signIn(a, email);
    const note = await send(b.base, 'POST', '/notes', { text: 'written on B' }, bearer(session.accessToken));
    expect(note.status, note.text).toBe(201);
    const listed = await send(c.base, 'GET', '/notes', undefined, bearer(session.accessToken));
    expect(listed.json<{ text: string }[]>().map((n) => n.text)).toEqual(['written on B']);

    // A's refresh token rotated by B; its reuse on C ends the family: B's newest token is refused too.
    const rotated = await post(b, '/v1/auth/refresh', { refreshToken: session.refreshToken });
    expect(rotated.status, rotated.text).toBe(200);
    const newest = rotated.json<Session>();
    expect(await notesStatus(a, newest.accessToken)).toBe(200);
    expect((await post(c, '/v1/auth/refresh', { refreshToken: session.refreshToken })).status).toBe(401);
    for (const on of [a, b, c]) expect((await post(on, '/v1/auth/refresh', { refreshToken: newest.refreshToken })).status).toBe(401);

    await failuresCountTogether([a, b, c], 'bob@example.com');

    // keys rotate: a token of the old key, then one of the new key (signed by a new instance: the
    // running ones sign with the key they know until they read the keys again, within a minute).
    const old = await signIn(b, email);
    const rotate = await finish(startCli(cluster.folder, ['keys', 'rotate', '-d', cluster.database.url], {}, cluster.children));
    expect(rotate.code, rotate.stderr).toBe(0);
    const [d] = await cluster.instances(1, accountsEnv('database'));
    if (d === undefined) throw new Error('a fourth instance');
    const fresh = await signIn(d, email);
    expect(decodeProtectedHeader(fresh.accessToken).kid).not.toBe(decodeProtectedHeader(old.accessToken).kid);
    for (const on of [a, b, c]) {
      expect(await notesStatus(on, fresh.accessToken)).toBe(200);
      expect(await notesStatus(on, old.accessToken)).toBe(200);
    }
    const jwks = (await send(a.base, 'GET', '/.well-known/jwks.json', undefined, anonymous)).json<{ keys: { kid: string }[] }>();
    expect(jwks.keys.map((k) => k.kid).sort()).toEqual([decodeProtectedHeader(old.accessToken).kid, decodeProtectedHeader(fresh.accessToken).kid].sort());
  });

  it('failed sign-ins over three instances are throttled together with the counters in Redis', async ({ cluster }) => {
    const [a, b, c] = await trio(cluster, 'redis');
    // Redis outlives the test: an identifier of this run's own.
    const email = `redis-${randomUUID()}@example.com`;
    expect((await post(a, '/v1/auth/sign-up', { email, password: PASSWORD })).status).toBe(201);
    const session = await signIn(c, email);
    expect(await notesStatus(b, session.accessToken)).toBe(200);
    await failuresCountTogether([a, b, c], email);
    expect(await cluster.database.query('select "key" from "_restgraph_rate_limits"')).toEqual([]);
  });
});
