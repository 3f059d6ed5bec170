import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { openDatabase } from '../src/store/open-database.js';
import { hashOneTimeToken, MAX_ONE_TIME_TOKEN_TTL_MS, OneTimeTokenStore } from '../src/store/one-time-token-store.js';
import type { SqlDatabase } from '../src/store/sql-database.js';
import { upgradeSystemTables } from '../src/store/system-migrations.js';
import { discardLogs, tempDir } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

/**
 * The one-time tokens of account emails (verification, password reset): single use, short-lived,
 * bound to one purpose and account, stored as a hash only. On the suite's database, through real
 * connections (two, where the test is about instances sharing the database).
 */

const MINUTE = 60_000;

let dir: ReturnType<typeof tempDir>;
let database: TestDatabase;
let opened: SqlDatabase[];

beforeEach(async () => {
  dir = tempDir('restgraph-one-time-tokens-');
  database = await createTestDatabase(dir.path, 'tokens');
  opened = [];
});

afterEach(async () => {
  for (const db of opened) await db.close();
  await database.drop();
  dir.cleanup();
});

/** A connection to the test's database with restgraph's own tables in place (as an instance has). */
async function connect(): Promise<SqlDatabase> {
  const { db } = await openDatabase(database.url);
  opened.push(db);
  await upgradeSystemTables(db);
  return db;
}

