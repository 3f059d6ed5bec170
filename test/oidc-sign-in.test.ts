import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignInTokens, VerifiedIdentity } from '../src/auth/oidc-settings.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';
import { CLIENT_ID, CLIENT_SECRET, signInAtProvider, startLocalProvider, type LocalProvider } from './helpers/oidc-provider.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * OpenID Connect sign-in against a real provider (oidc-provider on a loopback port), the browser
 * played by hand: start → the provider's authorization endpoint → login → consent → callback.
 * The accounts core is stood in for by a stub that signs every identity in and records it.
 */

/** app.inject's host: the callback URL the provider must allow. */
const CALLBACK = 'http://localhost/v1/auth/oidc/local/callback';
const REDIRECT_URL = 'http://localhost:5173/signed-in';

let provider: LocalProvider;
let t: TestApp;
let redirecting: TestApp;
const signedIn: VerifiedIdentity[] = [];

async function stubSignIn(identity: VerifiedIdentity): Promise<SignInTokens> {
  signedIn.push(identity);
  return Promise.resolve({ accessToken: `access-for-${identity.subject}`, refreshToken: `refresh-for-${identity.subject}`, expiresIn: 900, user: { email: identity.email } });
}

beforeAll(async () => {
  provider = await startLocalProvider([CALLBACK]);
  const providers = { local: { issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET } };
  t = await startTestApp({ oidc: { providers, signInWithIdentity: stubSignIn } });
  redirecting = await startTestApp({ oidc: { providers, signInWithIdentity: stubSignIn, redirectUrl: REDIRECT_URL } });
});
afterAll(async () => {
  await t.close();
  await redirecting.close();
  await provider.close();
});

interface Started {
  authorizationUrl: URL;
  /** The state cookie as the browser sends it back. */
  cookie: string;
  setCookie: string;
}

async function start(app: TestApp = t, name = 'local'): Promise<Started> {
  const res = await app.app.inject({ method: 'GET', url: `/v1/auth/oidc/${name}/start`, headers: { authorization: '' } });
  expect(res.statusCode, res.body).toBe(302);
  const setCookie = String(res.headers['set-cookie']);
  return { authorizationUrl: new URL(String(res.headers.location)), cookie: setCookie.split(';')[0] ?? '', setCookie };
}

function callback(app: TestApp, url: URL, cookie: string | undefined) {
  return app.app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers: { authorization: '', ...(cookie === undefined ? {} : { cookie }) } });
}

/** The whole flow up to the callback request. */
async function signInAs(login: string, app: TestApp = t) {
  const started = await start(app);
  const back = await signInAtProvider(started.authorizationUrl.href, login);
  expect(back.href.startsWith(CALLBACK)).toBe(true);
  return { started, back, response: await callback(app, back, started.cookie) };
}

