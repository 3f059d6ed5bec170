import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { actAsAdmin, checkResponsesAgainstOpenApi, discardLogs, json, startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT } from './helpers/test-database.js';
import { SchemaError } from '../src/errors.js';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { MemoryCounters } from '../src/store/rate-limit-counters.js';
import { startOfWindow } from './helpers/rate-limit-windows.js';

checkResponsesAgainstOpenApi();

/**
 * Rate limits (draft-ietf-httpapi-ratelimit-headers): quotas per credential or client address,
 * per resource operation, GraphQL by cost, counters in memory, in the database or in Redis.
 */

const SCHEMA = `
versions: [v1]
rateLimits:
  default: 5/1m
resources:
  users:
    access: { read: public, write: public }
    fields:
      name: { type: string, required: true }
    relations:
      posts: { hasMany: posts, foreignKey: userId }
  posts:
    access: { read: public, write: public }
    rateLimits:
      create: 2/1m
      read: 100/1m
    fields:
      title: { type: string, required: true }
      userId: { type: integer, references: users }
`;

interface Problem {
  type: string;
  status: number;
  code: string;
  detail: string;
}

/** A client address of its own for each test, so counters never meet across tests or runs. */
function address(): string {
  const bytes = randomBytes(3);
  return `10.${bytes[0] ?? 0}.${bytes[1] ?? 0}.${bytes[2] ?? 0}`;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('rate limits by default: none for credentials, 600 a minute per address for anonymous clients', () => {
  let t: TestApp;
  beforeAll(async () => {
    const withoutQuotas = SCHEMA.replace('rateLimits:\n  default: 5/1m\n', '').replace('    rateLimits:\n      create: 2/1m\n      read: 100/1m\n', '');
    expect(withoutQuotas).not.toContain('rateLimits');
    t = await startTestApp({ schema: parseSchemaText(withoutQuotas) });
  });
  afterAll(() => t.close());

  it('a request with a credential gets no RateLimit headers and never a 429', async () => {
    for (let i = 0; i < 30; i++) {
      const response = await t.app.inject({ method: 'GET', url: '/users' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['ratelimit']).toBeUndefined();
      expect(response.headers['ratelimit-policy']).toBeUndefined();
    }
    const graphql = await t.app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ users { id } }' } });
    expect(json<{ extensions?: unknown }>(graphql).extensions).toBeUndefined();
  });

  it('an anonymous client gets 600 requests a minute, then a 429 (there was no quota at all: an open amplifier)', async () => {
    const ip = address();
    // Windows are whole minutes of the clock, and 600 requests took 5 s in a loaded full run: when
    // a minute ends during the burst, the count starts again in the next window (the RateLimit
    // header shows 599 left again) instead of the test waiting for a minute to begin.
    const send = (i: number) =>
      i % 3 === 2
        ? t.app.inject({ method: 'POST', url: '/graphql', remoteAddress: ip, headers: { authorization: '' }, payload: { query: '{ users { id } }' } })
        : t.app.inject({ method: 'GET', url: '/users', remoteAddress: ip, headers: { authorization: '' } });
    const first = await send(0);
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"anonymous";q=600;w=60');
    expect(first.headers['ratelimit']).toMatch(/^"anonymous";r=599;t=\d+$/);
    /** Requests let through in the current window. */
    let passed = 1;
    let refused: Awaited<ReturnType<typeof send>> | undefined;
    // Two windows' worth and some: a burst that crosses one minute's end ends within the next.
    for (let i = 1; i < 1300 && refused === undefined; i++) {
      const response = await send(i);
      if (response.statusCode === 429) {
        refused = response;
        break;
      }
      expect(response.statusCode, `request ${i + 1}`).toBe(200);
      const remaining = Number(/^"anonymous";r=(\d+);t=\d+$/.exec(String(response.headers['ratelimit']))?.[1]);
      if (remaining === 599) passed = 0; // the first request of a new window
      passed++;
      expect(remaining, `request ${i + 1}, the ${passed}th of its window`).toBe(600 - passed);
    }
    if (refused === undefined) throw new Error('1,300 requests from one address and no 429');
    expect(passed).toBe(600);
    expect(refused.headers['ratelimit']).toMatch(/^"anonymous";r=0;t=\d+$/);
    expect(json<Problem>(refused).detail).toContain('"anonymous" (600 per 60 s)');
    // Other addresses, credentials from the same address and health probes are not affected.
    expect((await t.app.inject({ method: 'GET', url: '/users', remoteAddress: address(), headers: { authorization: '' } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/users', remoteAddress: ip })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/healthz', remoteAddress: ip, headers: { authorization: '' } })).statusCode).toBe(200);
  });

  it('the built-in anonymous quota is counted in memory, on PostgreSQL too: it adds no database statement', async () => {
    const statements: string[] = [];
    const counted = await startTestApp({ onSqlStatement: (text) => statements.push(text) });
    try {
      statements.length = 0;
      const response = await counted.app.inject({ method: 'GET', url: '/', remoteAddress: address(), headers: { authorization: '' } });
      expect(response.headers['ratelimit-policy']).toBe('"anonymous";q=600;w=60');
      expect(statements).toEqual([]);
    } finally {
      await counted.close();
    }
  });

  it('an IPv6 client is counted by its /64 network (a host may use any address in it); IPv4-mapped addresses by their IPv4 address', async () => {
    await startOfWindow(60);
    const count = async (remoteAddress: string): Promise<string> =>
      String((await t.app.inject({ method: 'GET', url: '/users', remoteAddress, headers: { authorization: '' } })).headers['ratelimit']);
    const prefix = `2001:db8:${randomBytes(2).toString('hex')}:1`;
    expect(await count(`${prefix}::1`)).toMatch(/r=599;/);
    expect(await count(`${prefix}:ffff:ffff:ffff:ffff`)).toMatch(/r=598;/);
    expect(await count(`${prefix.slice(0, -1)}2::1`)).toMatch(/r=599;/);
    const v4 = address();
    expect(await count(v4)).toMatch(/r=599;/);
    expect(await count(`::ffff:${v4}`)).toMatch(/r=598;/);
  });
});

describe('in-memory counters are bounded in bytes', () => {
  it('counters for 100,000 client networks stay within the bound; the oldest are forgotten first, the newest kept', async () => {
    const counters = new MemoryCounters(60_000, 1024 * 1024);
    try {
      const windowEnd = Date.now() + 60_000;
      for (let i = 0; i < 100_000; i++) counters.add(`anonymous|ip:10.${i >> 16}.${(i >> 8) & 255}.${i & 255}|0`, 1, 600, windowEnd);
      expect(counters.bytes).toBeLessThanOrEqual(1024 * 1024);
      // The newest client still has its count; the first one starts again from zero.
      expect(counters.add('anonymous|ip:10.1.134.159|0', 1, 600, windowEnd)).toEqual({ used: 2, added: true });
      expect(counters.add('anonymous|ip:10.0.0.0|0', 1, 600, windowEnd)).toEqual({ used: 1, added: true });
      // Counters of ended windows go first.
      counters.add('ended', 1, 1, Date.now() - 1);
      counters.sweep(Date.now());
      expect(counters.add('ended', 1, 1, windowEnd)).toEqual({ used: 1, added: true });
    } finally {
      await counters.close();
    }
  });
});

describe('the default anonymous quota switched off or replaced', () => {
  it('RESTGRAPH_RATE_LIMIT_ANONYMOUS=off: no quota for anonymous clients either', async () => {
    const options = optionsFromEnv({ RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'off' });
    expect(options.rateLimits).toEqual({ anonymous: 'off' });
    const t = await startTestApp({ rateLimits: options.rateLimits });
    try {
      for (let i = 0; i < 5; i++) {
        const response = await t.app.inject({ method: 'GET', url: '/v1/events?types=nothing', remoteAddress: '10.9.9.9', headers: { authorization: '' } });
        expect(response.headers['ratelimit-policy']).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });

  it('off keeps resource quotas, and a default quota still covers anonymous clients unless they have their own', async () => {
    const withResourceQuota = await startTestApp({ schema: parseSchemaText(SCHEMA.replace('rateLimits:\n  default: 5/1m\n', '')), rateLimits: { anonymous: 'off' } });
    const withDefault = await startTestApp({ rateLimits: { default: '50/1m' } });
    try {
      const posts = await withResourceQuota.app.inject({ method: 'GET', url: '/posts', remoteAddress: address(), headers: { authorization: '' } });
      expect(posts.headers['ratelimit-policy']).toBe('"posts.read";q=100;w=60');
      const users = await withDefault.app.inject({ method: 'GET', url: '/', remoteAddress: address(), headers: { authorization: '' } });
      expect(users.headers['ratelimit-policy']).toBe('"default";q=50;w=60');
    } finally {
      await withResourceQuota.close();
      await withDefault.close();
    }
  });

  it('a bad RESTGRAPH_RATE_LIMIT_ANONYMOUS is refused at start-up, naming it', () => {
    expect(() => optionsFromEnv({ RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'none' })).toThrow(/RESTGRAPH_RATE_LIMIT_ANONYMOUS: must be .*, or off/);
    expect(() => optionsFromEnv({ RESTGRAPH_RATE_LIMIT: 'off' })).toThrow(/RESTGRAPH_RATE_LIMIT:/);
  });
});

describe('rate limits on REST', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ schema: parseSchemaText(SCHEMA) });
  });
  afterAll(() => t.close());

  it('counts down in RateLimit, then answers 429 problem+json with Retry-After, and nothing is written', async () => {
    const ip = address();
    await startOfWindow(60);
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await t.app.inject({ method: 'GET', url: '/users', remoteAddress: ip, headers: { authorization: '' } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['ratelimit-policy']).toBe('"default";q=5;w=60');
      seen.push(String(response.headers['ratelimit']));
    }
    expect(seen.map((h) => /^"default";r=(\d+);t=(\d+)$/.exec(h)?.[1])).toEqual(['4', '3', '2', '1', '0']);
    for (const h of seen) expect(Number(/t=(\d+)/.exec(h)?.[1])).toBeGreaterThanOrEqual(1);

    const refused = await t.app.inject({ method: 'POST', url: '/users', remoteAddress: ip, headers: { authorization: '' }, payload: { name: 'Mallory' } });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['ratelimit']).toBe(`"default";r=0;t=${retryAfter}`);
    const problem = json<Problem>(refused);
    expect(problem).toMatchObject({ type: 'urn:restgraph:problem:rate-limited', status: 429, code: 'rate-limited' });
    expect(problem.detail).toContain('"default" (5 per 60 s)');
    const users = await t.app.inject({ method: 'GET', url: '/users', remoteAddress: address() });
    expect(json<{ name: string }[]>(users).map((u) => u.name)).not.toContain('Mallory');
  });

  it('counts each credential on its own, and anonymous clients per address', async () => {
    await startOfWindow(60);
    const a = address();
    for (let i = 0; i < 5; i++) expect((await t.app.inject({ method: 'GET', url: '/users', remoteAddress: a, headers: { authorization: '' } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/users', remoteAddress: a, headers: { authorization: '' } })).statusCode).toBe(429);
    // Another address, and a credential from the same address, each have their own quota.
    expect((await t.app.inject({ method: 'GET', url: '/users', remoteAddress: address(), headers: { authorization: '' } })).statusCode).toBe(200);
    const key = json<{ key: string }>(await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'reader', scopes: ['users:read'] } })).key;
    const withKey = await t.app.inject({ method: 'GET', url: '/users', remoteAddress: a, headers: bearer(key) });
    expect(withKey.statusCode).toBe(200);
    expect(withKey.headers['ratelimit']).toMatch(/^"default";r=4;/);
  });

  it('counts a bad credential against its address, so token guessing is limited too', async () => {
    await startOfWindow(60);
    const ip = address();
    for (let i = 0; i < 5; i++) {
      const response = await t.app.inject({ method: 'GET', url: '/users', remoteAddress: ip, headers: bearer(`guess-${i}`) });
      expect(response.statusCode).toBe(401);
    }
    const limited = await t.app.inject({ method: 'GET', url: '/users', remoteAddress: ip, headers: bearer('guess-6') });
    expect(limited.statusCode).toBe(429);
  });

  it('a resource operation quota counts besides the default, under its own name', async () => {
    await startOfWindow(60);
    const ip = address();
    const post = () => t.app.inject({ method: 'POST', url: '/posts', remoteAddress: ip, headers: { authorization: '' }, payload: { title: 'x' } });
    const first = await post();
    expect(first.statusCode).toBe(201);
    expect(first.headers['ratelimit-policy']).toBe('"default";q=5;w=60, "posts.create";q=2;w=60');
    expect(first.headers['ratelimit']).toMatch(/^"default";r=4;t=\d+, "posts.create";r=1;t=\d+$/);
    expect((await post()).statusCode).toBe(201);
    const third = await post();
    expect(third.statusCode).toBe(429);
    expect(json<Problem>(third).detail).toContain('"posts.create" (2 per 60 s)');
    expect(third.headers['ratelimit']).toMatch(/"posts.create";r=0;/);
    // Reads of posts have their own quota (the read group) and still pass.
    const list = await t.app.inject({ method: 'GET', url: '/v1/posts', remoteAddress: ip, headers: { authorization: '' } });
    expect(list.statusCode).toBe(200);
    expect(list.headers['ratelimit-policy']).toBe('"default";q=5;w=60, "posts.read";q=100;w=60');
    // A relation path reads posts: the posts read quota applies there too.
    const related = await t.app.inject({ method: 'GET', url: '/users/1/posts', remoteAddress: address(), headers: { authorization: '' } });
    expect(related.headers['ratelimit-policy']).toBe('"default";q=5;w=60, "posts.read";q=100;w=60');
  });

  it('health probes and CORS preflights are not counted', async () => {
    await startOfWindow(60);
    const ip = address();
    for (let i = 0; i < 10; i++) {
      expect((await t.app.inject({ method: 'GET', url: '/healthz', remoteAddress: ip })).statusCode).toBe(200);
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url: '/users',
        remoteAddress: ip,
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['ratelimit']).toBeUndefined();
    }
    const counted = await t.app.inject({ method: 'GET', url: '/users', remoteAddress: ip, headers: { authorization: '' } });
    expect(counted.headers['ratelimit']).toMatch(/^"default";r=4;/);
  });

  it('unknown paths count too (scanners use up their quota)', async () => {
    await startOfWindow(60);
    const ip = address();
    const response = await t.app.inject({ method: 'GET', url: '/wp-admin', remoteAddress: ip, headers: { authorization: '' } });
    expect(response.statusCode).toBe(404);
    expect(response.headers['ratelimit']).toMatch(/^"default";r=4;/);
  });
});

