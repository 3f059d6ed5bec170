import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { CLI_TEST_TIMEOUT_MS, itWithFolder } from './helpers/cli-process.js';
import { ROOT, run } from './helpers/cli-serve.js';
import { discardLogs } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

/**
 * `restgraph export data --with-credentials` and `restgraph import data` of such a file, through the
 * CLI, on the suite's database (docs/accounts.md): accounts move to a fresh database with their
 * password hashes (the standard `$argon2id$…` strings) and verification marks, and sign in there
 * with their old passwords; without the flag nothing of the credentials leaves; an import refuses
 * a hash that is not an Argon2id PHC string, naming the line.
 */

const it = itWithFolder('restgraph-credentials-');
const SCHEMA_FILE = join(ROOT, 'examples', 'accounts.yaml');
const SCHEMA = parseSchemaText(readFileSync(SCHEMA_FILE, 'utf8'));
const PASSWORD = 'correct horse battery staple';
const BOB_PASSWORD = 'bob has another passphrase';
const HASH = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/;

interface Line {
  resource: string;
  record: { id: number; email?: string };
  credentials?: { passwordHash: string | null; emailVerified: boolean };
}

/** An app on `url` (anonymous requests), for `work`; closed after. */
async function withApp<T>(url: string, work: (post: (path: string, payload: object, token?: string) => Promise<{ status: number; body: Record<string, unknown> }>, get: (path: string, token: string) => Promise<unknown>) => Promise<T>): Promise<T> {
  const app = await buildApp({ databaseUrl: url, schema: SCHEMA, logDestination: discardLogs(), mail: { logWhenUnconfigured: false } });
  try {
    const post = async (path: string, payload: object, token?: string) => {
      const response = await app.inject({ method: 'POST', url: path, payload, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
      return { status: response.statusCode, body: (response.body === '' ? {} : JSON.parse(response.body)) as Record<string, unknown> };
    };
    const get = async (path: string, token: string) => JSON.parse((await app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${token}` } })).body) as unknown;
    return await work(post, get);
  } finally {
    await app.close();
  }
}

/** A database with two accounts (Ann's email verified, with a note; Bob's not). */
async function seed(db: TestDatabase): Promise<void> {
  await withApp(db.url, async (post) => {
    expect((await post('/v1/auth/sign-up', { email: 'ann@example.com', password: PASSWORD, name: 'Ann' })).status).toBe(201);
    expect((await post('/v1/auth/sign-up', { email: 'bob@example.com', password: BOB_PASSWORD })).status).toBe(201);
    const ann = await post('/v1/auth/sign-in', { email: 'ann@example.com', password: PASSWORD });
    expect((await post('/notes', { text: 'Buy milk' }, String(ann.body.accessToken))).status).toBe(201);
  });
  // The verification mark, as the email link sets it (the flows are tested in accounts-email-flows).
  const app = await buildApp({ databaseUrl: db.url, schema: SCHEMA, logDestination: discardLogs(), mail: { logWhenUnconfigured: false } });
  try {
    await app.restgraph.accounts?.markEmailVerified(1);
  } finally {
    await app.close();
  }
}

const linesOf = (text: string): Line[] => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);

describe.concurrent('export data --with-credentials, import data', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('moves accounts with their passwords and verification marks; without the flag, nothing of the credentials', async ({ folder: dir }) => {
    const source = await createTestDatabase(dir.path, 'source');
    const target = await createTestDatabase(dir.path, 'target');
    const bare = await createTestDatabase(dir.path, 'bare');
    try {
      await seed(source);
      const plain = await run(dir, ['export', 'data', SCHEMA_FILE, '-d', source.url, '-o', 'plain.ndjson']);
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stderr).toBe('Exported 3 records to plain.ndjson.\n');
      const plainText = readFileSync(join(dir.path, 'plain.ndjson'), 'utf8');
      expect(plainText).not.toContain('argon2');
      expect(linesOf(plainText).every((l) => !('credentials' in l))).toBe(true);

      const full = await run(dir, ['export', 'data', SCHEMA_FILE, '-d', source.url, '-o', 'full.ndjson', '--with-credentials']);
      expect(full.code, full.stderr).toBe(0);
      expect(full.stderr).toBe('Exported 3 records to full.ndjson.\nfull.ndjson holds password hashes: keep it as safe as the database.\n');
      const lines = linesOf(readFileSync(join(dir.path, 'full.ndjson'), 'utf8'));
      expect(lines.map((l) => [l.resource, l.record.id, l.credentials?.emailVerified])).toEqual([
        ['users', 1, true],
        ['users', 2, false],
        ['notes', 1, undefined],
      ]);
      for (const l of lines.slice(0, 2)) expect(l.credentials?.passwordHash).toMatch(HASH);
      // The record is as without the flag: the credentials are beside it, never in it.
      expect(lines.map((l) => l.record)).toEqual(linesOf(plainText).map((l) => l.record));

      const imported = await run(dir, ['import', 'data', 'full.ndjson', SCHEMA_FILE, '-d', target.url]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toMatch(/^Imported 3 records \(users 2, notes 1\) into /);
      await withApp(target.url, async (post, get) => {
        const ann = await post('/v1/auth/sign-in', { email: 'ann@example.com', password: PASSWORD });
        expect(ann.status, JSON.stringify(ann.body)).toBe(200);
        const token = String(ann.body.accessToken);
        expect(await get('/v1/auth/me', token)).toMatchObject({ subject: '1', emailVerified: true });
        expect(await get('/notes', token)).toMatchObject([{ id: 1, ownerId: 1, text: 'Buy milk' }]);
        const bob = await post('/v1/auth/sign-in', { email: 'bob@example.com', password: BOB_PASSWORD });
        expect(bob.status).toBe(200);
        expect(await get('/v1/auth/me', String(bob.body.accessToken))).toMatchObject({ subject: '2', emailVerified: false });
        expect((await post('/v1/auth/sign-in', { email: 'bob@example.com', password: PASSWORD })).status).toBe(401);
      });

      // Imported without credentials, the accounts have no password: no sign-in.
      const withoutHashes = await run(dir, ['import', 'data', 'plain.ndjson', SCHEMA_FILE, '-d', bare.url]);
      expect(withoutHashes.code, withoutHashes.stderr).toBe(0);
      await withApp(bare.url, async (post) => {
        expect((await post('/v1/auth/sign-in', { email: 'ann@example.com', password: PASSWORD })).status).toBe(401);
      });
    } finally {
      await source.drop();
      await target.drop();
      await bare.drop();
    }
  });

  it('refuses credentials that are not an Argon2id PHC string, or not of an account, naming the line; nothing is imported', async ({ folder: dir }) => {
    const T = '2026-01-02T03:04:05.678Z';
    const good = '$argon2id$v=19$m=19456,t=2,p=1$0XidoUMLgx+m5SbXQUQn4w$OVDA8kos4bBb0xr7Qf/L4W/fj3bfc1SVGiPnG76FFXI';
    const user = (id: number, credentials: unknown) => JSON.stringify({ resource: 'users', record: { id, email: `u${String(id)}@example.com`, name: null, role: 'member', createdAt: T, updatedAt: T }, credentials });
    const file = [
      user(1, { passwordHash: good, emailVerified: true }),
      user(2, { passwordHash: '$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW', emailVerified: false }),
      user(3, { passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$short$hash', emailVerified: false }),
      user(4, { passwordHash: good.replace('m=19456', 'm=4194304'), emailVerified: false }),
      user(5, { passwordHash: good, emailVerified: 'yes' }),
      user(6, { passwordHash: good, salt: 'x' }),
      user(7, 'secret'),
      JSON.stringify({ resource: 'notes', record: { id: 1, ownerId: 1, text: 'x', createdAt: T, updatedAt: T }, credentials: { passwordHash: good } }),
      user(8, { passwordHash: null, emailVerified: true }),
    ].join('\n');
    writeFileSync(join(dir.path, 'bad.ndjson'), `${file}\n`);
    const db = await createTestDatabase(dir.path);
    try {
      const result = await run(dir, ['import', 'data', 'bad.ndjson', SCHEMA_FILE, '-d', db.url]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        [
          '  line 2 (users): /credentials/passwordHash: must be an Argon2id PHC string ($argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>), not a $2b$ hash',
          '  line 3 (users): /credentials/passwordHash: must be an Argon2id PHC string ($argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>); this one is malformed',
          '  line 4 (users): /credentials/passwordHash: its parameters (m=4194304, t=2, p=1) are outside what a sign-in verifies: m up to 262144 KiB, t and p from 1 to 16',
          '  line 5 (users): /credentials/emailVerified: must be true or false',
          '  line 6 (users): /credentials/salt: is not a credential (passwordHash, emailVerified)',
          '  line 7 (users): /credentials: must be {"passwordHash": "$argon2id$…" or null, "emailVerified": true or false}',
          '  line 8 (notes): /credentials: only records of the accounts resource (users) have credentials',
          'restgraph: 7 rows were rejected, so nothing was imported (--skip-invalid imports the others). [RG_IMPORT_REJECTED]',
          '',
        ].join('\n'),
      );
      expect(await db.query('select count(*) as "n" from "_restgraph_credentials"')).toEqual([{ n: 0 }]);

      const skipped = await run(dir, ['import', 'data', 'bad.ndjson', SCHEMA_FILE, '-d', db.url, '--skip-invalid']);
      expect(skipped.code, skipped.stderr).toBe(0);
      const stored = await db.query<{ recordId: number | string; passwordHash: string | null; verified: number | string }>('select "recordId", "passwordHash", case when "emailVerifiedAt" is null then 0 else 1 end as "verified" from "_restgraph_credentials" order by "recordId"');
      expect(stored.map((r) => [Number(r.recordId), r.passwordHash, Number(r.verified)])).toEqual([
        [1, good, 1],
        [8, null, 1],
      ]);
    } finally {
      await db.drop();
    }
  });
});
