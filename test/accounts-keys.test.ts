import { decodeProtectedHeader } from 'jose';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { CLI_TEST_TIMEOUT_MS, finish, startCli, type Running } from './helpers/cli-process.js';
import { discardLogs, json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';

/**
 * The signing keys of account tokens live in the database: a second instance on it accepts the
 * first one's tokens, `restgraph keys rotate` (the CLI, as a child process) makes a new key sign
 * while tokens signed by the old one keep working, and the JWKS publishes both.
 */

const schema = parseSchemaText(ACCOUNTS_SCHEMA);
const anonymous = { authorization: '' };
let t: TestApp;
let second: FastifyInstance;
const children: Running[] = [];
const dir = tempDir('restgraph-accounts-keys-');

beforeAll(async () => {
  t = await startTestApp({ schema });
  second = await buildApp({ databaseUrl: t.db.url, schema, logDestination: discardLogs(), bootstrapAdminKey: false });
});
afterAll(async () => {
  await second.close();
  await t.close();
  dir.cleanup();
});

async function signIn(app: FastifyInstance): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: app === t.app ? anonymous : {}, payload: { email: 'kim@example.com', password: 'a long enough passphrase' } });
  expect(res.statusCode, res.body).toBe(200);
  return json<{ accessToken: string }>(res).accessToken;
}

async function usersStatus(app: FastifyInstance, token: string): Promise<number> {
  return (await app.inject({ method: 'GET', url: '/users', headers: { authorization: `Bearer ${token}` } })).statusCode;
}

describe('signing keys', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('instances share the key; keys rotate keeps old tokens valid and signs new ones with a new key', async () => {
    const up = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: anonymous, payload: { email: 'kim@example.com', password: 'a long enough passphrase' } });
    expect(up.statusCode, up.body).toBe(201);
    const before = await signIn(t.app);
    expect(await usersStatus(second, before)).toBe(200);
    const oldKid = decodeProtectedHeader(before).kid;

    const rotated = await finish(startCli(dir.path, ['keys', 'rotate', '-d', t.db.url], {}, children));
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/signed with key rg-/);

    // A new instance signs with the new key; both instances accept tokens of either key.
    const third = await buildApp({ databaseUrl: t.db.url, schema, logDestination: discardLogs(), bootstrapAdminKey: false });
    try {
      const after = await signIn(third);
      const newKid = decodeProtectedHeader(after).kid;
      expect(newKid).not.toBe(oldKid);
      expect(await usersStatus(third, before)).toBe(200);
      expect(await usersStatus(t.app, after)).toBe(200);
      const jwks = json<{ keys: { kid: string }[] }>(await third.inject({ method: 'GET', url: '/.well-known/jwks.json' }));
      expect(jwks.keys.map((key) => key.kid).sort()).toEqual([oldKid, newKid].sort());
    } finally {
      await third.close();
    }
  });

  it('a token signed by another key with an rg- kid is refused', async () => {
    const token = await signIn(t.app);
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(86)}`;
    expect(await usersStatus(t.app, forged)).toBe(401);
  });
});
