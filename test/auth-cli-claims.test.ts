import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { it, must, run, type TokenJson } from './helpers/auth-cli.js';
import { CLI_TEST_TIMEOUT_MS, type CliFolder } from './helpers/cli-process.js';
import { discardLogs } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

/**
 * `restgraph token create --claims org=acme,plan=pro` (docs/auth.md#rules) as a child process, on
 * the suite's database: the claims are stored with the key, listed, refused when malformed, and a
 * server on that database reads them in a rule (`orgId = @auth.claims.org`).
 */

const SCHEMA = `resources:
  notes:
    access: { read: authenticated, write: authenticated }
    rules:
      list: "orgId = @auth.claims.org"
    fields:
      body: { type: string }
      orgId: { type: string }
`;

async function prepared(dir: CliFolder): Promise<{ database: TestDatabase; env: Record<string, string>; schemaFile: string }> {
  const database = await createTestDatabase(dir.path, 'claims');
  const schemaFile = join(dir.path, 'notes.yaml');
  writeFileSync(schemaFile, SCHEMA);
  const env = { DATABASE_URL: database.url };
  const migrated = await run(dir, ['migrate', schemaFile], env);
  expect(migrated.code, migrated.stderr).toBe(0);
  return { database, env, schemaFile };
}

describe('token create --claims', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('stores the claims, says them, lists them; a server reads them in a list rule', async ({ folder: dir }) => {
    const { database, env, schemaFile } = await prepared(dir);
    try {
      const created = await run(dir, ['token', 'create', schemaFile, '--scopes', 'notes:read', '--name', 'acme', '--claims', 'org=acme, plan=pro,orgs=a,orgs=b'], env);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toContain('with scopes notes:read, claims org=acme,plan=pro,orgs=a,orgs=b.');
      const acmeKey = must(created.stdout.trimEnd().split('\n').at(-1));
      const other = await run(dir, ['token', 'create', schemaFile, '--scopes', 'notes:read', '--name', 'globex', '--claims', 'org=globex'], env);
      const globexKey = must(other.stdout.trimEnd().split('\n').at(-1));
      const plain = await run(dir, ['token', 'create', schemaFile, '--scopes', 'notes:read', '--name', 'plain'], env);
      expect(plain.code).toBe(0);

      const [asJson, table] = await Promise.all([run(dir, ['token', 'list', schemaFile, '--json'], env), run(dir, ['token', 'list', schemaFile], env)]);
      const tokens = JSON.parse(asJson.stdout) as TokenJson[];
      expect(Object.fromEntries(tokens.map((token) => [token.name, token.claims]))).toEqual({ acme: { org: 'acme', plan: 'pro', orgs: ['a', 'b'] }, globex: { org: 'globex' }, plain: undefined });
      const lines = table.stdout.trimEnd().split('\n');
      expect(must(lines[0]).split(/\s{2,}/)).toEqual(['ID', 'NAME', 'PREFIX', 'SCOPES', 'SUBJECT', 'CLAIMS', 'STATE', 'CREATED', 'LAST USED', 'EXPIRES']);
      expect(must(lines.find((line) => line.includes(' acme '))).split(/\s+/)[5]).toBe('org=acme,plan=pro,orgs=a,orgs=b');
      expect(must(lines.find((line) => line.includes(' plain '))).split(/\s+/)[5]).toBe('-');

      // A server on that database: each key lists the notes of its own org.
      const app = await buildApp({ databaseUrl: database.url, schema: parseSchemaText(SCHEMA), logDestination: discardLogs(), adminToken: 'claims-admin-token-0123456789' });
      try {
        const admin = { authorization: 'Bearer claims-admin-token-0123456789' };
        for (const [body, orgId] of [['acme 1', 'acme'], ['globex 1', 'globex'], ['acme 2', 'acme']]) {
          expect((await app.inject({ method: 'POST', url: '/notes', headers: admin, payload: { body, orgId } })).statusCode).toBe(201);
        }
        const bodies = async (key: string): Promise<string[]> => {
          const response = await app.inject({ url: '/notes?sort=id', headers: { authorization: `Bearer ${key}` } });
          expect(response.statusCode, response.body).toBe(200);
          return (JSON.parse(response.body) as { body: string }[]).map((note) => note.body);
        };
        expect(await bodies(acmeKey)).toEqual(['acme 1', 'acme 2']);
        expect(await bodies(globexKey)).toEqual(['globex 1']);
        const me = JSON.parse((await app.inject({ url: '/v1/auth/me', headers: { authorization: `Bearer ${acmeKey}` } })).body) as { claims?: unknown };
        expect(me.claims).toEqual({ org: 'acme', plan: 'pro', orgs: ['a', 'b'] });
      } finally {
        await app.close();
      }
    } finally {
      await database.drop();
    }
  });

  it('malformed --claims exit 1 naming the pair or the claim, and create nothing', async ({ folder: dir }) => {
    const { database, env, schemaFile } = await prepared(dir);
    try {
      const cases: [string, RegExp][] = [
        ['org', /--claims takes name=value pairs .*"org" has no =/],
        ['org=acme,plan', /"plan" has no =/],
        ['=acme', /"=acme" has no name before =/],
        ['org=', /"org=" has no value after =/],
        [',', /it was given none/],
        ['org-id=x', /--claims\/org-id: is not a claim name/],
        [`org=${'x'.repeat(201)}`, /--claims\/org: must be at most 200 characters/],
      ];
      const results = await Promise.all(cases.map(([claims]) => run(dir, ['token', 'create', schemaFile, '--scopes', 'notes:read', '--claims', claims], env)));
      results.forEach((result, index) => {
        const [claims, message] = cases[index] ?? ['', /./];
        expect({ claims, code: result.code, stdout: result.stdout }).toEqual({ claims, code: 1, stdout: '' });
        expect(result.stderr).toContain('[validation-failed]');
        expect(result.stderr).toMatch(message);
      });
      const listed = await run(dir, ['token', 'list', schemaFile, '--json'], env);
      expect(JSON.parse(listed.stdout)).toEqual([]);
    } finally {
      await database.drop();
    }
  });

  it('token create --help shows --claims with an example', async ({ folder: dir }) => {
    const help = await run(dir, ['token', 'create', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--claims <pairs>');
    expect(help.stdout).toContain('--claims org=acme,plan=pro');
  });
});
