import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * No account enumeration through the account endpoints (docs/accounts.md): a known and an unknown
 * identifier get the same status, the same headers (but those that differ for every request) and
 * the same body from sign-in (a wrong password against an unknown email, and once the identifier's
 * failures are throttled), forgot-password and verify-email/request (an unverified account, a
 * verified one, none). On the suite's database. How long the answers take is the benchmark's
 * business (bench/accounts.js, docs/performance.md#accounts), not a functional test's.
 */

const PASSWORD = 'correct horse battery staple';
const anonymous = { authorization: '' };
let t: TestApp;

beforeAll(async () => {
  // Three failed sign-ins per identifier before the throttle: reached quickly below.
  t = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA), rateLimits: { signInFailures: '3/15m' } });
  for (const email of ['ann@example.com', 'bob@example.com']) {
    const up = await post('/v1/auth/sign-up', { email, password: PASSWORD });
    expect(up.statusCode, up.body).toBe(201);
  }
  // Bob verifies his email with the link of his sign-up's message (development: written to the log).
  await t.app.restgraph.accountEmails?.settled();
  const link = t.logs.map((line) => line.mail as { to?: string; link?: string } | undefined).find((mail) => mail?.to === 'bob@example.com')?.link ?? '';
  const verified = await post('/v1/auth/verify-email', { token: new URL(link).searchParams.get('token') });
  expect(verified.statusCode, verified.body).toBe(204);
});
afterAll(() => t.close());

function post(url: string, payload: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url, headers: anonymous, payload });
}

/**
 * What an answer tells its client, but for what differs for every request: its request id (header
 * and body), its date, and the numbers of the address's quota (which counts every request alike).
 */
function seen(res: LightMyRequestResponse): { status: number; headers: Record<string, unknown>; body: unknown } {
  const headers: Record<string, unknown> = { ...res.headers };
  delete headers['x-request-id'];
  delete headers.date;
  for (const name of ['ratelimit', 'retry-after']) if (typeof headers[name] === 'string') headers[name] = headers[name].replace(/\d+/g, 'N');
  const body: unknown = res.headers['content-type']?.toString().includes('json') ? { ...(JSON.parse(res.body) as object), requestId: undefined } : res.body;
  return { status: res.statusCode, headers, body };
}

describe('known and unknown identifiers get the same answer', () => {
  it('sign-in: a wrong password for an account, any password for an unknown email', async () => {
    const wrong = seen(await post('/v1/auth/sign-in', { email: 'ann@example.com', password: 'not her password' }));
    const unknown = seen(await post('/v1/auth/sign-in', { email: 'nobody@example.com', password: 'not her password' }));
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Bearer realm="restgraph"');
    expect(wrong.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(wrong.body).toMatchObject({ code: 'invalid-credentials', detail: 'The email or the password is wrong.' });
    expect(unknown).toEqual(wrong);
  });

  it('sign-in, once the identifier is throttled: the same 429 whether the account exists (and whatever the password)', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await post('/v1/auth/sign-in', { email: 'bob@example.com', password: 'not his password' })).statusCode).toBe(401);
      expect((await post('/v1/auth/sign-in', { email: 'nobody-else@example.com', password: 'not his password' })).statusCode).toBe(401);
    }
    const known = seen(await post('/v1/auth/sign-in', { email: 'bob@example.com', password: 'not his password' }));
    const right = seen(await post('/v1/auth/sign-in', { email: 'bob@example.com', password: PASSWORD }));
    const unknown = seen(await post('/v1/auth/sign-in', { email: 'nobody-else@example.com', password: 'not his password' }));
    expect(known.status).toBe(429);
    expect(known.headers['retry-after']).toBe('N');
    expect(unknown).toEqual(known);
    expect(right).toEqual(known);
  });

  for (const url of ['/v1/auth/forgot-password', '/v1/auth/verify-email/request']) {
    it(`${url}: an unverified account, a verified one and an unknown email`, async () => {
      const unverified = seen(await post(url, { email: 'ann@example.com' }));
      const verified = seen(await post(url, { email: 'bob@example.com' }));
      const unknown = seen(await post(url, { email: 'nobody@example.com' }));
      expect(unverified.status).toBe(202);
      expect(unverified.headers['cache-control']).toBe('no-store');
      expect(unverified.body).toEqual({ status: 'accepted', detail: 'If an account has this email and needs the message, it is on its way.' });
      expect(verified).toEqual(unverified);
      expect(unknown).toEqual(unverified);
      await t.app.restgraph.accountEmails?.settled();
    });
  }
});
