import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS, type RateLimitOptions } from '../src/app/app-options.js';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { createAccountThrottle } from '../src/app/rate-limit-setup.js';
import type { AccountThrottle } from '../src/core/account-throttle.js';
import { RateLimitedError } from '../src/errors.js';
import { lingerLimits } from '../src/http/lingering-close.js';
import { registerProblemHandlers } from '../src/http/problem-details.js';
import { openDatabase } from '../src/store/open-database.js';
import type { SqlDatabase } from '../src/store/sql-database.js';
import { upgradeSystemTables } from '../src/store/system-migrations.js';
import { tempDir } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from './helpers/test-database.js';

/**
 * The throttles of the account endpoints: failed sign-ins per identifier, account requests per
 * address, emails per identifier; their windows, their refusals (429 with Retry-After), and their
 * counters shared by instances (in the database, in Redis). On the suite's database.
 */

const QUARTER_HOUR_MS = 15 * 60_000;

let dir: ReturnType<typeof tempDir>;
let database: TestDatabase;
let opened: SqlDatabase[];
let throttles: AccountThrottle[];

beforeEach(async () => {
  dir = tempDir('restgraph-account-throttle-');
  database = await createTestDatabase(dir.path, 'throttle');
  opened = [];
  throttles = [];
});

afterEach(async () => {
  for (const throttle of throttles) await throttle.close();
  for (const db of opened) await db.close();
  await database.drop();
  dir.cleanup();
});

/** One instance's throttle: its own connection to the test's database and its own counter store. */
async function instance(options: Partial<RateLimitOptions> = {}, now?: () => number): Promise<AccountThrottle> {
  const { db } = await openDatabase(database.url);
  opened.push(db);
  await upgradeSystemTables(db);
  const throttle = await createAccountThrottle({ ...DEFAULT_OPTIONS.rateLimits, ...options }, db, now);
  throttles.push(throttle);
  return throttle;
}

/** A start a little after the next 15-minute boundary (windows are aligned to the clock), in the future so no sweep forgets the counters. */
function windowStart(): number {
  return Math.ceil(Date.now() / QUARTER_HOUR_MS) * QUARTER_HOUR_MS + 1000;
}

async function refusalOf(work: Promise<unknown>): Promise<RateLimitedError> {
  const error = await work.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(RateLimitedError);
  return error as RateLimitedError;
}

describe('failed sign-ins per identifier', () => {
  it('10 failures in 15 minutes close the identifier (429 with Retry-After) until the window ends; others are untouched', async () => {
    let now = windowStart();
    const throttle = await instance({ store: 'database' }, () => now);
    const email = `ada-${randomUUID()}@example.test`;
    for (let i = 1; i <= 9; i++) expect(await throttle.recordFailedSignIn(email)).toEqual({ allowed: true, retryAfterSeconds: 0 });
    expect(await throttle.signInAllowed(email)).toEqual({ allowed: true, retryAfterSeconds: 0 });
    // The tenth failure fills the window; case and surrounding spaces do not make another identifier.
    expect(await throttle.recordFailedSignIn(` ${email.toUpperCase()} `)).toEqual({ allowed: false, retryAfterSeconds: 899 });
    expect(await throttle.signInAllowed(email)).toEqual({ allowed: false, retryAfterSeconds: 899 });
    now += 60_000;
    const error = await refusalOf(throttle.assertSignInAllowed(email));
    expect(error).toMatchObject({ status: 429, code: 'rate-limited', headers: { 'retry-after': '839' } });
    expect(error.message).toBe('Too many failed sign-ins for this identifier; try again in 839 s.');
    expect(await throttle.signInAllowed(`bob-${randomUUID()}@example.test`)).toEqual({ allowed: true, retryAfterSeconds: 0 });
    // Asking does not count: the next window opens with all 10 attempts.
    now += QUARTER_HOUR_MS;
    for (let i = 0; i < 5; i++) expect((await throttle.signInAllowed(email)).allowed).toBe(true);
    await throttle.assertSignInAllowed(email);
    for (let i = 1; i <= 9; i++) expect((await throttle.recordFailedSignIn(email)).allowed).toBe(true);
  });

  it('an endpoint that asks first answers 429 problem+json with Retry-After (as the HTTP adapters turn errors into problems)', async () => {
    const throttle = await instance({ signInFailures: '2/1h' });
    const app = Fastify({ logger: false });
    registerProblemHandlers(app, lingerLimits(30_000));
    app.post<{ Body: { email: string } }>('/v1/auth/sign-in', async (request) => {
      await throttle.checkAccountRequest(request.ip);
      await throttle.assertSignInAllowed(request.body.email);
      await throttle.recordFailedSignIn(request.body.email);
      return { wrong: 'password' };
    });
    try {
      const email = `judy-${randomUUID()}@example.test`;
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await app.inject({ method: 'POST', url: '/v1/auth/sign-in', payload: { email } })).statusCode);
      expect(statuses).toEqual([200, 200, 429]);
      const refused = await app.inject({ method: 'POST', url: '/v1/auth/sign-in', payload: { email } });
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3600);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'rate-limited', status: 429, detail: expect.stringMatching(/^Too many failed sign-ins for this identifier; try again in \d+ s\.$/) as string });
    } finally {
      await app.close();
    }
  });

  it('the counters hold a hash of the identifier, never the address itself', async () => {
    const throttle = await instance({ store: 'database' });
    const email = `secret-${randomUUID()}@example.test`;
    await throttle.recordFailedSignIn(email);
    const rows = await database.query<{ key: string }>('select "key" from "_restgraph_rate_limits"');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.key).toMatch(/^account-sign-in-failures\|id:[A-Za-z0-9_-]{43}\|\d+$/);
    expect(JSON.stringify(rows)).not.toContain('secret-');
  });
});

