import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { ConfigError } from '../src/errors.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { dataOf, graphql } from './helpers/graphql-request.js';
import { smtpSink, type SmtpSink } from './helpers/smtp-sink.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * Email verification and password reset end to end (docs/accounts.md), on the suite's database,
 * with a local SMTP sink reading the messages: sign-up sends the verification link, the link's
 * token verifies; forgot-password sends a reset link whose token sets a new password and ends the
 * sessions; the request endpoints answer alike for unknown and throttled addresses.
 */

const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'a brand new passphrase for me';
const PUBLIC_URL = 'https://api.example.com';
const anonymous = { authorization: '' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let sink: SmtpSink;
let t: TestApp;

beforeAll(async () => {
  sink = await smtpSink();
  t = await startTestApp({
    schema: parseSchemaText(ACCOUNTS_SCHEMA),
    mail: { smtpUrl: sink.url, from: 'App <no-reply@example.com>' },
    publicUrl: PUBLIC_URL,
    rateLimits: { accountEmails: '3/1h' },
  });
});
afterAll(async () => {
  await t.close();
  await sink.close();
});

function post(url: string, payload: unknown, headers: Record<string, string> = anonymous) {
  return t.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });
}

/** The messages sent to `to` so far, once every message on its way has been handed to the sink. */
async function mailTo(to: string): Promise<ParsedMail[]> {
  await t.app.restgraph.accountEmails?.settled();
  return sink.to(to);
}

/** The token in the link of the last message to `to`, after checking the link's form. */
async function lastToken(to: string, path: string): Promise<string> {
  const messages = await mailTo(to);
  const text = messages.at(-1)?.text ?? '';
  const match = new RegExp(`${PUBLIC_URL.replace(/\./g, '\\.')}/v1/auth/${path}\\?token=(\\d+\\.[A-Za-z0-9_-]{43})`).exec(text);
  expect(match, text).not.toBeNull();
  return match?.[1] ?? '';
}

async function signIn(email: string, password: string) {
  return post('/v1/auth/sign-in', { email, password });
}

describe('email verification', () => {
  it('sign-up sends a verification link; its token verifies the email once', async () => {
    const up = await post('/v1/auth/sign-up', { email: 'ann@example.com', password: PASSWORD });
    expect(up.statusCode, up.body).toBe(201);
    const messages = await mailTo('ann@example.com');
    expect(messages).toHaveLength(1);
    expect(messages[0]?.subject).toMatch(/confirm/i);
    const token = await lastToken('ann@example.com', 'verify-email');

    const session = json<{ accessToken: string }>(await signIn('ann@example.com', PASSWORD));
    const before = await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: bearer(session.accessToken) });
    expect(json<{ emailVerified: boolean }>(before).emailVerified).toBe(false);

    const verified = await post('/v1/auth/verify-email', { token });
    expect(verified.statusCode, verified.body).toBe(204);
    const after = await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: bearer(session.accessToken) });
    expect(json<{ emailVerified: boolean }>(after).emailVerified).toBe(true);

    const again = await post('/v1/auth/verify-email', { token });
    expect(again.statusCode).toBe(400);
    expect(json<{ code: string }>(again).code).toBe('invalid-link-token');
    // A verified account is sent nothing more, with the usual answer.
    const request = await post('/v1/auth/verify-email/request', { email: 'ann@example.com' });
    expect(request.statusCode).toBe(202);
    expect(await mailTo('ann@example.com')).toHaveLength(1);
  });

  it('verify-email/request sends a new link to an unverified account; a reset token does not verify', async () => {
    await post('/v1/auth/sign-up', { email: 'bob@example.com', password: PASSWORD });
    const request = await post('/v1/auth/verify-email/request', { email: 'bob@example.com' });
    expect(request.statusCode, request.body).toBe(202);
    expect(await mailTo('bob@example.com')).toHaveLength(2);
    const token = await lastToken('bob@example.com', 'verify-email');
    // A token of the other purpose is refused like an unknown one.
    expect((await post('/v1/auth/reset-password', { token, newPassword: NEW_PASSWORD })).statusCode).toBe(400);
    expect((await post('/v1/auth/verify-email', { token: 'x'.repeat(43) })).statusCode).toBe(400);
    expect((await post('/v1/auth/verify-email', { token })).statusCode).toBe(204);
  });
});

