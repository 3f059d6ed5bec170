import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignInTokens, VerifiedIdentity } from '../src/auth/oidc-settings.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';
import { startGithubStandIn, type GithubStandIn } from './helpers/github-stand-in.js';

checkResponsesAgainstOpenApi();

/**
 * Sign-in with GitHub, which has OAuth 2.0 but no OpenID Connect for users: its endpoints are known,
 * the identity comes from GET /user and the verified primary address from GET /user/emails. A
 * stand-in for GitHub (at a GitHub Enterprise Server's address) plays its side on a loopback port.
 */

let github: GithubStandIn;
let t: TestApp;
const signedIn: VerifiedIdentity[] = [];
const OCTOCAT = { id: 583231, login: 'octocat', name: 'The Octocat', emails: [{ email: 'old@example.com', primary: false, verified: true }, { email: 'octocat@example.com', primary: true, verified: true }] };

beforeAll(async () => {
  github = await startGithubStandIn('gh-client', 'gh-secret', OCTOCAT);
  const signInWithIdentity = (identity: VerifiedIdentity): Promise<SignInTokens> => {
    signedIn.push(identity);
    return Promise.resolve({ accessToken: 'a', refreshToken: 'r', expiresIn: 900, user: { login: identity.subject } });
  };
  t = await startTestApp({ oidc: { providers: { github: { issuer: github.url, clientId: 'gh-client', clientSecret: 'gh-secret' } }, signInWithIdentity } });
});
afterAll(async () => {
  await t.close();
  await github.close();
});

async function signIn() {
  const start = await t.app.inject({ method: 'GET', url: '/v1/auth/oidc/github/start', headers: { authorization: '' } });
  expect(start.statusCode).toBe(302);
  const authorize = new URL(String(start.headers.location));
  const atGithub = await fetch(authorize, { redirect: 'manual' });
  const back = new URL(String(atGithub.headers.get('location')));
  const cookie = String(start.headers['set-cookie']).split(';')[0] ?? '';
  return { authorize, response: await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}`, headers: { authorization: '', cookie } }) };
}

describe('GitHub sign-in', () => {
  it('asks GitHub for the profile and the addresses, with PKCE and state, and signs in the verified primary address', async () => {
    const { authorize, response } = await signIn();
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${github.url}/login/oauth/authorize`);
    expect(authorize.searchParams.get('scope')).toBe('read:user user:email');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('nonce')).toBeNull();
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toMatchObject({ accessToken: 'a', user: { login: '583231' } });
    expect(signedIn.at(-1)).toEqual({ provider: 'github', issuer: github.url, subject: '583231', email: 'octocat@example.com', emailVerified: true, name: 'The Octocat' });
  });

  it('refuses a primary address GitHub has not verified', async () => {
    github.user = { id: 2, login: 'newcomer', name: null, emails: [{ email: 'new@example.com', primary: true, verified: false }] };
    const count = signedIn.length;
    const { response } = await signIn();
    expect(response.statusCode).toBe(403);
    expect(json<{ code: string }>(response).code).toBe('oidc-email-not-verified');
    expect(signedIn.length).toBe(count);
  });
});
