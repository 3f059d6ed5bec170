import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/index.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { dataOf, graphql, onlyError } from './helpers/graphql-request.js';
import { smtpSink, type SmtpSink } from './helpers/smtp-sink.js';
import { captureLogs, json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * An email identifier is compared ignoring case (docs/accounts.md#the-schema): stored lower-cased
 * through every write path, looked up lower-cased by sign-in, the email links and OpenID Connect;
 * identifiers stored before (with upper-case letters) are reported at start-up.
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

describe('email identifiers ignore case', () => {
  it('sign-up stores the address lower-cased; the same address in another case is taken', async () => {
    const up = await post('/v1/auth/sign-up', { email: 'Ann@Example.COM', password: PASSWORD });
    expect(up.statusCode, up.body).toBe(201);
    expect(json<{ user: { email: string } }>(up).user.email).toBe('ann@example.com');
    const again = await post('/v1/auth/sign-up', { email: 'ANN@example.com', password: 'another good passphrase' });
    expect(again.statusCode, again.body).toBe(409);
  });

  it('sign-in finds the account whatever the case; failures count against one identifier', async () => {
    await post('/v1/auth/sign-up', { email: 'bea@example.com', password: PASSWORD });
    const mixed = await post('/v1/auth/sign-in', { email: 'BEA@Example.Com', password: PASSWORD });
    expect(mixed.statusCode, mixed.body).toBe(200);
    expect(json<{ user: { email: string } }>(mixed).user.email).toBe('bea@example.com');
  });

  it('failed sign-ins count against one identifier however it is written', async () => {
    const strict = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA), rateLimits: { signInFailures: '2/15m' } });
    try {
      const inject = (email: string, password: string) => strict.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: anonymous, payload: { email, password } });
      await strict.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: anonymous, payload: { email: 'hal@example.com', password: PASSWORD } });
      expect((await inject('HAL@example.com', 'wrong password one')).statusCode).toBe(401);
      expect((await inject('Hal@Example.com', 'wrong password two')).statusCode).toBe(401);
      expect((await inject('hal@example.com', PASSWORD)).statusCode).toBe(429);
    } finally {
      await strict.close();
    }
  });

  it('forgot-password and verify-email/request find the account whatever the case', async () => {
    await post('/v1/auth/sign-up', { email: 'cat@example.com', password: PASSWORD });
    await t.app.restgraph.accountEmails?.settled();
    const signUpMessages = sink.to('cat@example.com').length;
    expect((await post('/v1/auth/forgot-password', { email: 'CAT@EXAMPLE.COM' })).statusCode).toBe(202);
    expect((await post('/v1/auth/verify-email/request', { email: 'Cat@Example.com' })).statusCode).toBe(202);
    await t.app.restgraph.accountEmails?.settled();
    const subjects = sink.to('cat@example.com').slice(signUpMessages).map((m) => m.subject ?? '');
    expect(subjects).toHaveLength(2);
  });

  it('REST and GraphQL writes of the field store it lower-cased', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/users', payload: { email: 'Dan@Example.com' } });
    expect(created.statusCode, created.body).toBe(201);
    const id = json<{ id: number; email: string }>(created).id;
    expect(json<{ email: string }>(created).email).toBe('dan@example.com');
    const patched = await t.app.inject({ method: 'PATCH', url: `/users/${id}`, payload: { email: 'DAN.Two@Example.com' } });
    expect(json<{ email: string }>(patched).email).toBe('dan.two@example.com');
    const replaced = await t.app.inject({ method: 'PUT', url: `/users/${id}`, payload: { email: 'Dan.Three@Example.com' } });
    expect(json<{ email: string }>(replaced).email).toBe('dan.three@example.com');
    const viaGraphql = await graphql<{ createUser: { email: string } }>(t.app, 'mutation { createUser(input: { email: "Eve@Example.COM" }) { email } }');
    expect(dataOf(viaGraphql).createUser.email).toBe('eve@example.com');
    const signUp = await graphql(t.app, 'mutation { signUp(password: "correct horse battery staple", input: { email: "EVE@example.com" }) { email } }', { headers: anonymous });
    onlyError(signUp, 'unique-conflict');
    // Other string fields keep their case.
    const named = await t.app.inject({ method: 'PATCH', url: `/users/${id}`, payload: { name: 'Dan MIXED' } });
    expect(json<{ name: string }>(named).name).toBe('Dan MIXED');
  });

  it('start-up warns of identifiers stored with upper-case letters, and of those that clash once lower-cased', async () => {
    const { id } = json<{ id: number }>(await t.app.inject({ method: 'POST', url: '/users', payload: { email: 'fay@example.com' } }));
    await t.app.inject({ method: 'POST', url: '/users', payload: { email: 'gus@example.com' } });
    // As a release before case folding could have stored them.
    await t.db.run('update "users" set "email" = ? where "id" = ?', ['Fay@Example.com', id]);
    await t.db.run('update "users" set "email" = ? where "email" = ?', ['GUS@example.com', 'gus@example.com']);
    await t.app.inject({ method: 'POST', url: '/users', payload: { email: 'Gus@Example.com' } });
    const { logs, logDestination } = captureLogs();
    const second = await buildApp({ databaseUrl: t.db.url, schema: parseSchemaText(ACCOUNTS_SCHEMA), logDestination });
    try {
      const warning = logs.find((line) => typeof line.msg === 'string' && line.msg.includes('upper-case letters'));
      expect(warning, JSON.stringify(logs)).toMatchObject({ resource: 'users', field: 'email', notLowerCase: 2, clashes: 1 });
    } finally {
      await second.close();
    }
  });
});
