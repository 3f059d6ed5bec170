import BetterSqlite3 from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { SYSTEM_MIGRATIONS } from '../src/store/system-tables.js';
import { CLI_TEST_TIMEOUT_MS, type CliFolder, itWithFolder } from './helpers/cli-process.js';
import { ADMIN_TOKEN, fetch, run, serve, writeSchema } from './helpers/cli-serve.js';
import { createDatabaseOf, createTestDatabase, ranInSqlitePass, TEST_DIALECT, type TestDatabase } from './helpers/test-database.js';
import { answer, deliveryIdOf, failing, signed, waitUntil, WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * `restgraph copy` through the CLI, as a child process: a database of the suite's kind copied into
 * one of the other kind and back (SQLite → PostgreSQL → SQLite, or the reverse in the PostgreSQL
 * pass), each table's rows the same at every step (counted and hashed), and a server on a copy
 * carrying on where the original stopped: API keys, idempotency keys, pending webhook deliveries,
 * id generators. Then the refusals: a target with rows, the same database twice, a source that
 * is missing or not restgraph's, a source of older internal tables, an unreachable target.
 */

const it = itWithFolder('restgraph-copy-');
const OTHER: 'sqlite' | 'postgres' = TEST_DIALECT === 'sqlite' ? 'postgres' : 'sqlite';

const SCHEMA = `
resources:
  authors:
    access: { read: [authors:read], write: [authors:write] }
    fields:
      name:     { type: string, required: true }
      email:    { type: string, unique: true }
      active:   { type: boolean }
      meta:     { type: json }
      joined:   { type: datetime }
      born:     { type: date }
      score:    { type: number }
      level:    { type: enum, values: [junior, senior] }
      mentorId: { type: integer, references: authors }
  books:
    access: { read: public, write: [books:write] }
    fields:
      title:    { type: string, required: true }
      authorId: { type: integer, required: true, references: authors }
      pages:    { type: integer }
`;

/** Every table a copy carries, with the columns that order its rows and the JSON columns (read as their text). */
const TABLES: { name: string; key: string[]; json?: string[]; booleans?: string[] }[] = [
  { name: '_restgraph_migrations', key: ['id'] },
  { name: '_restgraph_idempotency_keys', key: ['scope', 'key'] },
  { name: '_restgraph_api_keys', key: ['id'] },
  { name: '_restgraph_events', key: ['id'] },
  { name: '_restgraph_state', key: ['key'] },
  { name: '_restgraph_webhooks', key: ['id'] },
  { name: '_restgraph_webhook_deliveries', key: ['id'] },
  { name: '_restgraph_webhook_attempts', key: ['id'] },
  { name: '_restgraph_rate_limits', key: ['key'] },
  { name: '_restgraph_one_time_tokens', key: ['id'] },
  { name: '_restgraph_credentials', key: ['resource', 'recordId'] },
  { name: '_restgraph_refresh_tokens', key: ['id'] },
  { name: '_restgraph_signing_keys', key: ['kid'] },
  { name: '_restgraph_account_states', key: ['resource', 'recordId'] },
  { name: 'authors', key: ['id'], json: ['meta'], booleans: ['active'] },
  { name: 'books', key: ['id'] },
];

/** Each table's row count and a hash of its rows in key order (columns by name; booleans as 0/1, JSON as its text). */
async function checksums(db: TestDatabase): Promise<Record<string, string>> {
  const sums: Record<string, string> = {};
  for (const table of TABLES) {
    const columns = [...(await db.columns(table.name))].sort();
    const select = columns.map((c) => (table.json?.includes(c) ? `cast("${c}" as text) as "${c}"` : `"${c}"`)).join(', ');
    const rows = await db.query(`select ${select} from "${table.name}" order by ${table.key.map((k) => `"${k}"`).join(', ')}`);
    const normal = rows.map((row) => columns.map((c) => (table.booleans?.includes(c) && row[c] !== null ? Number(row[c]) : row[c])));
    sums[table.name] = `${rows.length} rows ${createHash('sha256').update(JSON.stringify(normal)).digest('hex').slice(0, 16)}`;
  }
  return sums;
}

const count = (sums: Record<string, string>, table: string): number => Number.parseInt(sums[table] ?? '', 10);

async function call(base: string, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function idOf(response: Response): Promise<number> {
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: number }).id;
}

