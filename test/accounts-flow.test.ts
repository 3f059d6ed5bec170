import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * The life of an account through REST (docs/accounts.md), on the suite's database: sign-up,
 * sign-in, calls under rules with @auth.sub, refresh with rotation, reuse detection, password
 * change ending other sessions, sign-out; the JWKS verifying the access token.
 */

interface Session {
  accessToken: string;
  tokenType: string;
  expiresIn: number;
  refreshToken: string;
  user: Record<string, unknown> | null;
}

let t: TestApp;
const anonymous = { authorization: '' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  t = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA) });
});
afterAll(() => t.close());

async function post(url: string, payload: unknown, headers: Record<string, string> = anonymous) {
  return t.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });
}

async function signUp(email: string, extra: Record<string, unknown> = {}) {
  return post('/v1/auth/sign-up', { email, password: PASSWORD, ...extra });
}

async function signIn(email: string, password = PASSWORD): Promise<Session> {
  const res = await post('/v1/auth/sign-in', { email, password });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  return json<Session>(res);
}

async function refresh(refreshToken: string) {
  return post('/v1/auth/refresh', { refreshToken });
}

describe('accounts', () => {
  it('sign-up makes an account; the body may set only what its user may write', async () => {
    const res = await signUp('ann@example.com', { name: 'Ann' });
    expect(res.statusCode, res.body).toBe(201);
    expect(json<{ user: Record<string, unknown> }>(res).user).toMatchObject({ email: 'ann@example.com', name: 'Ann', role: 'member' });
    // role is written by users:admin only: a sign-up cannot make itself an admin, and nothing is written.
    const refused = await signUp('eve@example.com', { role: 'admin' });
    expect(refused.statusCode).toBe(403);
    expect(json<{ errors: { pointer: string }[] }>(refused).errors[0]?.pointer).toBe('/role');
    expect((await post('/v1/auth/sign-in', { email: 'eve@example.com', password: PASSWORD })).statusCode).toBe(401);
    // The password policy: too short, too common.
    for (const password of ['short', 'password123', 'x'.repeat(1025)]) {
      const weak = await post('/v1/auth/sign-up', { email: 'weak@example.com', password });
      expect(weak.statusCode, password).toBe(422);
      expect(json<{ errors: { pointer: string }[] }>(weak).errors[0]?.pointer).toBe('/password');
    }
    // The identifier is unique.
    expect((await signUp('ann@example.com')).statusCode).toBe(409);
  });

  it('sign-in refuses an over-long password or identifier with a 422 that says which, before any lookup', async () => {
    const longPassword = await post('/v1/auth/sign-in', { email: 'ann@example.com', password: 'x'.repeat(1025) });
    expect(longPassword.statusCode).toBe(422);
    expect(json<{ detail: string }>(longPassword).detail).toBe('The password is longer than 1024 characters.');
    const longEmail = await post('/v1/auth/sign-in', { email: `${'a'.repeat(400)}@example.com`, password: PASSWORD });
    expect(longEmail.statusCode).toBe(422);
    expect(json<{ detail: string }>(longEmail).detail).toBe('email is longer than 320 characters.');
  });

  it('sign-in gives tokens; the access token acts for the record under rules naming @auth.sub', async () => {
    await signUp('bob@example.com', { name: 'Bob' });
    const ann = await signIn('ann@example.com');
    const bob = await signIn('bob@example.com');
    expect(ann).toMatchObject({ tokenType: 'Bearer', expiresIn: 900, user: { email: 'ann@example.com' } });
    const annId = ann.user?.id as number;
    // Lists show each user only themselves (list: id = @auth.sub).
    const list = await t.app.inject({ method: 'GET', url: '/users', headers: bearer(ann.accessToken) });
    expect(list.statusCode).toBe(200);
    expect(json<{ email: string }[]>(list).map((u) => u.email)).toEqual(['ann@example.com']);
    // Ann may change her own name, not Bob's.
    expect((await t.app.inject({ method: 'PATCH', url: `/users/${annId}`, headers: bearer(ann.accessToken), payload: { name: 'Ann B.' } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'PATCH', url: `/users/${bob.user?.id as number}`, headers: bearer(ann.accessToken), payload: { name: 'x' } })).statusCode).toBe(404);
    // A note gets its owner from the token's subject; Bob does not see it.
    const note = await t.app.inject({ method: 'POST', url: '/notes', headers: bearer(ann.accessToken), payload: { text: 'mine' } });
    expect(note.statusCode, note.body).toBe(201);
    expect(json<{ ownerId: number }>(note).ownerId).toBe(annId);
    expect(json<unknown[]>(await t.app.inject({ method: 'GET', url: '/notes', headers: bearer(bob.accessToken) }))).toEqual([]);
    // /v1/auth/me holds the account.
    const me = await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: bearer(ann.accessToken) });
    expect(json<{ kind: string; subject: string; account: { name: string } }>(me)).toMatchObject({ kind: 'jwt', subject: String(annId), account: { name: 'Ann B.' } });
  });

  it('the access token is an EdDSA JWT that the JWKS verifies, with the claim fields', async () => {
    const { accessToken, user } = await signIn('ann@example.com');
    const jwks = json<{ keys: { kid: string; alg: string; kty: string; d?: string }[] }>(await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json', headers: anonymous }));
    expect(jwks.keys.length).toBeGreaterThan(0);
    expect(jwks.keys.every((key) => key.d === undefined)).toBe(true); // public keys only
    const { payload, protectedHeader } = await jwtVerify(accessToken, createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]), { issuer: 'restgraph' });
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(payload).toMatchObject({ sub: String(user?.id), role: 'member' });
    expect(payload).not.toHaveProperty('orgId'); // null fields are left out
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(900);
  });

  it('refresh rotates; a used refresh token presented again ends the whole session', async () => {
    const first = await signIn('bob@example.com');
    const second = json<Session>(await refresh(first.refreshToken));
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await t.app.inject({ method: 'GET', url: '/users', headers: bearer(second.accessToken) })).statusCode).toBe(200);
    // The first token again: refused, and the session's newest token dies with it.
    const reused = await refresh(first.refreshToken);
    expect(reused.statusCode).toBe(401);
    expect(json<{ code: string }>(reused).code).toBe('invalid-credentials');
    expect((await refresh(second.refreshToken)).statusCode).toBe(401);
    // Another session of the same account is untouched.
    const other = await signIn('bob@example.com');
    expect((await refresh(other.refreshToken)).statusCode).toBe(200);
  });

  it('change-password needs the current one and ends the other sessions; sign-out ends its own', async () => {
    await signUp('cat@example.com');
    const here = await signIn('cat@example.com');
    const elsewhere = await signIn('cat@example.com');
    const wrong = await post('/v1/auth/change-password', { currentPassword: 'not it at all', newPassword: 'a new long passphrase' }, bearer(here.accessToken));
    expect(wrong.statusCode).toBe(401);
    const changed = await post('/v1/auth/change-password', { currentPassword: PASSWORD, newPassword: 'a new long passphrase' }, bearer(here.accessToken));
    expect(changed.statusCode, changed.body).toBe(204);
    expect((await refresh(elsewhere.refreshToken)).statusCode).toBe(401);
    const renewed = json<Session>(await refresh(here.refreshToken));
    expect((await post('/v1/auth/sign-in', { email: 'cat@example.com', password: PASSWORD })).statusCode).toBe(401);
    await signIn('cat@example.com', 'a new long passphrase');
    // Sign-out revokes the session's refresh token.
    expect((await post('/v1/auth/sign-out', { refreshToken: renewed.refreshToken })).statusCode).toBe(204);
    expect((await refresh(renewed.refreshToken)).statusCode).toBe(401);
  });

  it('sign-out-everywhere ends every session of the account', async () => {
    const one = await signIn('bob@example.com');
    const two = await signIn('bob@example.com');
    expect((await post('/v1/auth/sign-out-everywhere', {}, bearer(one.accessToken))).statusCode).toBe(204);
    expect((await refresh(one.refreshToken)).statusCode).toBe(401);
    expect((await refresh(two.refreshToken)).statusCode).toBe(401);
    // Only an account's token may ask.
    expect((await post('/v1/auth/sign-out-everywhere', {}, anonymous)).statusCode).toBe(401);
  });

  it('an unknown identifier and a wrong password get the same status and body', async () => {
    const unknown = await post('/v1/auth/sign-in', { email: 'nobody@example.com', password: PASSWORD });
    const wrong = await post('/v1/auth/sign-in', { email: 'ann@example.com', password: 'not the password' });
    expect(unknown.statusCode).toBe(401);
    expect(wrong.statusCode).toBe(401);
    const strip = (body: string) => ({ ...json<Record<string, unknown>>({ body }), requestId: undefined });
    expect(strip(unknown.body)).toEqual(strip(wrong.body));
    // How long each takes is measured by bench/accounts.js (docs/performance.md#accounts), not here.
  });
});
