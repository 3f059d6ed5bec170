import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * Verified account access tokens are remembered (src/auth/verified-token-cache.ts), by the whole
 * token, for at most RESTGRAPH_API_KEY_CACHE_SECONDS and never past the token's own expiry.
 */

const anonymous = { authorization: '' };
const PASSWORD = 'correct horse battery staple';
const apps: TestApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});
afterEach(() => {
  vi.useRealTimers();
});

/** An app whose caches would trust a credential for an hour, and a signed-in user's access token. */
async function signedIn(email: string): Promise<{ t: TestApp; token: string }> {
  const t = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA), accessTokenSeconds: 60, apiKeyCacheMs: 3_600_000 });
  apps.push(t);
  expect((await t.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: anonymous, payload: { email, password: PASSWORD } })).statusCode).toBe(201);
  const signIn = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: anonymous, payload: { email, password: PASSWORD } });
  expect(signIn.statusCode).toBe(200);
  return { t, token: json<{ accessToken: string }>(signIn).accessToken };
}

const me = (t: TestApp, token: string) => t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: { authorization: `Bearer ${token}` } });

describe('the verified access-token cache', () => {
  it('answers a repeated token, but not past its expiry however long the cache would trust it', async () => {
    const { t, token } = await signedIn('ann@example.com');
    for (let i = 0; i < 3; i++) {
      const res = await me(t, token);
      expect(res.statusCode).toBe(200);
      expect(json<{ subject: string }>(res).subject).toBe('1');
    }
    vi.useFakeTimers({ toFake: ['Date'] });
    // Past its `exp` and the 5 s of clock tolerance.
    vi.setSystemTime(Date.now() + 70_000);
    const expired = await me(t, token);
    expect(expired.statusCode).toBe(401);
    expect(json<{ code: string }>(expired).code).toBe('invalid-token');
  });

  it('never answers a token with another signature, though the genuine one is cached', async () => {
    const { t, token } = await signedIn('bob@example.com');
    expect((await me(t, token)).statusCode).toBe(200);
    const signature = token.slice(token.lastIndexOf('.') + 1);
    const forged = `${token.slice(0, token.lastIndexOf('.') + 1)}${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect((await me(t, forged)).statusCode).toBe(401);
    // Another payload under the genuine signature: another subject, refused too.
    const [header, payload] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    const other = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: '2' })).toString('base64url')}.${signature}`;
    expect((await me(t, other)).statusCode).toBe(401);
    expect((await me(t, token)).statusCode).toBe(200);
  });
});
