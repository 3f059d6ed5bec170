import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { lastLinkToken, smtpSink, type SmtpSink } from './helpers/smtp-sink.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * The token of an email link is bound to the address it was sent to (docs/accounts.md): once the
 * account's address has changed, a link sent to the old one is refused like any invalid link.
 */

const PASSWORD = 'correct horse battery staple';
const anonymous = { authorization: '' };

let sink: SmtpSink;
let t: TestApp;

beforeAll(async () => {
  sink = await smtpSink();
  t = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA), mail: { smtpUrl: sink.url, from: 'App <no-reply@example.com>' }, publicUrl: 'https://api.example.com' });
});
afterAll(async () => {
  await t.close();
  await sink.close();
});

function post(url: string, payload: Record<string, unknown>, headers: Record<string, string> = anonymous) {
  return t.app.inject({ method: 'POST', url, headers, payload });
}

async function tokenSentTo(address: string, path: string): Promise<string> {
  await t.app.restgraph.accountEmails?.settled();
  const token = lastLinkToken(sink.to(address), path);
  expect(token, `a ${path} link to ${address}`).toBeDefined();
  return token ?? '';
}

describe('links are bound to the address they were sent to', () => {
  it('a verification link sent before the account changed its email is refused, and verifies nothing', async () => {
    const up = json<{ user: { id: number } }>(await post('/v1/auth/sign-up', { email: 'ann@example.com', password: PASSWORD }));
    const token = await tokenSentTo('ann@example.com', 'verify-email');
    const session = json<{ accessToken: string }>(await post('/v1/auth/sign-in', { email: 'ann@example.com', password: PASSWORD }));
    const bearer = { authorization: `Bearer ${session.accessToken}` };
    const moved = await t.app.inject({ method: 'PATCH', url: `/users/${up.user.id}`, headers: bearer, payload: { email: 'someone.else@example.com' } });
    expect(moved.statusCode, moved.body).toBe(200);

    const refused = await post('/v1/auth/verify-email', { token });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(json<{ code: string }>(refused).code).toBe('invalid-link-token');
    const me = json<{ emailVerified: boolean }>(await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: bearer }));
    expect(me.emailVerified).toBe(false);

    // A link sent to the new address works.
    await post('/v1/auth/verify-email/request', { email: 'someone.else@example.com' });
    const fresh = await tokenSentTo('someone.else@example.com', 'verify-email');
    expect((await post('/v1/auth/verify-email', { token: fresh })).statusCode).toBe(204);
  });

  it('a verified account that changes its email is not verified any more (verification holds for the address verified)', async () => {
    const up = json<{ user: { id: number } }>(await post('/v1/auth/sign-up', { email: 'cat@example.com', password: PASSWORD }));
    expect((await post('/v1/auth/verify-email', { token: await tokenSentTo('cat@example.com', 'verify-email') })).statusCode).toBe(204);
    const session = json<{ accessToken: string }>(await post('/v1/auth/sign-in', { email: 'cat@example.com', password: PASSWORD }));
    const bearer = { authorization: `Bearer ${session.accessToken}` };
    const me = async () => json<{ emailVerified: boolean }>(await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: bearer })).emailVerified;
    expect(await me()).toBe(true);
    const moved = await t.app.inject({ method: 'PATCH', url: `/users/${up.user.id}`, headers: bearer, payload: { email: 'boss@example.com' } });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(await me()).toBe(false);
    // Back to the address it verified: verified again (nothing else proved anything since).
    await t.app.inject({ method: 'PATCH', url: `/users/${up.user.id}`, headers: bearer, payload: { email: 'cat@example.com' } });
    expect(await me()).toBe(true);
  });

  it('a reset link sent to an address the account has left is refused', async () => {
    const up = json<{ user: { id: number } }>(await post('/v1/auth/sign-up', { email: 'bob@example.com', password: PASSWORD }));
    await post('/v1/auth/forgot-password', { email: 'bob@example.com' });
    const token = await tokenSentTo('bob@example.com', 'reset-password');
    await t.app.inject({ method: 'PATCH', url: `/users/${up.user.id}`, payload: { email: 'bob.new@example.com' } });
    const refused = await post('/v1/auth/reset-password', { token, newPassword: 'a brand new passphrase' });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(json<{ code: string }>(refused).code).toBe('invalid-link-token');
    expect((await post('/v1/auth/sign-in', { email: 'bob.new@example.com', password: PASSWORD })).statusCode).toBe(200);
  });

  it('a token given another account id is refused', async () => {
    const up = json<{ user: { id: number } }>(await post('/v1/auth/sign-up', { email: 'cy@example.com', password: PASSWORD }));
    await json(await post('/v1/auth/sign-up', { email: 'dee@example.com', password: PASSWORD }));
    const token = await tokenSentTo('cy@example.com', 'verify-email');
    expect(token.startsWith(`${up.user.id}.`)).toBe(true);
    const forged = `${up.user.id + 1}${token.slice(String(up.user.id).length)}`;
    const refused = await post('/v1/auth/verify-email', { token: forged });
    expect(json<{ code: string }>(refused).code).toBe('invalid-link-token');
    expect((await post('/v1/auth/verify-email', { token })).statusCode).toBe(204);
  });
});