describe('rate limits: recovery after the window', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ rateLimits: { default: '3/1s' } });
  });
  afterAll(() => t.close());

  it('a burst over the limit gets 429, and the same client passes again once Retry-After has passed', async () => {
    await startOfWindow(1);
    const ip = address();
    const statuses: number[] = [];
    let retryAfter = 0;
    for (let i = 0; i < 6; i++) {
      const response = await t.app.inject({ method: 'GET', url: '/users', remoteAddress: ip, headers: { authorization: '' } });
      statuses.push(response.statusCode);
      if (response.statusCode === 429) retryAfter = Number(response.headers['retry-after']);
    }
    // Anonymous reads of the example schema are 401 (read needs a token): counted all the same.
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    expect(retryAfter).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 50));
    const again = await t.app.inject({ method: 'GET', url: '/users', remoteAddress: ip, headers: { authorization: '' } });
    expect(again.statusCode).toBe(401);
    expect(again.headers['ratelimit']).toMatch(/^"default";r=2;t=1$/);
  });
});

describe('rate limits on GraphQL: charged by cost', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The default quota leaves room for the OpenAPI check's three document fetches (from 127.0.0.1).
    t = await startTestApp({ rateLimits: { default: '3/1m', graphql: '1000/1m' } });
    const alice = await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Alice' } });
    expect(alice.statusCode).toBe(201);
  });
  afterAll(() => t.close());

  interface Charged {
    data?: unknown;
    errors?: { message: string; extensions: { code: string } }[];
    extensions?: { rateLimit: { cost: number; limit: number; remaining: number; resetSeconds: number; windowSeconds: number } };
  }

  it('an expensive query is charged more than a cheap one; each response reports cost and remaining budget', async () => {
    await startOfWindow(60);
    const ip = address();
    const key = json<{ key: string }>(await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'gql', scopes: ['users:read', 'posts:read'] } })).key;
    const ask = (query: string) => t.app.inject({ method: 'POST', url: '/graphql', remoteAddress: ip, headers: bearer(key), payload: { query } });

    const cheap = await ask('{ user(id: "1") { name } }');
    expect(cheap.statusCode).toBe(200);
    const cheapBody = json<Charged>(cheap);
    expect(cheapBody.extensions?.rateLimit).toMatchObject({ cost: 1, limit: 1000, remaining: 999, windowSeconds: 60 });
    expect(cheap.headers['ratelimit-policy']).toBe('"graphql";q=1000;w=60');
    expect(cheap.headers['ratelimit']).toMatch(/^"graphql";r=999;t=\d+$/);

    const expensive = await ask('{ users(first: 20) { name posts(first: 10) { title } } }');
    expect(expensive.statusCode).toBe(200);
    expect(json<Charged>(expensive).extensions?.rateLimit).toMatchObject({ cost: 220, remaining: 779 });

    // Requests are not counted against the REST quota (3 per minute) on /graphql.
    for (let i = 0; i < 3; i++) expect((await ask('{ user(id: "1") { name } }')).statusCode).toBe(200);

    const tooMuch = await ask('{ users(first: 800) { name } }');
    expect(tooMuch.statusCode).toBe(429);
    expect(Number(tooMuch.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(tooMuch.headers['ratelimit']).toMatch(/^"graphql";r=776;t=\d+$/);
    const refused = json<Charged>(tooMuch);
    expect(refused.errors?.[0]?.extensions.code).toBe('rate-limited');
    expect(refused.errors?.[0]?.message).toContain('costs 800 points and 776 of the 1000');
    // The refused operation was not charged: a cheap one still fits.
    expect(json<Charged>(await ask('{ user(id: "1") { name } }')).extensions?.rateLimit.remaining).toBe(775);
  });

  it('invalid operations are not charged', async () => {
    const ip = address();
    const bad = await t.app.inject({ method: 'POST', url: '/graphql', remoteAddress: ip, payload: { query: '{ nope }' } });
    expect(json<Charged>(bad).errors?.[0]?.extensions.code).toBe('graphql-validation');
    expect(json<Charged>(bad).extensions).toBeUndefined();
    const ok = await t.app.inject({ method: 'POST', url: '/graphql', remoteAddress: ip, payload: { query: '{ user(id: "1") { name } }' } });
    expect(json<Charged>(ok).extensions?.rateLimit.remaining).toBeGreaterThanOrEqual(999 - 1);
  });

  it('without a GraphQL budget, /graphql requests count against the request quota', async () => {
    const plain = await startTestApp({ rateLimits: { default: '3/1m' } });
    try {
      await startOfWindow(60);
      const ip = address();
      const ask = () => plain.app.inject({ method: 'POST', url: '/graphql', remoteAddress: ip, payload: { query: '{ users { id } }' } });
      for (let i = 0; i < 3; i++) expect((await ask()).statusCode).toBe(200);
      const third = await ask();
      expect(third.statusCode).toBe(429);
      expect(json<Charged>(third).errors?.[0]?.extensions.code).toBe('rate-limited');
    } finally {
      await plain.close();
    }
  });
});

