import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, SchemaError } from '../src/errors.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { graphql } from './helpers/graphql-request.js';
import { lastLinkToken, smtpSink, type SmtpSink } from './helpers/smtp-sink.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

checkResponsesAgainstOpenApi();

/**
 * `accounts.emailVerification: required` (docs/accounts.md#sign-up-without-enumeration): sign-up
 * answers the same 202 for a new and a taken identifier, and the rest goes by email (a verification
 * link to the new account, a note with a reset link to the owner of the taken address); sign-in
 * waits for a verified email, and says so only after the right password.
 */

const PASSWORD = 'correct horse battery staple';
const anonymous = { authorization: '' };
const REQUIRED_SCHEMA = ACCOUNTS_SCHEMA.replace('signUp: open,', 'signUp: open, emailVerification: required,');

let sink: SmtpSink;
let t: TestApp;

beforeAll(async () => {
  sink = await smtpSink();
  t = await startTestApp({ schema: parseSchemaText(REQUIRED_SCHEMA), mail: { smtpUrl: sink.url, from: 'App <no-reply@example.com>' }, publicUrl: 'https://api.example.com' });
});
afterAll(async () => {
  await t.close();
  await sink.close();
});

function post(url: string, payload: Record<string, unknown>, headers: Record<string, string> = anonymous) {
  return t.app.inject({ method: 'POST', url, headers, payload });
}

async function mailTo(address: string) {
  await t.app.restgraph.accountEmails?.settled();
  return sink.to(address);
}

describe('emailVerification: required', () => {
  it('sign-up answers the same 202 for a new and a taken identifier; the new account gets its link, the owner a note', async () => {
    const fresh = await post('/v1/auth/sign-up', { email: 'ann@example.com', password: PASSWORD });
    const taken = await post('/v1/auth/sign-up', { email: 'Ann@Example.com', password: 'another good passphrase' });
    expect(fresh.statusCode, fresh.body).toBe(202);
    expect(taken.statusCode, taken.body).toBe(202);
    expect(taken.body).toBe(fresh.body);
    expect(Object.keys(json<object>(fresh))).toEqual(['status', 'detail']);
    expect(json<{ status: string }>(fresh).status).toBe('accepted');
    expect(taken.headers['cache-control']).toBe(fresh.headers['cache-control']);

    const messages = await mailTo('ann@example.com');
    expect(messages.map((m) => m.subject)).toEqual([expect.stringMatching(/confirm/i), expect.stringMatching(/tried to sign up/i)]);
    expect(messages[1]?.text).toMatch(/already has an account/);
    // The note carries a reset link: the owner's way in if it was them.
    const reset = lastLinkToken(messages, 'reset-password');
    expect(reset).toBeDefined();
    // The attempt changed nothing: the first password stands.
    const verify = lastLinkToken(messages.slice(0, 1), 'verify-email');
    expect((await post('/v1/auth/verify-email', { token: verify ?? '' })).statusCode).toBe(204);
    expect((await post('/v1/auth/sign-in', { email: 'ann@example.com', password: 'another good passphrase' })).statusCode).toBe(401);
    expect((await post('/v1/auth/sign-in', { email: 'ann@example.com', password: PASSWORD })).statusCode).toBe(200);
    expect((await post('/v1/auth/reset-password', { token: reset ?? '', newPassword: 'a third good passphrase' })).statusCode).toBe(204);
  });

  it('sign-in of an unverified account: 403 email-not-verified after the right password only; verified, it signs in', async () => {
    await post('/v1/auth/sign-up', { email: 'bob@example.com', password: PASSWORD });
    const wrong = await post('/v1/auth/sign-in', { email: 'bob@example.com', password: 'not his password' });
    expect(wrong.statusCode).toBe(401);
    expect(json<{ code: string }>(wrong).code).toBe('invalid-credentials');
    const right = await post('/v1/auth/sign-in', { email: 'bob@example.com', password: PASSWORD });
    expect(right.statusCode, right.body).toBe(403);
    expect(json<{ code: string }>(right).code).toBe('email-not-verified');
    const token = lastLinkToken(await mailTo('bob@example.com'), 'verify-email');
    expect((await post('/v1/auth/verify-email', { token: token ?? '' })).statusCode).toBe(204);
    expect((await post('/v1/auth/sign-in', { email: 'bob@example.com', password: PASSWORD })).statusCode).toBe(200);
  });

  it('a body the new user may not write is refused alike for a new and a taken identifier', async () => {
    await post('/v1/auth/sign-up', { email: 'cy@example.com', password: PASSWORD });
    const fresh = await post('/v1/auth/sign-up', { email: 'dee@example.com', password: PASSWORD, role: 'admin' });
    const taken = await post('/v1/auth/sign-up', { email: 'cy@example.com', password: PASSWORD, role: 'admin' });
    expect(fresh.statusCode).toBe(403);
    expect(taken.statusCode).toBe(403);
    expect(json<{ detail: string }>(taken).detail).toBe(json<{ detail: string }>(fresh).detail);
    // Refused, nothing was sent to the owner.
    expect((await mailTo('cy@example.com')).map((m) => m.subject)).toEqual([expect.stringMatching(/confirm/i)]);
  });

  it('an admin still gets 201 and 409', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-up', payload: { email: 'eve@example.com', password: PASSWORD } });
    expect(created.statusCode, created.body).toBe(201);
    const again = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-up', payload: { email: 'eve@example.com', password: PASSWORD } });
    expect(again.statusCode).toBe(409);
  });

  it('GraphQL signUp answers null for a new and a taken identifier; signIn says email-not-verified', async () => {
    const mutation = (email: string) => `mutation { signUp(password: "correct horse battery staple", input: { email: "${email}" }) { id email } }`;
    const fresh = await graphql(t.app, mutation('fay@example.com'), { headers: anonymous });
    const taken = await graphql(t.app, mutation('fay@example.com'), { headers: anonymous });
    expect(fresh.body).toEqual({ data: { signUp: null } });
    expect(taken.body).toEqual(fresh.body);
    const signIn = await graphql(t.app, `mutation { signIn(email: "fay@example.com", password: "${PASSWORD}") { accessToken } }`, { headers: anonymous });
    expect(signIn.body.errors?.[0]?.extensions.code).toBe('email-not-verified');
    expect((await mailTo('fay@example.com')).map((m) => m.subject)).toEqual([expect.stringMatching(/confirm/i), expect.stringMatching(/tried to sign up/i)]);
  });
});

describe('settings', () => {
  it('required needs an email identifier', () => {
    const schema = REQUIRED_SCHEMA.replace('email: { type: string, format: email, required: true, unique: true }', 'email: { type: string, required: true, unique: true }');
    expect(() => parseSchemaText(schema)).toThrow(SchemaError);
    expect(() => parseSchemaText(schema)).toThrow(/emailVerification/);
  });

  it('required needs a way to send email: production without SMTP does not start', async () => {
    await expect(startTestApp({ schema: parseSchemaText(REQUIRED_SCHEMA), mail: { logWhenUnconfigured: false } })).rejects.toThrow(ConfigError);
  });
});