describe('one-time tokens', () => {
  it('a token is 256 random bits in base64url, and only its SHA-256 is stored', async () => {
    const store = new OneTimeTokenStore(await connect());
    const issued = await store.issue('verify-email', 42, 10 * MINUTE);
    expect(issued.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const other = await store.issue('verify-email', 42, 10 * MINUTE);
    expect(other.token).not.toBe(issued.token);

    const rows = await database.query('select * from "_restgraph_one_time_tokens" order by "id"');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ purpose: 'verify-email', accountId: '42', hash: hashOneTimeToken(issued.token), usedAt: null, expiresAt: issued.expiresAt });
    // The raw token is nowhere in the table: not in any column of any row.
    const everything = JSON.stringify(rows);
    expect(everything).not.toContain(issued.token);
    expect(everything).not.toContain(other.token);
  });

  it('a bound token names its account, is accepted with its binding only, and its binding is stored nowhere in clear', async () => {
    const store = new OneTimeTokenStore(await connect());
    const issued = await store.issue('verify-email', 42, 10 * MINUTE, 'ann@example.com');
    expect(issued.token).toMatch(/^42\.[A-Za-z0-9_-]{43}$/);
    expect(OneTimeTokenStore.accountOf(issued.token)).toBe('42');
    expect(OneTimeTokenStore.accountOf(issued.token.slice(3))).toBeUndefined();
    const everything = JSON.stringify(await database.query('select * from "_restgraph_one_time_tokens"'));
    expect(everything).not.toContain('ann@example.com');
    expect(everything).not.toContain(issued.token);
    expect(await store.consume('verify-email', issued.token, 'ann.new@example.com')).toBeUndefined();
    expect(await store.consume('verify-email', issued.token)).toBeUndefined();
    expect(await store.consume('verify-email', issued.token, 'ann@example.com')).toBe('42');
  });

  it('consumes once: the account id the first time, nothing after', async () => {
    const store = new OneTimeTokenStore(await connect());
    const { token } = await store.issue('reset-password', 'u-7', 10 * MINUTE);
    expect(await store.consume('reset-password', token)).toBe('u-7');
    expect(await store.consume('reset-password', token)).toBeUndefined();
    const [row] = await database.query<{ usedAt: string | null }>('select "usedAt" from "_restgraph_one_time_tokens"');
    expect(row?.usedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('refuses a token of another purpose, an unknown token and a malformed one', async () => {
    const store = new OneTimeTokenStore(await connect());
    const { token } = await store.issue('verify-email', 1, 10 * MINUTE);
    expect(await store.consume('reset-password', token)).toBeUndefined();
    expect(await store.consume('verify-email', 'A'.repeat(43))).toBeUndefined();
    expect(await store.consume('verify-email', `${token}x`)).toBeUndefined();
    expect(await store.consume('verify-email', "' or 1=1 --")).toBeUndefined();
    // The wrong-purpose attempt did not use it up.
    expect(await store.consume('verify-email', token)).toBe('1');
  });

  it('refuses an expired token (the clock past its expiry), and accepts it just before', async () => {
    let now = Date.parse('2026-03-01T10:00:00.000Z');
    const store = new OneTimeTokenStore(await connect(), () => now);
    const early = await store.issue('reset-password', 5, 15 * MINUTE);
    const late = await store.issue('reset-password', 5, 15 * MINUTE);
    now += 15 * MINUTE - 1;
    expect(await store.consume('reset-password', early.token)).toBe('5');
    now += 1;
    expect(await store.consume('reset-password', late.token)).toBeUndefined();
  });

  it('refuses lifetimes that are not positive or longer than the maximum', async () => {
    const store = new OneTimeTokenStore(await connect());
    await expect(store.issue('verify-email', 1, 0)).rejects.toThrow(RangeError);
    await expect(store.issue('verify-email', 1, MAX_ONE_TIME_TOKEN_TTL_MS + 1)).rejects.toThrow(RangeError);
    await expect(store.issue('verify-email', 1, MAX_ONE_TIME_TOKEN_TTL_MS)).resolves.toMatchObject({ token: expect.any(String) as string });
  });

  it('invalidate ends the unused tokens of one account and purpose, and leaves the rest', async () => {
    const store = new OneTimeTokenStore(await connect());
    const a1 = await store.issue('reset-password', 1, 10 * MINUTE);
    const a2 = await store.issue('reset-password', 1, 10 * MINUTE);
    const verify = await store.issue('verify-email', 1, 10 * MINUTE);
    const b = await store.issue('reset-password', 2, 10 * MINUTE);
    expect(await store.invalidate(1, 'reset-password')).toBe(2);
    expect(await store.consume('reset-password', a1.token)).toBeUndefined();
    expect(await store.consume('reset-password', a2.token)).toBeUndefined();
    expect(await store.consume('verify-email', verify.token)).toBe('1');
    expect(await store.consume('reset-password', b.token)).toBe('2');
  });

  it('two instances consuming one token at once: exactly one gets the account', async () => {
    const first = new OneTimeTokenStore(await connect());
    const second = new OneTimeTokenStore(await connect());
    const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => first.issue('reset-password', i, 10 * MINUTE)));
    for (const [i, { token }] of tokens.entries()) {
      const results = await Promise.all([first.consume('reset-password', token), second.consume('reset-password', token), first.consume('reset-password', token)]);
      expect(results.filter((r) => r !== undefined)).toEqual([String(i)]);
    }
  });

  it('prune deletes the rows created longer ago than the longest lifetime, and keeps the others', async () => {
    let now = Date.parse('2026-03-01T10:00:00.000Z');
    const store = new OneTimeTokenStore(await connect(), () => now);
    await store.issue('verify-email', 1, 60 * MINUTE);
    await store.issue('verify-email', 2, MAX_ONE_TIME_TOKEN_TTL_MS);
    now += 24 * 60 * MINUTE;
    const recent = await store.issue('reset-password', 3, 60 * MINUTE);
    expect(await store.prune()).toBe(0);
    now += MAX_ONE_TIME_TOKEN_TTL_MS - 24 * 60 * MINUTE + 1;
    expect(await store.prune()).toBe(2);
    const rows = await database.query<{ accountId: string }>('select "accountId" from "_restgraph_one_time_tokens"');
    expect(rows.map((r) => r.accountId)).toEqual(['3']);
    now += 24 * 60 * MINUTE;
    expect(await store.prune()).toBe(1);
    expect(await store.consume('reset-password', recent.token)).toBeUndefined();
  });

  it('a server prunes them when it starts (and hourly): the rows past the longest lifetime go, the others stay', async () => {
    const first = await buildApp({ databaseUrl: database.url, logDestination: discardLogs(), bootstrapAdminKey: false });
    await first.close();
    const store = new OneTimeTokenStore(await connect(), () => Date.now() - MAX_ONE_TIME_TOKEN_TTL_MS - 60_000);
    await store.issue('verify-email', 'old', 60 * MINUTE);
    const recent = await new OneTimeTokenStore(await connect()).issue('reset-password', 'recent', 60 * MINUTE);
    const app = await buildApp({ databaseUrl: database.url, logDestination: discardLogs(), bootstrapAdminKey: false });
    try {
      await app.ready();
      const rows = await database.query<{ accountId: string }>('select "accountId" from "_restgraph_one_time_tokens"');
      expect(rows.map((r) => r.accountId)).toEqual(['recent']);
      expect(await new OneTimeTokenStore(await connect()).consume('reset-password', recent.token)).toBe('recent');
    } finally {
      await app.close();
    }
  });
});