describe('password reset', () => {
  it('forgot-password sends a link; reset ends every session, the new password signs in, the token works once', async () => {
    await post('/v1/auth/sign-up', { email: 'cat@example.com', password: PASSWORD });
    const phone = json<{ refreshToken: string }>(await signIn('cat@example.com', PASSWORD));
    const laptop = json<{ refreshToken: string }>(await signIn('cat@example.com', PASSWORD));

    expect((await post('/v1/auth/forgot-password', { email: 'cat@example.com' })).statusCode).toBe(202);
    const first = await lastToken('cat@example.com', 'reset-password');
    expect((await post('/v1/auth/forgot-password', { email: 'cat@example.com' })).statusCode).toBe(202);
    const second = await lastToken('cat@example.com', 'reset-password');
    const message = (await mailTo('cat@example.com')).at(-1);
    expect(message?.text).toContain('30');

    // A refused password does not use the token up.
    const weak = await post('/v1/auth/reset-password', { token: second, newPassword: 'password' });
    expect(weak.statusCode, weak.body).toBe(422);
    const reset = await post('/v1/auth/reset-password', { token: second, newPassword: NEW_PASSWORD });
    expect(reset.statusCode, reset.body).toBe(204);

    for (const old of [phone, laptop]) {
      const refreshed = await post('/v1/auth/refresh', { refreshToken: old.refreshToken });
      expect(refreshed.statusCode).toBe(401);
    }
    expect((await signIn('cat@example.com', PASSWORD)).statusCode).toBe(401);
    expect((await signIn('cat@example.com', NEW_PASSWORD)).statusCode).toBe(200);
    // Single use, and the account's other reset links stop working with it.
    for (const token of [second, first]) {
      const again = await post('/v1/auth/reset-password', { token, newPassword: 'yet another passphrase' });
      expect(again.statusCode).toBe(400);
      expect(json<{ code: string }>(again).code).toBe('invalid-link-token');
    }
  });
});