describe('rate limits shared between instances', () => {
  const dir = tempDir();
  const apps: { close: () => Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(() => dir.cleanup());

  const twoInstances = async (rateLimits: Record<string, string>) => {
    const db = await createTestDatabase(dir.path, `shared-${randomBytes(3).toString('hex')}`);
    apps.push({ close: () => db.drop() });
    const make = async () => {
      const app = actAsAdmin(await buildApp({ databaseUrl: db.url, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN, rateLimits }));
      apps.unshift(app);
      return app;
    };
    const a = await make();
    return [a, await make()] as const;
  };

  const sharedBurst = async (a: Awaited<ReturnType<typeof twoInstances>>[0], b: Awaited<ReturnType<typeof twoInstances>>[1]) => {
    await startOfWindow(60);
    const ip = address();
    const statuses: number[] = [];
    // Concurrent requests through both instances: the limit holds across them, exactly.
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).inject({ method: 'GET', url: '/users', remoteAddress: ip, headers: { authorization: '' } })),
    );
    for (const response of responses) statuses.push(response.statusCode);
    return statuses;
  };

  it.skipIf(TEST_DIALECT !== 'postgres')('in PostgreSQL by default: two instances together let exactly the limit through', async () => {
    const [a, b] = await twoInstances({ default: '5/1m' });
    const statuses = await sharedBurst(a, b);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
  });

  it('in Redis with REDIS_URL: two instances together let exactly the limit through', async () => {
    const [a, b] = await twoInstances({ default: '5/1m', redisUrl: 'redis://127.0.0.1:6379' });
    const statuses = await sharedBurst(a, b);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
  });

  it('in the database on request, on SQLite too', async () => {
    const [a, b] = await twoInstances({ default: '5/1m', store: 'database' });
    const statuses = await sharedBurst(a, b);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
  });

  it('in memory, each instance counts alone', async () => {
    const [a, b] = await twoInstances({ default: '5/1m', store: 'memory' });
    const statuses = await sharedBurst(a, b);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
  });
});

