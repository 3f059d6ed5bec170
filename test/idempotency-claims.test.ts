import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { ConfigError } from '../src/errors.js';
import { openDatabase } from '../src/store/open-database.js';
import { IdempotencyStore, type ClaimResult, type IdempotencyClaim } from '../src/store/idempotency-store.js';
import { upgradeSystemTables } from '../src/store/system-migrations.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { TEST_DIALECT } from './helpers/test-database.js';

/**
 * Idempotency-Key claims are fenced: a request that runs past the claim timeout, after a retry
 * has taken its key over, commits nothing (its write rolls back) and answers 409; only the
 * request holding the claim commits, and later retries replay its response.
 */

type Row = Record<string, unknown>;

const CLAIM_TIMEOUT_MS = 300;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let t: TestApp;

/** Each test of the calling describe gets an app whose claims time out after CLAIM_TIMEOUT_MS. */
function withTestApp(): void {
  beforeEach(async () => {
    t = await startTestApp({ idempotencyClaimTimeoutMs: CLAIM_TIMEOUT_MS });
  });
  afterEach(async () => {
    await t.close();
  });
}

function expectProblem(response: LightMyRequestResponse, status: number, code: string): void {
  expect(response.statusCode, response.body).toBe(status);
  expect(json<Row>(response)).toMatchObject({ status, code });
}

/** Posts whose title is `title`, as the API lists them. */
async function postsTitled(title: string): Promise<Row[]> {
  return json<Row[]>(await t.app.inject({ method: 'GET', url: `/posts?title=${encodeURIComponent(title)}` }));
}

describe.skipIf(TEST_DIALECT !== 'postgres')('a create slower than the claim timeout (PostgreSQL: its referenced row locked)', () => {
  withTestApp();

  it('the retry that took the key over commits; the slow request rolls back and answers 409; one row exists', async () => {
    const user = json<Row>(await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Author' } }));
    // Holds the author's row: a create referencing it waits (its reference check reads it FOR SHARE).
    const lock = new pg.Client({ connectionString: t.db.url });
    await lock.connect();
    try {
      const lockPid = Number((await lock.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid);
      await lock.query('begin');
      await lock.query('select * from users where id = $1 for update', [user.id]);
      const blockedBehindLock = async (count: number): Promise<void> => {
        for (let i = 0; i < 200; i++) {
          const { rows } = await lock.query<{ n: string }>('select count(*) as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [lockPid]);
          if (Number(rows[0]?.n) >= count) return;
          await sleep(25);
        }
        throw new Error(`${count} requests never waited for the lock`);
      };
      const request = { method: 'POST' as const, url: '/posts', payload: { title: 'Slow', userId: user.id }, headers: { 'idempotency-key': 'slow-create' } };
      const first = t.app.inject(request);
      await blockedBehindLock(1);
      await sleep(CLAIM_TIMEOUT_MS + 100);
      // The first request's claim is older than the timeout: the retry takes the key over, then waits too.
      const retry = t.app.inject(request);
      await blockedBehindLock(2);
      await lock.query('commit');
      const [slow, taker] = await Promise.all([first, retry]);
      expect(taker.statusCode, taker.body).toBe(201);
      expectProblem(slow, 409, 'idempotency-key-in-use');
      const rows = await postsTitled('Slow');
      expect(rows).toHaveLength(1);
      expect(rows[0]?.id).toBe(json<Row>(taker).id);
      // Later retries replay the response of the request that held the key.
      const replay = await t.app.inject(request);
      expect(replay.statusCode).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(taker.body);
    } finally {
      await lock.end();
    }
  });
});

describe('IdempotencyStore: a claim taken over is fenced (both databases)', () => {
  withTestApp();
  const RESPONSE = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id":1}' };

  function claimed(result: ClaimResult): IdempotencyClaim {
    if (result.outcome !== 'claimed') throw new Error(`expected a claim, got ${result.outcome}`);
    return result.claim;
  }

  it('completing with a claim taken over fails inside the transaction, which rolls the change back; releasing it leaves the new claim', async () => {
    const { db } = await openDatabase(t.db.url);
    try {
      await upgradeSystemTables(db);
      const store = new IdempotencyStore(db, { ttlMs: 60_000, abandonAfterMs: CLAIM_TIMEOUT_MS });
      const slow = claimed(await store.claim('client', 'k1', 'print'));
      await sleep(CLAIM_TIMEOUT_MS + 50);
      const taker = claimed(await store.claim('client', 'k1', 'print'));
      expect(taker.token).not.toBe(slow.token);
      // The slow request's change and its completion, in one transaction.
      const written = db.transaction(async (tx) => {
        await tx.run({ sql: 'insert into "_restgraph_state" ("key", "value") values (\'slow.change\', \'made\')', parameters: [] });
        if (!(await store.complete(tx, slow, RESPONSE))) throw new Error('claim taken over');
      });
      await expect(written).rejects.toThrow('claim taken over');
      expect(await t.db.query('select * from "_restgraph_state" where "key" = \'slow.change\'')).toEqual([]);
      await store.release(slow);
      expect((await store.claim('client', 'k1', 'print')).outcome).toBe('in-flight');
      expect(await db.transaction((tx) => store.complete(tx, taker, RESPONSE))).toBe(true);
      expect(await store.claim('client', 'k1', 'print')).toEqual({ outcome: 'completed', response: RESPONSE });
    } finally {
      await db.close();
    }
  });

  it('retries taking over one abandoned key at once: exactly one gets it', async () => {
    const { db } = await openDatabase(t.db.url, { poolSize: 6 });
    try {
      await upgradeSystemTables(db);
      const store = new IdempotencyStore(db, { ttlMs: 60_000, abandonAfterMs: CLAIM_TIMEOUT_MS });
      for (let round = 0; round < 5; round++) {
        const key = `race-${round}`;
        claimed(await store.claim('client', key, 'print'));
        await sleep(CLAIM_TIMEOUT_MS + 50);
        const outcomes = await Promise.all([1, 2, 3, 4].map(() => store.claim('client', key, 'print')));
        expect(outcomes.filter((o) => o.outcome === 'claimed')).toHaveLength(1);
        expect(outcomes.filter((o) => o.outcome !== 'claimed').map((o) => o.outcome)).toEqual(['in-flight', 'in-flight', 'in-flight']);
      }
    } finally {
      await db.close();
    }
  });
});

describe('RESTGRAPH_IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS', () => {
  it('sets the claim timeout in seconds; 60 s when unset', () => {
    expect(optionsFromEnv({ RESTGRAPH_IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS: '5' }).idempotencyClaimTimeoutMs).toBe(5000);
    expect(optionsFromEnv({}).idempotencyClaimTimeoutMs).toBeUndefined();
  });

  for (const value of ['0', 'soon', '1.5', '86401']) {
    it(`${value} is refused at start-up, naming the setting`, () => {
      expect(() => optionsFromEnv({ RESTGRAPH_IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS: value })).toThrow(ConfigError);
      expect(() => optionsFromEnv({ RESTGRAPH_IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS: value })).toThrow(/RESTGRAPH_IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS/);
    });
  }
});
