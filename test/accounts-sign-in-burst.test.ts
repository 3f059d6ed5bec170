import { afterEach, describe, expect, it } from 'vitest';
import type { RateLimitOptions } from '../src/app/app-options.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { startOfWindow } from './helpers/rate-limit-windows.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * A burst of 1,000 sign-ins against the account throttles (docs/accounts.md#passwords), through
 * the app on the suite's database: wrong passwords for one identifier, sent concurrently, reach
 * password checking (a 401) at most as often as the failure quota allows, the rest are 429 with
 * Retry-After without hashing, and then the right password is refused too; sign-ins over many
 * identifiers from one address pass at most as often as the per-address quota allows.
 */

const PASSWORD = 'correct horse battery staple';
const BURST = 1000;
const BATCH = 100;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function appWith(rateLimits: Partial<RateLimitOptions> = {}): Promise<TestApp> {
  t = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA), rateLimits: { anonymous: 'off', ...rateLimits } });
  const up = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: { authorization: '' }, payload: { email: 'ann@example.com', password: PASSWORD } });
  expect(up.statusCode, up.body).toBe(201);
  return t;
}

interface Tally {
  statuses: Map<number, number>;
  retryAfterMissing: number;
  startedAt: number;
  endedAt: number;
}

/**
 * How many windows of `seconds` (aligned to the clock) the burst touched: 1, unless a slow run
 * crossed a boundary, when the next window lets the quota through again.
 */
function windowsOf(tally: Tally, seconds: number): number {
  const ms = seconds * 1000;
  return Math.floor(tally.endedAt / ms) - Math.floor(tally.startedAt / ms) + 1;
}

/** The burst's answers: `passed` of status `pass` (within the quota of each window it touched), the rest 429 with Retry-After. */
function expectThrottled(tally: Tally, pass: number, quota: number, windowSeconds: number): void {
  const passed = tally.statuses.get(pass) ?? 0;
  expect(passed).toBeGreaterThanOrEqual(quota);
  expect(passed, `${String(windowsOf(tally, windowSeconds))} window(s)`).toBeLessThanOrEqual(quota * windowsOf(tally, windowSeconds));
  expect(Object.fromEntries(tally.statuses)).toEqual({ [pass]: passed, 429: BURST - passed });
  expect(tally.retryAfterMissing).toBe(0);
}

/** Sends `count` sign-ins, `BATCH` at a time concurrently; `attempt(i)` gives the i-th's email, password and client address. */
async function burst(app: TestApp, count: number, attempt: (i: number) => { email: string; password: string; address: string }): Promise<Tally> {
  const tally: Tally = { statuses: new Map(), retryAfterMissing: 0, startedAt: Date.now(), endedAt: 0 };
  for (let start = 0; start < count; start += BATCH) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(BATCH, count - start) }, (_, k) => {
        const { email, password, address } = attempt(start + k);
        return app.app.inject({ method: 'POST', url: '/v1/auth/sign-in', remoteAddress: address, headers: { authorization: '' }, payload: { email, password } });
      }),
    );
    for (const answer of answers) {
      tally.statuses.set(answer.statusCode, (tally.statuses.get(answer.statusCode) ?? 0) + 1);
      if (answer.statusCode === 429 && !(Number(answer.headers['retry-after']) > 0)) tally.retryAfterMissing++;
    }
  }
  tally.endedAt = Date.now();
  return tally;
}

/** A different client address for each i (so that only the identifier's quota applies). */
const addressOf = (i: number) => `10.${String(Math.floor(i / 65536) % 256)}.${String(Math.floor(i / 256) % 256)}.${String(i % 256)}`;

describe('1,000 wrong passwords for one identifier', () => {
  for (const [name, limits, allowed, windowSeconds] of [
    ['at the defaults (10 per 15 minutes)', {}, 10, 900],
    ['with RESTGRAPH_RATE_LIMIT_SIGN_IN_FAILURES=3/1h', { signInFailures: '3/1h' }, 3, 3600],
  ] as const) {
    it(`${name}: at most the quota reach password checking, the rest are 429 with Retry-After, then the right password too`, async () => {
      const app = await appWith(limits);
      await startOfWindow(60);
      const tally = await burst(app, BURST, (i) => ({ email: 'ann@example.com', password: `wrong password ${String(i)}`, address: addressOf(i) }));
      // A 401 is an attempt whose password was checked; a 429 was refused before any hashing.
      expectThrottled(tally, 401, allowed, windowSeconds);
      const right = await app.app.inject({ method: 'POST', url: '/v1/auth/sign-in', remoteAddress: '10.255.0.1', headers: { authorization: '' }, payload: { email: 'ann@example.com', password: PASSWORD } });
      // (Unless a slow run crossed into a new window and left it room: then the right password may pass.)
      if (windowsOf({ ...tally, endedAt: Date.now() }, windowSeconds) === 1) {
        expect(right.statusCode, right.body).toBe(429);
        expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
      }
    });
  }

  it('a right password is not counted as a failure (an attempt counts while its password is checked)', async () => {
    const app = await appWith({ signInFailures: '3/1h' });
    for (let i = 0; i < 5; i++) {
      const tally = await burst(app, 1, () => ({ email: 'ann@example.com', password: PASSWORD, address: '10.0.0.1' }));
      expect(Object.fromEntries(tally.statuses)).toEqual({ 200: 1 });
    }
    const wrong = await burst(app, 4, (i) => ({ email: 'ann@example.com', password: `wrong ${String(i)}`, address: '10.0.0.1' }));
    expect(Object.fromEntries(wrong.statuses)).toEqual({ 401: 3, 429: 1 });
  });
});

describe('1,000 sign-ins over many identifiers from one address', () => {
  for (const [name, limits, allowed] of [
    ['at the defaults (100 a minute)', {}, 100],
    ['with RESTGRAPH_RATE_LIMIT_ACCOUNT_REQUESTS=20/1m', { accountRequests: '20/1m' }, 20],
  ] as const) {
    it(`${name}: at most the quota pass, the rest are 429 with Retry-After`, async () => {
      const app = await appWith(limits);
      await startOfWindow(60);
      const tally = await burst(app, BURST, (i) => ({ email: `user${String(i)}@example.com`, password: 'not a password of theirs', address: '198.51.100.9' }));
      expectThrottled(tally, 401, allowed, 60);
    });
  }
});
