import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../src/openapi/openapi-types.js';
import { SchemaError } from '../src/errors.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA, accountsSchemaWith } from './helpers/accounts-schema.js';
import { CLI_TEST_TIMEOUT_MS, finish, startCli, type Running } from './helpers/cli-process.js';
import { dataOf, graphql } from './helpers/graphql-request.js';
import { json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';

/**
 * Accounts (docs/accounts.md): who may sign up (open, invite, closed), what `accounts:` must name
 * (checked at start), and credentials that never leave the server: not in REST, GraphQL or
 * `export data`.
 */

const anonymous = { authorization: '' };
const PASSWORD = 'correct horse battery staple';
const apps: TestApp[] = [];
const children: Running[] = [];
const dir = tempDir('restgraph-accounts-policies-');
afterAll(async () => {
  for (const app of apps) await app.close();
  dir.cleanup();
});

async function appWith(schemaText: string, options: { accessTokenSeconds?: number; rateLimits?: { signInFailures: string } } = {}): Promise<TestApp> {
  const t = await startTestApp({ schema: parseSchemaText(schemaText), ...options });
  apps.push(t);
  return t;
}

function signUp(t: TestApp, email: string, headers: Record<string, string> = anonymous) {
  return t.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers, payload: { email, password: PASSWORD } });
}

describe('sign-up policies', () => {
  it('closed: every sign-up is a 403, an admin\'s too', async () => {
    const t = await appWith(accountsSchemaWith('closed'));
    const res = await signUp(t, 'ann@example.com');
    expect(res.statusCode).toBe(403);
    expect(json<{ code: string }>(res).code).toBe('forbidden');
    expect((await signUp(t, 'ann@example.com', {})).statusCode).toBe(403);
  });

  it('invite: anonymous sign-ups are a 403; an admin creates accounts, which then sign in', async () => {
    const t = await appWith(accountsSchemaWith('invite'));
    expect((await signUp(t, 'ann@example.com')).statusCode).toBe(403);
    // The test app's own requests carry the admin token.
    expect((await signUp(t, 'ann@example.com', {})).statusCode).toBe(201);
    const signIn = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: anonymous, payload: { email: 'ann@example.com', password: PASSWORD } });
    expect(signIn.statusCode).toBe(200);
  });
});

describe('accounts: in the schema', () => {
  const problems = (text: string): string[] => {
    try {
      parseSchemaText(text);
    } catch (error) {
      if (error instanceof SchemaError) return error.problems.map((p) => `${p.path}: ${p.message}`);
      throw error;
    }
    return [];
  };
  it('names an existing resource, a unique string identifier and existing claim fields', () => {
    expect(problems(ACCOUNTS_SCHEMA)).toEqual([]);
    expect(problems(ACCOUNTS_SCHEMA.replace('resource: users', 'resource: people'))).toEqual(['accounts.resource: unknown resource "people"']);
    expect(problems(ACCOUNTS_SCHEMA.replace('identifier: email', 'identifier: name'))[0]).toContain('must be a unique string field');
    expect(problems(ACCOUNTS_SCHEMA.replace('identifier: email', 'identifier: phone'))[0]).toContain('"phone" is not a declared field of users');
    expect(problems(ACCOUNTS_SCHEMA.replace('claims: [role, orgId]', 'claims: [role, team]'))).toEqual(['accounts.claims.1: "team" is not a field of users']);
    expect(problems(ACCOUNTS_SCHEMA.replace('signUp: open', 'signUp: sometimes')).length).toBe(1);
  });
});

describe('credentials never leave the server', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('not in REST answers, GraphQL or export data', async () => {
    const t = await appWith(ACCOUNTS_SCHEMA);
    const up = await signUp(t, 'dan@example.com');
    expect(up.statusCode).toBe(201);
    const session = json<{ refreshToken: string }>(await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: anonymous, payload: { email: 'dan@example.com', password: PASSWORD } }));
    const secrets = ['$argon2', 'passwordHash', 'password', PASSWORD, session.refreshToken];
    const outputs: string[] = [up.body];
    // As admin, who sees every field.
    outputs.push((await t.app.inject({ method: 'GET', url: '/users' })).body);
    outputs.push((await t.app.inject({ method: 'GET', url: '/users/1' })).body);
    outputs.push((await t.app.inject({ method: 'GET', url: '/v1/events?after=0', headers: { accept: 'application/json' } })).body);
    const type = dataOf(await graphql<{ __type: { fields: { name: string }[] } }>(t.app, '{ __type(name: "User") { fields { name } } }'));
    expect(type.__type.fields.map((f) => f.name)).not.toContain('password');
    outputs.push(JSON.stringify(dataOf(await graphql(t.app, '{ users { id email name role orgId } }'))));
    // export data, as the CLI writes it.
    const schemaFile = join(dir.path, 'schema.yaml');
    writeFileSync(schemaFile, ACCOUNTS_SCHEMA);
    const exported = await finish(startCli(dir.path, ['export', 'data', schemaFile, '-d', t.db.url], {}, children));
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain('dan@example.com');
    outputs.push(exported.stdout);
    for (const output of outputs) for (const secret of secrets) expect(output).not.toContain(secret);
  });
});