describe('account requests per address', () => {
  it('100 a minute per address, then 429 with Retry-After; an IPv6 /64 counts as one address', async () => {
    const now = windowStart();
    const throttle = await instance({}, () => now);
    for (let i = 0; i < 100; i++) await throttle.checkAccountRequest('203.0.113.7');
    const error = await refusalOf(throttle.checkAccountRequest('203.0.113.7'));
    expect(error).toMatchObject({ status: 429, headers: { 'retry-after': '59' } });
    expect(error.message).toBe('Too many account requests from this address; try again in 59 s.');
    await throttle.checkAccountRequest('203.0.113.8');

    for (let i = 0; i < 50; i++) await throttle.checkAccountRequest('2001:db8:1:2::1');
    for (let i = 0; i < 50; i++) await throttle.checkAccountRequest('2001:db8:1:2:ffff::9');
    await refusalOf(throttle.checkAccountRequest('2001:db8:1:2::abcd'));
    await throttle.checkAccountRequest('2001:db8:1:3::1');
  });

  it('a burst of 1,000 from one address lets exactly 100 through', async () => {
    const throttle = await instance({ store: 'database' });
    const address = `198.51.100.${String(Math.floor(Math.random() * 250))}`;
    const results = await Promise.allSettled(Array.from({ length: 1000 }, () => throttle.checkAccountRequest(address)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(100);
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof RateLimitedError)).toHaveLength(900);
  });
});

describe('emails per identifier', () => {
  it('5 an hour per identifier; the sixth is not sent (no refusal: the answer must not change)', async () => {
    const throttle = await instance();
    const email = `carol-${randomUUID()}@example.test`;
    const allowed = [];
    for (let i = 0; i < 6; i++) allowed.push(await throttle.allowEmail(email));
    expect(allowed).toEqual([true, true, true, true, true, false]);
    expect(await throttle.allowEmail(`dave-${randomUUID()}@example.test`)).toBe(true);
  });
});