describe('no enumeration', () => {
  it('an unknown email gets the same 202 and body, and no message', async () => {
    await post('/v1/auth/sign-up', { email: 'dan@example.com', password: PASSWORD });
    for (const url of ['/v1/auth/forgot-password', '/v1/auth/verify-email/request']) {
      const known = await post(url, { email: 'dan@example.com' });
      const unknown = await post(url, { email: 'nobody@example.com' });
      expect(unknown.statusCode).toBe(202);
      expect(known.statusCode).toBe(202);
      expect(unknown.body).toBe(known.body);
      expect(unknown.headers['content-type']).toBe(known.headers['content-type']);
    }
    expect(await mailTo('nobody@example.com')).toHaveLength(0);
    expect((await mailTo('dan@example.com')).length).toBeGreaterThan(1);
  });

  it('past the email quota, requests answer the same and send nothing', async () => {
    await post('/v1/auth/sign-up', { email: 'eve@example.com', password: PASSWORD });
    // The sign-up's email is the first of 3 an hour.
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await post('/v1/auth/forgot-password', { email: 'eve@example.com' }));
    expect(answers.map((a) => a.statusCode)).toEqual([202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(await mailTo('eve@example.com')).toHaveLength(3);
  });
});

describe('GraphQL', () => {
  it('requestEmailVerification, verifyEmail, forgotPassword and resetPassword call the same core', async () => {
    await post('/v1/auth/sign-up', { email: 'fay@example.com', password: PASSWORD });
    const requested = await graphql<{ requestEmailVerification: boolean }>(t.app, 'mutation { requestEmailVerification(email: "fay@example.com") }', { headers: anonymous });
    expect(dataOf(requested).requestEmailVerification).toBe(true);
    const verifyToken = await lastToken('fay@example.com', 'verify-email');
    const verified = await graphql<{ verifyEmail: boolean }>(t.app, 'mutation($t: String!) { verifyEmail(token: $t) }', { headers: anonymous, variables: { t: verifyToken } });
    expect(dataOf(verified).verifyEmail).toBe(true);
    const reused = await graphql(t.app, 'mutation($t: String!) { verifyEmail(token: $t) }', { headers: anonymous, variables: { t: verifyToken } });
    expect((reused.body.errors?.[0]?.extensions as { code?: string }).code).toBe('invalid-link-token');

    const unknown = await graphql<{ forgotPassword: boolean }>(t.app, 'mutation { forgotPassword(email: "nobody@example.com") }', { headers: anonymous });
    expect(dataOf(unknown).forgotPassword).toBe(true);
    await graphql(t.app, 'mutation { forgotPassword(email: "fay@example.com") }', { headers: anonymous });
    const resetToken = await lastToken('fay@example.com', 'reset-password');
    const reset = await graphql<{ resetPassword: boolean }>(t.app, 'mutation($t: String!, $p: String!) { resetPassword(token: $t, newPassword: $p) }', {
      headers: anonymous,
      variables: { t: resetToken, p: NEW_PASSWORD },
    });
    expect(dataOf(reset).resetPassword).toBe(true);
    expect((await signIn('fay@example.com', NEW_PASSWORD)).statusCode).toBe(200);
  });
});

describe('without email', () => {
  it('in production without SMTP, the request endpoints answer 503 for every address; sign-up still works', async () => {
    const off = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA), mail: { logWhenUnconfigured: false } });
    try {
      const up = await off.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: anonymous, payload: { email: 'gus@example.com', password: PASSWORD } });
      expect(up.statusCode, up.body).toBe(201);
      for (const url of ['/v1/auth/forgot-password', '/v1/auth/verify-email/request']) {
        const known = await off.app.inject({ method: 'POST', url, headers: anonymous, payload: { email: 'gus@example.com' } });
        const unknown = await off.app.inject({ method: 'POST', url, headers: anonymous, payload: { email: 'nobody@example.com' } });
        expect(known.statusCode).toBe(503);
        expect(json<{ code: string }>(known).code).toBe('email-not-configured');
        expect(json<{ detail: string }>(unknown).detail).toBe(json<{ detail: string }>(known).detail);
      }
    } finally {
      await off.close();
    }
  });

  it('a sign-up whose email cannot be delivered stands; the failure is logged', async () => {
    const broken = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA), mail: { smtpUrl: 'smtp://127.0.0.1:1', from: 'no-reply@example.com' }, publicUrl: PUBLIC_URL });
    try {
      const up = await broken.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: anonymous, payload: { email: 'hal@example.com', password: PASSWORD } });
      expect(up.statusCode, up.body).toBe(201);
      await broken.app.restgraph.accountEmails?.settled();
      expect(broken.logs.some((line) => typeof line.msg === 'string' && line.msg.includes('verify-email email failed'))).toBe(true);
    } finally {
      await broken.close();
    }
  });

  it('refuses to start sending email over SMTP without RESTGRAPH_PUBLIC_URL (links are never built from a Host header a client sends)', async () => {
    await expect(startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA), mail: { smtpUrl: 'smtp://127.0.0.1:1', from: 'no-reply@example.com' } })).rejects.toThrow(/RESTGRAPH_PUBLIC_URL/);
  });

  it('answers before the message is sent (a slow mail server tells nothing); links take the public URL, whatever the Host header', async () => {
    const slow = await smtpSink(1500);
    const app = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA), mail: { smtpUrl: slow.url, from: 'no-reply@example.com' }, publicUrl: PUBLIC_URL });
    try {
      await app.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: anonymous, payload: { email: 'ivy@example.com', password: PASSWORD } });
      const known = await app.app.inject({ method: 'POST', url: '/v1/auth/forgot-password', headers: { ...anonymous, host: 'app.test:8080' }, payload: { email: 'ivy@example.com' } });
      expect(known.statusCode).toBe(202);
      // Answered while the message was still on its way (the sink holds each for 1.5 s): had the
      // answer waited for the sending, the message would be in the sink by now.
      expect(slow.messages.filter((m) => m.subject !== undefined && /password/i.test(m.subject))).toEqual([]);
      await app.app.restgraph.accountEmails?.settled();
      const reset = slow.messages.find((m) => m.subject !== undefined && /password/i.test(m.subject));
      expect(reset?.text).toContain(`${PUBLIC_URL}/v1/auth/reset-password?token=`);
      expect(reset?.text).not.toContain('app.test');
    } finally {
      await app.close();
      await slow.close();
    }
  });
});

describe('RESTGRAPH_PUBLIC_URL', () => {
  it('takes an http(s) URL (a path for an API behind a proxy); anything else stops start-up naming the setting', () => {
    expect(optionsFromEnv({ RESTGRAPH_PUBLIC_URL: 'https://api.example.com/' }).publicUrl).toBe('https://api.example.com/');
    expect(optionsFromEnv({ RESTGRAPH_PUBLIC_URL: 'https://example.com/api' }).publicUrl).toBe('https://example.com/api');
    for (const bad of ['ftp://api.example.com', 'https://api.example.com/?x=1', 'api.example.com']) {
      expect(() => optionsFromEnv({ RESTGRAPH_PUBLIC_URL: bad }), bad).toThrow(ConfigError);
      expect(() => optionsFromEnv({ RESTGRAPH_PUBLIC_URL: bad }), bad).toThrow(/RESTGRAPH_PUBLIC_URL/);
    }
  });
});