describe('the OpenAPI document of a schema with accounts', () => {
  it('is valid OpenAPI 3.1 and describes the account endpoints and the JWKS', async () => {
    const t = await appWith(ACCOUNTS_SCHEMA);
    const document = json<OpenApiDocument>(await t.app.inject({ method: 'GET', url: '/openapi.json', headers: anonymous }));
    const result = await validate(structuredClone(document) as unknown as Parameters<typeof validate>[0]);
    expect(result.valid ? 'valid' : compileErrors(result)).toBe('valid');
    expect(result.warnings).toEqual([]);
    for (const path of ['sign-up', 'sign-in', 'refresh', 'sign-out', 'sign-out-everywhere', 'change-password']) expect(document.paths).toHaveProperty([`/v1/auth/${path}`, 'post']);
    expect(document.paths).toHaveProperty(['/.well-known/jwks.json', 'get']);
  });
});

describe('settings', () => {
  it('accessTokenSeconds sets the lifetime of access tokens (RESTGRAPH_ACCESS_TOKEN_SECONDS)', async () => {
    const t = await appWith(ACCOUNTS_SCHEMA, { accessTokenSeconds: 120 });
    expect((await signUp(t, 'fay@example.com')).statusCode).toBe(201);
    const session = json<{ accessToken: string; expiresIn: number }>(await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: anonymous, payload: { email: 'fay@example.com', password: PASSWORD } }));
    expect(session.expiresIn).toBe(120);
    const payload = JSON.parse(Buffer.from(session.accessToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iat: number; exp: number };
    expect(payload.exp - payload.iat).toBe(120);
  });
});

describe('a deleted account', () => {
  it('leaves nothing usable: its refresh tokens and its password are dead', async () => {
    const t = await appWith(ACCOUNTS_SCHEMA);
    const first = json<{ user: { id: number } }>(await signUp(t, 'gus@example.com')).user.id;
    const session = json<{ refreshToken: string }>(await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: anonymous, payload: { email: 'gus@example.com', password: PASSWORD } }));
    expect((await t.app.inject({ method: 'DELETE', url: `/users/${first}` })).statusCode).toBe(204);
    const next = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: anonymous, payload: { email: 'hal@example.com', password: 'a different passphrase' } });
    expect(next.statusCode).toBe(201);
    const refreshed = await t.app.inject({ method: 'POST', url: '/v1/auth/refresh', headers: anonymous, payload: { refreshToken: session.refreshToken } });
    expect(refreshed.statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: anonymous, payload: { email: 'gus@example.com', password: PASSWORD } })).statusCode).toBe(401);
  });
});

describe('throttling', () => {
  it('failed sign-ins per identifier: past the quota even the right password waits; unknown identifiers alike', async () => {
    const t = await appWith(ACCOUNTS_SCHEMA, { rateLimits: { signInFailures: '3/15m' } });
    expect((await signUp(t, 'ivy@example.com')).statusCode).toBe(201);
    const attempt = (email: string, password: string) => t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: anonymous, payload: { email, password } });
    for (const email of ['ivy@example.com', 'nobody@example.com']) {
      for (let i = 0; i < 3; i++) expect((await attempt(email, 'a wrong password')).statusCode).toBe(401);
      const throttled = await attempt(email, PASSWORD);
      expect(throttled.statusCode).toBe(429);
      expect(json<{ code: string }>(throttled).code).toBe('rate-limited');
      expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Another identifier is not affected.
    expect((await signUp(t, 'joe@example.com')).statusCode).toBe(201);
    expect((await attempt('joe@example.com', PASSWORD)).statusCode).toBe(200);
  });
});
