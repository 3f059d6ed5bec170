import { hash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { MigrationFailedError } from '../src/errors.js';
import { SYSTEM_DATA_TABLES } from '../src/store/system-tables.js';
import { freePort, killAll, startCli, waitReady, type Running } from './helpers/cli-process.js';
import { actAsAdmin, discardLogs, json, tempDir, TEST_ADMIN_TOKEN } from './helpers/test-app.js';
import { createTestDatabase, insertApiKeyRow, type TestDatabase } from './helpers/test-database.js';
import { UNVERSIONED_SYSTEM_TABLES_DDL } from './fixtures/system-tables-unversioned.js';

/**
 * restgraph's own tables (`_restgraph_*`) are versioned by numbered migrations recorded in
 * `_restgraph_system_migrations`: a database made before they were numbered is adopted as version
 * 1 and upgraded, several instances starting together apply each migration once, and a database
 * a newer release upgraded is refused. On the suite's database (SQLite file or PostgreSQL schema).
 */

/** Every internal migration this release knows, in order. */
const EXPECTED_VERSIONS = [
  { version: 1, name: 'internal tables as first released' },
  { version: 2, name: 'idempotency claims carry a fencing token' },
  { version: 3, name: 'api keys carry claims' },
  { version: 4, name: 'one-time tokens for account emails' },
  { version: 5, name: 'end-user accounts: credentials, refresh tokens, signing keys' },
  { version: 6, name: 'account states: disabled, sessions valid after' },
];

let dir: ReturnType<typeof tempDir>;
let database: TestDatabase;
let running: FastifyInstance[] = [];
let children: Running[] = [];

beforeEach(async () => {
  dir = tempDir('restgraph-system-tables-');
  database = await createTestDatabase(dir.path, 'app');
  running = [];
  children = [];
});

afterEach(async () => {
  for (const app of running) await app.close();
  await killAll(children);
  await database.drop();
  dir.cleanup();
});

async function boot(): Promise<FastifyInstance> {
  const app = actAsAdmin(await buildApp({ databaseUrl: database.url, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN }));
  running.push(app);
  return app;
}

/** Runs a script of several statements on the test's database, as the code before versions did. */
async function execScript(script: string): Promise<void> {
  if (database.dialect === 'sqlite') {
    const db = new BetterSqlite3(database.file ?? '');
    try {
      db.exec(script);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(script);
  } finally {
    await client.end();
  }
}

const versions = (): Promise<{ version: number; name: string }[]> =>
  database.query<{ version: number; name: string }>('select "version", "name" from "_restgraph_system_migrations" order by "version"');

const everyRow = (table: string): Promise<Record<string, unknown>[]> => database.query(`select * from "${table}"`);

const count = async (table: string): Promise<number> => Number((await database.query<{ n: number | string }>(`select count(*) as "n" from "${table}"`))[0]?.n);

const API_KEY = 'rg_abcdefgh_0123456789abcdefghijklmnopqrstuv';

/** Makes the database as the release before numbered internal migrations left it, with rows in its tables. */
async function makeUnversionedDatabase(): Promise<void> {
  await execScript(UNVERSIONED_SYSTEM_TABLES_DDL[database.dialect]);
  await insertApiKeyRow(database, API_KEY, { scopes: ['users:read'] });
  const now = new Date().toISOString();
  const later = new Date(Date.now() + 86_400_000).toISOString();
  await database.run('insert into "_restgraph_events" ("type", "resource", "recordId", "data", "occurredAt") values (?, ?, ?, ?, ?)', ['user.created', 'users', 1, '{"id":1}', now]);
  await database.run(
    'insert into "_restgraph_webhooks" ("url", "events", "secret", "status", "createdAt", "updatedAt") values (?, ?, ?, ?, ?, ?)',
    ['https://example.com/hook', '["user.created"]', 'whsec_c2VjcmV0', 'enabled', now, now],
  );
  await database.run('insert into "_restgraph_state" ("key", "value") values (?, ?)', ['restgraph.test.kept', 'kept']);
  await database.run(
    'insert into "_restgraph_idempotency_keys" ("scope", "key", "fingerprint", "state", "status", "headers", "body", "createdAt", "expiresAt") values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ['admin-token', 'done-before', fingerprint('POST', '/users', { name: 'Old' }), 'completed', 201, '{"content-type":"application/json; charset=utf-8"}', '{"id":41,"name":"Old"}', now, later],
  );
}

/** An Idempotency-Key fingerprint, as the server computes it (method, path and body). */
function fingerprint(method: string, path: string, body: unknown): string {
  return hash('sha256', `${method} ${path}\n${JSON.stringify(body)}`, 'base64url');
}

describe('numbered internal migrations', () => {
  it('a new database gets every internal migration, each recorded once', async () => {
    await boot();
    expect(await versions()).toEqual(EXPECTED_VERSIONS);
  });

  it('a database made before internal migrations were numbered is adopted as version 1 and upgraded, its rows intact', async () => {
    await makeUnversionedDatabase();
    const tables = ['_restgraph_api_keys', '_restgraph_events', '_restgraph_webhooks', '_restgraph_state', '_restgraph_idempotency_keys'];
    const before = await Promise.all(tables.map((t) => everyRow(t)));
    const app = await boot();
    expect(await versions()).toEqual(EXPECTED_VERSIONS);
    const after = await Promise.all(tables.map((t) => everyRow(t)));
    before.forEach((rows, i) => {
      expect(rows.length, tables[i]).toBeGreaterThan(0);
      expect(after[i], tables[i]).toEqual(expect.arrayContaining(rows.map((row): unknown => expect.objectContaining(row))));
    });
    // Version 2 applied: idempotency claims carry a token.
    expect(await database.columns('_restgraph_idempotency_keys')).toContain('claim');
    // The old rows still work: the API key authenticates, the completed key replays its response.
    expect((await app.inject({ method: 'GET', url: '/users', headers: { authorization: `Bearer ${API_KEY}` } })).statusCode).toBe(200);
    const replay = await app.inject({ method: 'POST', url: '/users', payload: { name: 'Old' }, headers: { 'idempotency-key': 'done-before' } });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json(replay)).toEqual({ id: 41, name: 'Old' });
  });

  it('SYSTEM_DATA_TABLES (what restgraph copy carries) names every internal table but the versions, with every column', async () => {
    await boot();
    const internal = (await database.tables()).filter((name) => name.startsWith('_restgraph_') && name !== '_restgraph_system_migrations');
    expect(SYSTEM_DATA_TABLES.map((table) => table.name).sort()).toEqual(internal);
    for (const table of SYSTEM_DATA_TABLES) expect([table.name, ...(await database.columns(table.name))]).toEqual([table.name, ...table.columns]);
  });

  it('a restart finds nothing to do', async () => {
    await (await boot()).close();
    running = [];
    await boot();
    expect(await versions()).toEqual(EXPECTED_VERSIONS);
  });

  it('instances starting together on one database apply each migration once', async () => {
    await makeUnversionedDatabase();
    // Processes of their own: instances in one process would share one event loop, which is not how they run.
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const started = ports.map((port) =>
      startCli(dir.path, ['serve'], { DATABASE_URL: database.url, PORT: String(port), RESTGRAPH_ADMIN_TOKEN: TEST_ADMIN_TOKEN, LOG_LEVEL: 'warn' }, children),
    );
    await Promise.all(started.map((r, i) => waitReady(r, ports[i] ?? 0)));
    expect(await versions()).toEqual(EXPECTED_VERSIONS);
    expect(await count('_restgraph_migrations')).toBe(1);
  });

  it('a database upgraded by a newer release is refused, naming both versions, and left as it is', async () => {
    await boot();
    await database.run('insert into "_restgraph_system_migrations" ("version", "name", "appliedAt") values (?, ?, ?)', [99, 'from the future', new Date().toISOString()]);
    const error = await buildApp({ databaseUrl: database.url, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MigrationFailedError);
    expect((error as Error).message).toMatch(new RegExp(`version 99.*newer.*\\b${EXPECTED_VERSIONS.length}\\b`, 's'));
    expect((await versions()).map((v) => v.version)).toEqual([...EXPECTED_VERSIONS.map((v) => v.version), 99]);
  });
});