describe('OpenID Connect sign-in', () => {
  it('start sends the browser to the provider with PKCE S256, state and nonce, the state sealed in a callback-only cookie', async () => {
    const { authorizationUrl, setCookie } = await start();
    expect(authorizationUrl.origin).toBe(provider.issuer);
    const params = authorizationUrl.searchParams;
    expect(params.get('client_id')).toBe(CLIENT_ID);
    expect(params.get('redirect_uri')).toBe(CALLBACK);
    expect(params.get('response_type')).toBe('code');
    expect(params.get('scope')).toBe('openid email profile');
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(params.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(setCookie).toMatch(/^restgraph_oidc_state=[A-Za-z0-9_-]+; Path=\/v1\/auth\/oidc\/local\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/);
    // The verifier does not travel in the clear: the cookie is sealed.
    expect(setCookie).not.toContain(params.get('state') ?? 'no state');
    // Each start is a new sign-in.
    expect((await start()).authorizationUrl.searchParams.get('state')).not.toBe(params.get('state'));
  });

  it('signs in a verified identity: the callback exchanges the code and answers the tokens as JSON', async () => {
    const before = signedIn.length;
    const { response } = await signInAs('alice');
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(String(response.headers['set-cookie'])).toMatch(/^restgraph_oidc_state=; Path=\/v1\/auth\/oidc\/local\/callback; Max-Age=0/);
    expect(json(response)).toEqual({ accessToken: 'access-for-alice', refreshToken: 'refresh-for-alice', expiresIn: 900, user: { email: 'alice@example.com' } });
    expect(signedIn.slice(before)).toEqual([{ provider: 'local', issuer: provider.issuer, subject: 'alice', email: 'alice@example.com', emailVerified: true, name: 'Alice Liddell' }]);
  });

  it('refuses a callback replayed with the same code and cookie', async () => {
    const { started, back, response } = await signInAs('alice');
    expect(response.statusCode).toBe(200);
    const count = signedIn.length;
    const replay = await callback(t, back, started.cookie);
    expect(replay.statusCode).toBe(400);
    expect(json<{ code: string; detail: string }>(replay)).toMatchObject({ code: 'oidc-sign-in-failed', detail: expect.stringContaining('invalid_grant') as string });
    expect(signedIn.length).toBe(count);
  });

  it('refuses a state that is not the one of the sign-in started in this browser', async () => {
    const mine = await start();
    const back = await signInAtProvider(mine.authorizationUrl.href, 'alice');
    // Another browser's sign-in: its cookie does not go with this callback (login CSRF).
    const other = await start();
    const res = await callback(t, back, other.cookie);
    expect(res.statusCode).toBe(400);
    expect(json<{ code: string; detail: string }>(res)).toMatchObject({ code: 'oidc-sign-in-failed', detail: expect.stringContaining('state') as string });
    const forged = new URL(back);
    forged.searchParams.set('state', 'forged-state');
    expect((await callback(t, forged, mine.cookie)).statusCode).toBe(400);
    // The right pair still works (nothing was used up by the refusals).
    expect((await callback(t, back, mine.cookie)).statusCode).toBe(200);
  });

  it('refuses a callback without the state cookie (no PKCE verifier), or with an altered one', async () => {
    const started = await start();
    const back = await signInAtProvider(started.authorizationUrl.href, 'alice');
    const count = signedIn.length;
    const missing = await callback(t, back, undefined);
    expect(missing.statusCode).toBe(400);
    expect(json<{ code: string; detail: string }>(missing)).toMatchObject({ code: 'oidc-sign-in-failed', detail: expect.stringContaining('PKCE verifier') as string });
    const value = started.cookie.slice(started.cookie.indexOf('=') + 1);
    const altered = `restgraph_oidc_state=${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await callback(t, back, altered)).statusCode).toBe(400);
    expect(signedIn.length).toBe(count);
  });

  it('refuses an unverified email address, and an identity without one, before anything is signed in', async () => {
    const count = signedIn.length;
    // dora's provider sends Entra's xms_edov, but it is not Entra (login.microsoftonline.com): not a verification.
    for (const login of ['bob', 'carol', 'dora']) {
      const { response } = await signInAs(login);
      expect(response.statusCode, login).toBe(403);
      expect(json<{ code: string }>(response).code).toBe('oidc-email-not-verified');
    }
    expect(signedIn.length).toBe(count);
  });

  it('says what the provider answered when the user declines', async () => {
    const started = await start();
    const back = await signInAtProvider(started.authorizationUrl.href, 'alice', { abort: true });
    expect(back.searchParams.get('error')).toBe('access_denied');
    const res = await callback(t, back, started.cookie);
    expect(res.statusCode).toBe(400);
    expect(json<{ code: string; detail: string }>(res)).toMatchObject({ code: 'oidc-sign-in-failed', detail: expect.stringContaining('access_denied') as string });
  });

  it('answers 404 for a provider that is not configured', async () => {
    for (const url of ['/v1/auth/oidc/unknown/start', '/v1/auth/oidc/unknown/callback?code=x&state=y']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { authorization: '' } });
      expect(res.statusCode, url).toBe(404);
      expect(json<{ code: string }>(res).code).toBe('not-found');
    }
  });

  it('with RESTGRAPH_OIDC_REDIRECT_URL, sends the browser there with the tokens, or the error, in the fragment', async () => {
    const { response } = await signInAs('alice', redirecting);
    expect(response.statusCode).toBe(302);
    const location = new URL(String(response.headers.location));
    expect(`${location.origin}${location.pathname}${location.search}`).toBe(REDIRECT_URL);
    expect(Object.fromEntries(new URLSearchParams(location.hash.slice(1)))).toEqual({ accessToken: 'access-for-alice', refreshToken: 'refresh-for-alice', expiresIn: '900', tokenType: 'Bearer' });
    const refused = (await signInAs('bob', redirecting)).response;
    expect(refused.statusCode).toBe(302);
    const error = new URLSearchParams(new URL(String(refused.headers.location)).hash.slice(1));
    expect(error.get('error')).toBe('oidc-email-not-verified');
    expect(error.get('error_description')).toContain('bob@example.com');
  });

  it('documents both routes in /openapi.json, a valid OpenAPI 3.1 document', async () => {
    const document = json<{ paths: Record<string, { get?: { operationId?: string } }> }>(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const result = await validate(structuredClone(document) as unknown as Parameters<typeof validate>[0]);
    expect(result.valid ? 'valid' : compileErrors(result)).toBe('valid');
    expect(result.warnings).toEqual([]);
    expect(document.paths['/v1/auth/oidc/{provider}/start']?.get?.operationId).toBe('startOidcSignIn');
    expect(document.paths['/v1/auth/oidc/{provider}/callback']?.get?.operationId).toBe('finishOidcSignIn');
  });
});