const WEBHOOK_ENV = { RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1', RESTGRAPH_WEBHOOK_RETRY_SCHEDULE: '4' };

async function copy(dir: CliFolder, from: TestDatabase, to: TestDatabase, ...more: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return run(dir, ['copy', '--from', from.url, '--to', to.url, ...more], {}, 60_000);
}

describe.concurrent('restgraph copy', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it(`${TEST_DIALECT} → ${OTHER} → ${TEST_DIALECT}: the same rows at each step, and a server on the copy goes on where the original stopped`, { timeout: 180_000 }, async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    const a = await createTestDatabase(dir.path, 'a');
    const b = await createDatabaseOf(OTHER, dir.path, 'b');
    const c = await createTestDatabase(dir.path, 'c');
    const receiver = await WebhookReceiver.start();
    try {
      // The original: records of every type, an API key, an idempotent create, a webhook whose
      // first delivery failed and waits for its retry, events and the feeder's position.
      receiver.respond('/hook', failing(1, answer(500)));
      const original = await serve(dir, [schema], { DATABASE_URL: a.url, ...WEBHOOK_ENV });
      const created = await run(dir, ['token', 'create', schema, '--scopes', 'authors:read,authors:write,books:write', '--name', 'moved', '-d', a.url]);
      expect(created.code).toBe(0);
      const key = created.stdout.trim().split('\n').at(-1) ?? '';
      expect(key).toMatch(/^rg_/);
      const hook = await call(original.base, 'POST', '/v1/webhooks', ADMIN_TOKEN, { url: receiver.url('/hook'), events: ['*'] });
      expect(hook.status).toBe(201);
      const { id: webhookId, secret } = (await hook.json()) as { id: number; secret: string };
      receiver.verifyWith('/hook', secret);

      const ada = await idOf(
        await call(original.base, 'POST', '/authors', key, {
          name: 'Ada',
          email: 'ada@example.com',
          active: true,
          meta: { tags: ['math', 1], nested: { a: null }, ratio: 0.1 },
          joined: '2026-01-02T03:04:05.678Z',
          born: '1815-12-10',
          score: 9.5,
          level: 'senior',
        }),
      );
      const emile = await idOf(await call(original.base, 'POST', '/authors', key, { name: 'Émile “quoted”', active: false, mentorId: ada, meta: [1, 'two'] }));
      const gone = await idOf(await call(original.base, 'POST', '/authors', key, { name: 'Deleted' }));
      expect((await call(original.base, 'DELETE', `/authors/${gone}`, key)).status).toBe(204);
      await idOf(await call(original.base, 'POST', '/books', key, { title: 'Notes', authorId: ada, pages: 12 }));
      const idempotent = { title: 'Once', authorId: emile };
      const first = await call(original.base, 'POST', '/books', key, idempotent, { 'idempotency-key': 'copy-test-once' });
      const onceId = await idOf(first);

      // The first delivery failed (500) and is due again in 4 s; the others wait behind it.
      await receiver.waitFor((r) => r.to('/hook').some((request) => request.answered === 500), 'the first delivery attempt');
      await waitUntil(async () => {
        const deliveries = (await (await call(original.base, 'GET', `/v1/webhooks/${webhookId}/deliveries`, ADMIN_TOKEN)).json()) as { attempts: number; status: string }[];
        return deliveries.length === 6 && deliveries.some((d) => d.attempts === 1 && d.status === 'pending');
      }, 'six deliveries, the first failed once');
      original.running.child.kill('SIGTERM');
      await original.running.exited;
      const failedRequest = receiver.to('/hook')[0];
      if (failedRequest === undefined) throw new Error('no delivery attempt');
      const failedDelivery = deliveryIdOf(failedRequest);

      // Two moves, each checked table by table.
      const before = await checksums(a);
      expect(count(before, 'authors')).toBe(2);
      expect(count(before, 'books')).toBe(2);
      expect(count(before, '_restgraph_api_keys')).toBe(1);
      expect(count(before, '_restgraph_webhook_deliveries')).toBe(6);
      expect(count(before, '_restgraph_webhook_attempts')).toBe(1);
      expect(count(before, '_restgraph_events')).toBe(6);
      expect(count(before, '_restgraph_idempotency_keys')).toBe(1);
      expect(count(before, '_restgraph_state')).toBeGreaterThan(0);

      const there = await copy(dir, a, b);
      expect(there.stderr).toBe('');
      expect(there.code).toBe(0);
      expect(there.stdout).toContain('\n  authors                        2\n');
      const total = Object.values(before).reduce((sum, line) => sum + Number.parseInt(line, 10), 0);
      expect(there.stdout).toMatch(new RegExp(`\\nCopied ${total} rows \\(16 tables\\) in \\d+\\.\\d\\d s \\(\\d+ rows/s\\)\\.\\n$`));
      expect(await checksums(b)).toEqual(before);
      const back = await copy(dir, b, c);
      expect(back.code).toBe(0);
      expect(await checksums(c)).toEqual(before);

      // A target with rows is refused, and left as it was.
      const again = await copy(dir, a, c);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/already has rows in _restgraph_idempotency_keys, _restgraph_api_keys, .*, authors, books: copy fills an empty database .* \[RG_DATABASE_NOT_EMPTY\]\n$/);
      expect(await checksums(c)).toEqual(before);

      // A server on the copy of the copy: the key works, the idempotency key replays, the failed
      // delivery is made (signed with the endpoint's secret), and new rows get ids past every id
      // handed out (the deleted author's included).
      receiver.respond('/hook', answer(200));
      const moved = await serve(dir, [schema], { DATABASE_URL: c.url, ...WEBHOOK_ENV });
      const list = await call(moved.base, 'GET', '/authors', key);
      expect(list.status).toBe(200);
      expect(((await list.json()) as { name: string }[]).map((author) => author.name)).toEqual(['Ada', 'Émile “quoted”']);
      expect((await call(moved.base, 'GET', '/authors', 'rg_not_a_key_of_this_database_000000000')).status).toBe(401);
      const replay = await call(moved.base, 'POST', '/books', key, idempotent, { 'idempotency-key': 'copy-test-once' });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await idOf(replay)).toBe(onceId);
      await receiver.waitFor((r) => r.to('/hook').filter((request) => request.answered === 200).length === 6, 'the six deliveries, made from the copy');
      const made = receiver.to('/hook').filter((request) => request.answered === 200);
      expect(made.map(deliveryIdOf)[0]).toBe(failedDelivery);
      for (const request of made) expect(signed(request).type).toMatch(/^(author|book)\.(created|deleted)$/);
      expect(await idOf(await call(moved.base, 'POST', '/authors', key, { name: 'Next' }))).toBe(gone + 1);
      expect(await idOf(await call(moved.base, 'POST', '/books', key, { title: 'Next', authorId: ada }))).toBe(onceId + 1);
      moved.running.child.kill('SIGTERM');
      await moved.running.exited;

      // The same on the other kind of database, in the middle, and the generators of restgraph's
      // own tables: webhooks, API keys, the outbox and the deliveries go on past the copied ids.
      const middle = await serve(dir, [schema], { DATABASE_URL: b.url, RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
      const second = await call(middle.base, 'POST', '/v1/webhooks', ADMIN_TOKEN, { url: receiver.url('/other'), events: ['*'] });
      expect(second.status).toBe(201);
      const secondHook = (await second.json()) as { id: number; secret: string };
      expect(secondHook.id).toBe(webhookId + 1);
      receiver.verifyWith('/other', secondHook.secret);
      expect((await run(dir, ['token', 'create', schema, '--scopes', 'admin', '-d', b.url])).code).toBe(0);
      const keys = JSON.parse((await run(dir, ['token', 'list', schema, '--json', '-d', b.url])).stdout) as { id: number }[];
      expect(keys.map((k) => k.id).sort()).toEqual([1, 2]);
      expect(await idOf(await call(middle.base, 'POST', '/authors', key, { name: 'Next' }))).toBe(gone + 1);
      expect(await idOf(await call(middle.base, 'POST', '/books', key, { title: 'Next', authorId: ada }))).toBe(onceId + 1);
      await receiver.waitFor((r) => r.to('/other').filter((request) => request.answered === 200).length === 2, 'the two new events delivered to the new endpoint');
      const newer = receiver.to('/other').map((request) => ({ delivery: deliveryIdOf(request), event: signed(request).type }));
      expect(newer.map((n) => n.event)).toEqual(['author.created', 'book.created']);
      expect(Math.min(...newer.map((n) => n.delivery))).toBeGreaterThan(6);
      // Events 7 and 8 after the 6 copied.
      expect(await b.query('select "id", "type" from "_restgraph_events" where "id" > 6 order by "id"')).toEqual([
        { id: 7, type: 'author.created' },
        { id: 8, type: 'book.created' },
      ]);
    } finally {
      await receiver.close();
      await a.drop();
      await b.drop();
      await c.drop();
    }
  });
  it('a target with rows is refused; --replace replaces them in the copy\'s transaction, only on a target of the same schema', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    const other = writeSchema(dir, 'resources:\n  notes:\n    fields:\n      text: { type: string }\n', 'other.yaml');
    const a = await createTestDatabase(dir.path, 'a');
    const b = await createDatabaseOf(OTHER, dir.path, 'b');
    const c = await createDatabaseOf(OTHER, dir.path, 'c');
    try {
      for (const [db, file] of [[a, schema], [b, schema], [c, other]] as const) {
        expect((await run(dir, ['migrate', file, '-d', db.url])).code).toBe(0);
        expect((await run(dir, ['token', 'create', file, '--scopes', 'admin', '-d', db.url])).code).toBe(0);
      }
      const source = await checksums(a);
      const refused = await copy(dir, a, b);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^restgraph: The target .* already has rows in _restgraph_api_keys: copy fills an empty database \(--replace deletes them, in the copy's transaction\)\. \[RG_DATABASE_NOT_EMPTY\]\n$/);

      const replaced = await copy(dir, a, b, '--replace');
      expect(replaced.stderr).toBe('');
      expect(replaced.code).toBe(0);
      expect(await checksums(b)).toEqual(source);

      const otherSchema = await copy(dir, a, c, '--replace');
      expect(otherSchema.code).toBe(1);
      expect(otherSchema.stderr).toMatch(/has rows of another schema than the source's \(in _restgraph_api_keys\): --replace only replaces .* \[RG_DATABASE_NOT_EMPTY\]\n$/);
      expect(await c.query('select "id" from "_restgraph_api_keys"')).toHaveLength(1);
    } finally {
      await a.drop();
      await b.drop();
      await c.drop();
    }
  });

  it('refuses the same database twice, a missing source, one that is not restgraph\'s, internal tables of another release, an unreachable target', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    const a = await createTestDatabase(dir.path, 'a');
    const empty = await createDatabaseOf(OTHER, dir.path, 'empty');
    try {
      expect((await run(dir, ['migrate', schema, '-d', a.url])).code).toBe(0);
      // The same database under another spelling of its URL.
      const alias = a.file ?? a.url.replace('127.0.0.1', 'localhost');
      const same = await run(dir, ['copy', '--from', a.url, '--to', alias]);
      expect(same.stderr).toMatch(/^restgraph: Invalid configuration --to: is the database of --from \(.*\): copy into another database \[RG_CONFIG_INVALID\]\n$/);
      expect(same.code).toBe(1);

      const missing = await run(dir, ['copy', '--from', `sqlite:${join(dir.path, 'missing.db')}`, '--to', empty.url]);
      expect(missing.stderr).toMatch(/^restgraph: There is no SQLite database at .*missing\.db .* \[RG_DATABASE_NOT_FOUND\]\n$/);
      expect(existsSync(join(dir.path, 'missing.db'))).toBe(false);

      expect(await empty.tables()).toEqual([]); // (a SQLite file is made, without tables)
      const foreign = await copy(dir, empty, a);
      expect(foreign.stderr).toMatch(/^restgraph: The source .* holds no restgraph database \(no schema was ever migrated to it\): there is nothing to copy\. \[RG_DATABASE_NOT_FOUND\]\n$/);

      const unreachable = await run(dir, ['copy', '--from', a.url, '--to', 'postgres://127.0.0.1:1/nothing']);
      expect(unreachable.stderr).toMatch(/^restgraph: Invalid configuration --to: cannot reach the database postgres:\/\/127\.0\.0\.1:1\/nothing: .* \[RG_CONFIG_INVALID\]\n$/);
      expect(unreachable.code).toBe(1);

      // Internal tables of an older release (as if the latest migration had not run) and of a newer one: the source is only read.
      const latest = SYSTEM_MIGRATIONS.length;
      const before = Array.from({ length: latest - 1 }, (_, i) => ({ version: i + 1 }));
      await a.run('delete from "_restgraph_system_migrations" where "version" = ?', [latest]);
      const older = await copy(dir, a, empty);
      expect(older.stderr).toMatch(new RegExp(`has its internal tables at version ${latest - 1}, older than this release's \\(${latest}\\)\\. A copy only reads its source: .* \\[RG_SYSTEM_TABLES_VERSION\\]\n$`));
      expect(await a.query('select "version" from "_restgraph_system_migrations" order by "version"')).toEqual(before);
      await a.run('insert into "_restgraph_system_migrations" ("version", "name", "appliedAt") values (?, ?, ?), (?, ?, ?)', [latest, 'latest', 'now', latest + 1, 'from the future', 'now']);
      const newer = await copy(dir, a, empty);
      expect(newer.stderr).toMatch(new RegExp(`has its internal tables at version ${latest + 1}, newer than this release knows \\(up to ${latest}\\): .* \\[RG_SYSTEM_TABLES_VERSION\\]\n$`));
      expect(await empty.tables()).toEqual([]);

      // A target a newer release has upgraded is refused before anything is written to it.
      await a.run('delete from "_restgraph_system_migrations" where "version" = ?', [latest + 1]);
      expect((await run(dir, ['migrate', schema, '-d', empty.url])).code).toBe(0);
      await empty.run('insert into "_restgraph_system_migrations" ("version", "name", "appliedAt") values (?, ?, ?)', [latest + 1, 'from the future', 'now']);
      const newerTarget = await copy(dir, a, empty);
      expect(newerTarget.stderr).toMatch(new RegExp(`internal tables are at version ${latest + 1}, newer than this release of restgraph knows .* \\[RG_MIGRATION_FAILED\\]\n$`));
      expect(await empty.query('select "id" from "_restgraph_migrations"')).toHaveLength(1);
    } finally {
      await a.drop();
      await empty.drop();
    }
  });

  // A database of each kind, named: the same in both passes, so in the SQLite pass only.
  it.skipIf(ranInSqlitePass)('a copy that fails writes no row, the target keeps none; a bigint past 2^53 copies exactly', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    const sqlite = await createDatabaseOf('sqlite', dir.path, 'source');
    const postgres = await createDatabaseOf('postgres', dir.path);
    try {
      for (const db of [sqlite, postgres]) expect((await run(dir, ['migrate', schema, '-d', db.url])).code).toBe(0);
      // PostgreSQL's text holds no NUL character; SQLite's does.
      await sqlite.run('insert into "_restgraph_state" ("key", "value") values (?, ?), (?, ?)', ['a', 'fine', 'b', 'nul \u0000 inside']);
      const intoPostgres = await run(dir, ['copy', '--from', sqlite.url, '--to', postgres.url]);
      expect(intoPostgres.stderr).toMatch(/^restgraph: Copying _restgraph_state failed, and the copy was rolled back: the target .* holds none of its rows\. .* \[RG_COPY_FAILED\]\n$/);
      expect(intoPostgres.code).toBe(1);
      expect(await postgres.query('select "key" from "_restgraph_state"')).toEqual([]);
      expect(await postgres.query('select "id" from "_restgraph_migrations"')).toHaveLength(1);

      // A bigint beyond JavaScript's safe integers is read from PostgreSQL as its digits and lands exactly.
      await postgres.run('insert into "_restgraph_rate_limits" ("key", "used", "expiresAt") values (?, 9007199254740993, 1)', ['big']);
      await postgres.run('delete from "_restgraph_state"');
      // (In a folder that exists: a missing one is refused before anything is copied.)
      mkdirSync(join(dir.path, 'new'));
      const file = join(dir.path, 'new', 'copy.db');
      const intoSqlite = await run(dir, ['copy', '--from', postgres.url, '--to', `sqlite:${file}`]);
      expect(intoSqlite.stderr).toBe('');
      expect(intoSqlite.code).toBe(0);
      const copied = new BetterSqlite3(file, { readonly: true });
      try {
        expect(copied.prepare('select cast("used" as text) as used from "_restgraph_rate_limits" where "key" = ?').get('big')).toEqual({ used: '9007199254740993' });
      } finally {
        copied.close();
      }
    } finally {
      await sqlite.drop();
      await postgres.drop();
    }
  });
  it('a copy taken while a server writes to the source is of one moment: each record with its event, nothing in between', { timeout: 90_000 }, async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    const a = await createTestDatabase(dir.path, 'a');
    const b = await createDatabaseOf(OTHER, dir.path, 'b');
    try {
      const original = await serve(dir, [schema], { DATABASE_URL: a.url });
      let writing = true;
      let written = 0;
      // One create after another; each commits its row and its event together.
      const writer = (async () => {
        while (writing) {
          const response = await call(original.base, 'POST', '/authors', ADMIN_TOKEN, { name: `Writer ${written}` });
          expect(response.status).toBe(201);
          written++;
        }
      })();
      await waitUntil(() => written >= 20, '20 writes');
      const atStart = written;
      const during = await copy(dir, a, b);
      const writtenByThen = written;
      writing = false;
      await writer;
      expect(during.stderr).toBe('');
      expect(during.code).toBe(0);
      const authors = (await b.query('select count(*) as "n" from "authors"'))[0]?.n;
      const events = (await b.query('select count(*) as "n" from "_restgraph_events"'))[0]?.n;
      // The events table is copied before the authors: read at different moments they would differ.
      expect(Number(events)).toBe(Number(authors));
      expect(Number(authors)).toBeGreaterThanOrEqual(20);
      expect(writtenByThen).toBeGreaterThan(atStart); // (writes went on while it copied)
    } finally {
      await a.drop();
      await b.drop();
    }
  });
  it('memory stays bounded: 100 MB of rows copy in a 40 MB heap', { timeout: 120_000 }, async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    const a = await createTestDatabase(dir.path, 'a');
    const b = await createDatabaseOf(OTHER, dir.path, 'b');
    try {
      expect((await run(dir, ['migrate', schema, '-d', a.url])).code).toBe(0);
      // 50,000 authors of 2 KB each (statements both databases read).
      await a.run(
        `with recursive "n"("i") as (select 1 union all select "i" + 1 from "n" where "i" < 50000)
         insert into "authors" ("name", "createdAt", "updatedAt") select 'author ' || "i" || ' ' || ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' from "n"`,
        ['x'.repeat(2000)],
      );
      const copied = await run(dir, ['copy', '--from', a.url, '--to', b.url], { NODE_OPTIONS: '--max-old-space-size=40' }, 100_000);
      expect(copied.stderr).toBe('');
      expect(copied.stdout).toContain('\n  authors                        50000\n');
      expect((await b.query('select count(*) as "n" from "authors"'))[0]?.n).toBe(50000);
    } finally {
      await a.drop();
      await b.drop();
    }
  });
});
