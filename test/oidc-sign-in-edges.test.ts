import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignInTokens, VerifiedIdentity } from '../src/auth/oidc-settings.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';
import { CLIENT_ID, CLIENT_SECRET, signInAtProvider, startLocalProvider, type LocalProvider } from './helpers/oidc-provider.js';

checkResponsesAgainstOpenApi();

/**
 * The edges of OpenID Connect sign-in: a sign-in that took too long, a state cookie sealed for
 * another provider, a provider that cannot be reached, and the Secure cookie of an https callback
 * behind a proxy.
 */

let provider: LocalProvider;
let t: TestApp;
const signedIn: VerifiedIdentity[] = [];

beforeAll(async () => {
  provider = await startLocalProvider(['http://localhost/v1/auth/oidc/local/callback', 'http://localhost/v1/auth/oidc/other/callback', 'https://api.example.com/v1/auth/oidc/local/callback']);
  const local = { issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET };
  const signInWithIdentity = (identity: VerifiedIdentity): Promise<SignInTokens> => {
    signedIn.push(identity);
    return Promise.resolve({ accessToken: 'a', refreshToken: 'r', expiresIn: 900, user: {} });
  };
  t = await startTestApp({
    trustProxy: true,
    oidc: {
      // The same provider under two names, the second with its own secret (as two providers have).
      providers: { local, other: { ...local, clientSecret: `${CLIENT_SECRET}-other` }, down: { issuer: 'http://127.0.0.1:1', clientId: 'c', clientSecret: 's' } },
      stateTtlMs: 1500,
      signInWithIdentity,
    },
  });
});
afterAll(async () => {
  await t.close();
  await provider.close();
});

async function start(name: string, headers: Record<string, string> = {}) {
  const res = await t.app.inject({ method: 'GET', url: `/v1/auth/oidc/${name}/start`, headers: { authorization: '', ...headers } });
  expect(res.statusCode, res.body).toBe(302);
  const setCookie = String(res.headers['set-cookie']);
  return { location: String(res.headers.location), setCookie, cookie: setCookie.split(';')[0] ?? '' };
}

function callback(url: URL, cookie: string) {
  return t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers: { authorization: '', cookie } });
}

describe('OpenID Connect sign-in, edges', () => {
  it('refuses a sign-in finished after the state expired', async () => {
    const started = await start('local');
    expect(started.setCookie).toContain('Max-Age=2;');
    const back = await signInAtProvider(started.location, 'alice');
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const count = signedIn.length;
    const res = await callback(back, started.cookie);
    expect(res.statusCode).toBe(400);
    expect(json<{ code: string; detail: string }>(res)).toMatchObject({ code: 'oidc-sign-in-failed', detail: expect.stringContaining('took too long') as string });
    expect(signedIn.length).toBe(count);
  });

  it("does not open a state cookie sealed for another provider", async () => {
    const started = await start('local');
    const back = await signInAtProvider(started.location, 'alice');
    const elsewhere = new URL(back.href.replace('/oidc/local/', '/oidc/other/'));
    const res = await callback(elsewhere, started.cookie);
    expect(res.statusCode).toBe(400);
    expect(json<{ detail: string }>(res).detail).toContain('No sign-in with other is in progress');
    // The same pair at its own provider's callback works.
    expect((await callback(back, started.cookie)).statusCode).toBe(200);
  });

  it('answers 502 when the provider cannot be reached, and tries again at the next sign-in', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/v1/auth/oidc/down/start', headers: { authorization: '' } });
      expect(res.statusCode).toBe(502);
      expect(json<{ code: string }>(res).code).toBe('oidc-provider-unavailable');
    }
  });

  it('behind a TLS proxy, the callback is https and the cookie Secure', async () => {
    const started = await start('local', { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' });
    expect(new URL(started.location).searchParams.get('redirect_uri')).toBe('https://api.example.com/v1/auth/oidc/local/callback');
    expect(started.setCookie).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
  });
});