describe('shared by instances', () => {
  it.skipIf(TEST_DIALECT !== 'postgres')('on PostgreSQL by default: failures on two instances count together, and so does a burst of requests', async () => {
    const [a, b] = [await instance(), await instance()];
    const email = `erin-${randomUUID()}@example.test`;
    for (let i = 0; i < 6; i++) await a.recordFailedSignIn(email);
    for (let i = 0; i < 3; i++) await b.recordFailedSignIn(email);
    expect((await a.signInAllowed(email)).allowed).toBe(true);
    expect((await b.recordFailedSignIn(email)).allowed).toBe(false);
    expect((await a.signInAllowed(email)).allowed).toBe(false);

    const results = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a : b).checkAccountRequest('192.0.2.44')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(100);
  });

  it('in the database (RESTGRAPH_RATE_LIMIT_STORE=database): two instances count together', async () => {
    const [a, b] = [await instance({ store: 'database' }), await instance({ store: 'database' })];
    const email = `frank-${randomUUID()}@example.test`;
    for (let i = 0; i < 5; i++) await a.recordFailedSignIn(email);
    for (let i = 0; i < 4; i++) await b.recordFailedSignIn(email);
    expect((await b.recordFailedSignIn(email)).allowed).toBe(false);
    await refusalOf(a.assertSignInAllowed(email));
  });

  it('in Redis (REDIS_URL): two instances count together, and apart from the database', async () => {
    const options = { redisUrl: 'redis://127.0.0.1:6379' };
    const [a, b] = [await instance(options), await instance(options)];
    const email = `grace-${randomUUID()}@example.test`;
    for (let i = 0; i < 9; i++) await (i % 2 === 0 ? a : b).recordFailedSignIn(email);
    expect((await a.signInAllowed(email)).allowed).toBe(true);
    await b.recordFailedSignIn(email);
    expect((await a.signInAllowed(email)).allowed).toBe(false);
    expect(await database.query('select "key" from "_restgraph_rate_limits"')).toEqual([]);
  });

  it.skipIf(TEST_DIALECT !== 'sqlite')('on SQLite by default: in each process\'s memory (as the other quotas)', async () => {
    const [a, b] = [await instance(), await instance()];
    const email = `heidi-${randomUUID()}@example.test`;
    for (let i = 0; i < 10; i++) await a.recordFailedSignIn(email);
    expect((await a.signInAllowed(email)).allowed).toBe(false);
    expect((await b.signInAllowed(email)).allowed).toBe(true);
  });
});

describe('account throttle settings', () => {
  it('reads the three quotas from the environment, and uses them', async () => {
    const { rateLimits } = optionsFromEnv({
      RESTGRAPH_RATE_LIMIT_SIGN_IN_FAILURES: '3/1h',
      RESTGRAPH_RATE_LIMIT_ACCOUNT_REQUESTS: '2/10s',
      RESTGRAPH_RATE_LIMIT_ACCOUNT_EMAILS: '1/1d',
    });
    expect(rateLimits).toEqual({ signInFailures: '3/1h', accountRequests: '2/10s', accountEmails: '1/1d' });
    const throttle = await instance(rateLimits);
    expect(throttle.settings).toEqual({
      signInFailures: { name: 'account-sign-in-failures', limit: 3, windowSeconds: 3600 },
      accountRequests: { name: 'account-requests', limit: 2, windowSeconds: 10 },
      accountEmails: { name: 'account-emails', limit: 1, windowSeconds: 86_400 },
    });
    const email = `ivan-${randomUUID()}@example.test`;
    await throttle.recordFailedSignIn(email);
    await throttle.recordFailedSignIn(email);
    expect((await throttle.recordFailedSignIn(email)).allowed).toBe(false);
  });

  it('defaults to 10 per 15 minutes, 100 per minute and 5 per hour', async () => {
    const throttle = await instance();
    expect(throttle.settings).toEqual({
      signInFailures: { name: 'account-sign-in-failures', limit: 10, windowSeconds: 900 },
      accountRequests: { name: 'account-requests', limit: 100, windowSeconds: 60 },
      accountEmails: { name: 'account-emails', limit: 5, windowSeconds: 3600 },
    });
  });

  it('refuses a malformed quota, naming the variable', () => {
    expect(() => optionsFromEnv({ RESTGRAPH_RATE_LIMIT_SIGN_IN_FAILURES: 'ten' })).toThrow('Invalid configuration RESTGRAPH_RATE_LIMIT_SIGN_IN_FAILURES');
    expect(() => optionsFromEnv({ RESTGRAPH_RATE_LIMIT_ACCOUNT_REQUESTS: '100/1y' })).toThrow('Invalid configuration RESTGRAPH_RATE_LIMIT_ACCOUNT_REQUESTS');
  });
});