describe('rate limit configuration', () => {
  it('refuses a malformed quota in the schema file, naming its path', () => {
    let caught: unknown;
    try {
      parseSchemaText(SCHEMA.replace('create: 2/1m', 'create: lots'), 'api.yaml');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SchemaError);
    expect((caught as Error).message).toContain('resources.posts.rateLimits.create');
  });

  it('refuses a window over 31 days', () => {
    expect(() => parseSchemaText(SCHEMA.replace('default: 5/1m', 'default: 5/32d'))).toThrow(/rateLimits\.default/);
  });

  it('refuses a malformed quota option and an unreachable Redis at start-up', async () => {
    const dir = tempDir();
    try {
      const db = await createTestDatabase(dir.path);
      try {
        await expect(buildApp({ databaseUrl: db.url, logDestination: discardLogs(), rateLimits: { default: 'ten per minute' } })).rejects.toThrow(
          'Invalid configuration rateLimits.default: must be "<count>/<window>"',
        );
        await expect(buildApp({ databaseUrl: db.url, logDestination: discardLogs(), rateLimits: { default: '10/1m', redisUrl: 'redis://127.0.0.1:1' } })).rejects.toThrow(
          'Invalid configuration REDIS_URL: cannot reach Redis',
        );
        await expect(buildApp({ databaseUrl: db.url, logDestination: discardLogs(), rateLimits: { default: '10/1m', store: 'redis' } })).rejects.toThrow(
          'RESTGRAPH_RATE_LIMIT_STORE=redis needs REDIS_URL',
        );
      } finally {
        await db.drop();
      }
    } finally {
      dir.cleanup();
    }
  });
});
