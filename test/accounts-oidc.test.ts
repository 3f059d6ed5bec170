import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { CLIENT_ID, CLIENT_SECRET, signInAtProvider, startLocalProvider, type LocalProvider } from './helpers/oidc-provider.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * OpenID Connect sign-in into the schema's accounts (no signInWithIdentity given): a verified
 * email makes an account (as a sign-up would, the provider's name in `name`), signs in to it
 * again later, and the tokens are the accounts' own.
 */

const CALLBACK = 'http://localhost/v1/auth/oidc/local/callback';
let provider: LocalProvider;
let t: TestApp;

beforeAll(async () => {
  provider = await startLocalProvider([CALLBACK]);
  t = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA), oidc: { providers: { local: { issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET } } } });
});
afterAll(async () => {
  await t.close();
  await provider.close();
});

interface Tokens {
  accessToken: string;
  user: { id: number; email: string; name: string | null };
}

async function signInWithProvider(login: string): Promise<Tokens> {
  const start = await t.app.inject({ method: 'GET', url: '/v1/auth/oidc/local/start', headers: { authorization: '' } });
  expect(start.statusCode, start.body).toBe(302);
  const cookie = String(start.headers['set-cookie']).split(';')[0] ?? '';
  const back = await signInAtProvider(String(start.headers.location), login);
  const res = await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}`, headers: { authorization: '', cookie } });
  expect(res.statusCode, res.body).toBe(200);
  return json<Tokens>(res);
}

describe('OpenID Connect into accounts', () => {
  it('links the provider\'s address to the account whatever its case; a password set before the mailbox was proved goes (pre-hijacking)', async () => {
    // Someone who does not own erin@example.com signs up with it first, unverified.
    const payload = { email: 'erin@example.com', password: 'correct horse battery staple' };
    const up = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: { authorization: '' }, payload });
    expect(up.statusCode, up.body).toBe(201);
    const early = json<{ refreshToken: string }>(await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: { authorization: '' }, payload }));
    const signedIn = await signInWithProvider('erin');
    expect(signedIn.user).toMatchObject({ id: json<{ user: { id: number } }>(up).user.id, email: 'erin@example.com' });
    // The provider proved the mailbox: the unproven password and its sessions are gone.
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: { authorization: '' }, payload })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/refresh', headers: { authorization: '' }, payload: { refreshToken: early.refreshToken } })).statusCode).toBe(401);
  });

  it('makes the account of a verified email once, then signs in to it; its tokens act for the record', async () => {
    const first = await signInWithProvider('alice');
    expect(first.user).toMatchObject({ email: 'alice@example.com', name: 'Alice Liddell' });
    const again = await signInWithProvider('alice');
    expect(again.user.id).toBe(first.user.id);
    const me = await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: { authorization: `Bearer ${again.accessToken}` } });
    expect(json<{ subject: string; account: { email: string } }>(me)).toMatchObject({ subject: String(first.user.id), account: { email: 'alice@example.com' } });
    expect(await t.app.restgraph.accounts?.isEmailVerified(first.user.id)).toBe(true);
    // No password was set: a password sign-in fails as for anyone.
    const password = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: { authorization: '' }, payload: { email: 'alice@example.com', password: 'any password at all' } });
    expect(password.statusCode).toBe(401);
  });
});
