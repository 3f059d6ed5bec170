import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import type { RestgraphOptions } from '../src/app/app-options.js';
import { DestructiveMigrationError, MigrationFailedError } from '../src/errors.js';
import { EXAMPLE_SCHEMA_PATH, loadSchemaFile, parseSchemaText } from '../src/schema/load-schema.js';
import { applyMigration, lastAppliedDefinition, planMigration } from '../src/store/migrate.js';
import { openDatabase } from '../src/store/open-database.js';
import { finish, startProcess } from './helpers/cli-process.js';
import { actAsAdmin, discardLogs, json, startTestApp, tempDir, TEST_ADMIN_TOKEN } from './helpers/test-app.js';
import { createTestDatabase, onlyOnSqlite, type TestDatabase } from './helpers/test-database.js';

/**
 * Start-up migrations: additive changes apply by themselves and keep data; destructive ones refuse
 * to start (DestructiveMigrationError naming them) until allowed; every applied migration is
 * recorded in _restgraph_migrations. On the suite's database (SQLite file or PostgreSQL schema), inspected directly.
 */

const BASE = `
resources:
  users:
    fields:
      name:  { type: string, required: true }
      email: { type: string }
      age:   { type: integer }
      code:  { type: string }
      role:  { type: enum, values: [admin, member, guest] }
  teams:
    fields:
      title: { type: string }
`;

interface MigrationRow {
  id: number;
  appliedAt: string;
  schema: string;
  changes: string;
}

let dir: ReturnType<typeof tempDir>;
let database: TestDatabase;
/** DATABASE_URL of the test's database (a test of SQLite paths may point it elsewhere). */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
let databaseUrl: string;
let running: FastifyInstance[] = [];

beforeEach(async () => {
  dir = tempDir('restgraph-migrate-');
  database = await createTestDatabase(dir.path, 'app');
  databaseUrl = database.url;
  running = [];
});

afterEach(async () => {
  for (const app of running) await app.close();
  await database.drop();
  dir.cleanup();
});

/** Writes `text` to a schema file in the test's folder and returns its path. */
function schemaFile(text: string, name = 'schema.yaml'): string {
  const file = join(dir.path, name);
  writeFileSync(file, text);
  return file;
}

/** Builds the app on the test's database file (the same file every time: a "restart"). */
async function boot(schema: RestgraphOptions['schema'], options: RestgraphOptions = {}): Promise<FastifyInstance> {
  const app = actAsAdmin(await buildApp({ schema, databaseUrl, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN, ...options }));
  running.push(app);
  return app;
}

async function stop(app: FastifyInstance): Promise<void> {
  running = running.filter((a) => a !== app);
  await app.close();
}

/** The error `promise` rejects with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const migrations = (db = database): Promise<MigrationRow[]> => db.query<MigrationRow>('select * from "_restgraph_migrations" order by "id"');
const tables = (db = database): Promise<string[]> => db.tables();
const columns = (table: string, db = database): Promise<string[]> => db.columns(table);
const rows = (table: string): Promise<Record<string, unknown>[]> => database.query(`select * from "${table}" order by "id"`);

async function create(app: FastifyInstance, resource: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await app.inject({ method: 'POST', url: `/${resource}`, payload: body });
  expect(response.statusCode, response.body).toBe(201);
  return json<Record<string, unknown>>(response);
}

async function get(app: FastifyInstance, url: string): Promise<{ status: number; body: unknown }> {
  const response = await app.inject({ method: 'GET', url });
  return { status: response.statusCode, body: response.body === '' ? undefined : json(response) };
}

/** Boots BASE and stores three users and a team. */
async function seedBase(): Promise<void> {
  const app = await boot(schemaFile(BASE));
  await create(app, 'users', { name: 'Ann', email: 'ann@example.com', age: 30, code: 'A1', role: 'admin' });
  await create(app, 'users', { name: 'Ben', email: 'ben@example.com', age: 40, code: 'B2', role: 'guest' });
  await create(app, 'users', { name: 'Cy', email: 'ann@example.com', age: 50, code: '33', role: 'member' });
  await create(app, 'teams', { title: 'Core' });
  await stop(app);
}

describe('a fresh database', () => {
  it('gets every table, column and index of the example schema, and one migration record', async () => {
    const app = await boot(EXAMPLE_SCHEMA_PATH);
    expect(await tables()).toEqual(['_restgraph_account_states', '_restgraph_api_keys', '_restgraph_credentials', '_restgraph_events', '_restgraph_idempotency_keys', '_restgraph_migrations', '_restgraph_one_time_tokens', '_restgraph_rate_limits', '_restgraph_refresh_tokens', '_restgraph_signing_keys', '_restgraph_state', '_restgraph_system_migrations', '_restgraph_webhook_attempts', '_restgraph_webhook_deliveries', '_restgraph_webhooks', 'orders', 'posts', 'products', 'users']);
    expect(await columns('users')).toEqual(['id', 'name', 'email', 'bio', 'createdAt', 'updatedAt']);
    expect(await columns('posts')).toEqual(['id', 'title', 'body', 'userId', 'published', 'publishedAt', 'tags', 'createdAt', 'updatedAt']);
    expect(await columns('orders')).toEqual(['id', 'userId', 'productId', 'quantity', 'status', 'placedOn', 'note', 'createdAt', 'updatedAt']);
    expect(await database.indexes('users')).toEqual(['rg_ix_users_name', 'rg_uq_users_email']);
    const records = await migrations();
    expect(records).toHaveLength(1);
    expect(JSON.parse(records[0]?.changes ?? '')).toEqual(['create resource users', 'create resource posts', 'create resource products', 'create resource orders']);
    expect(JSON.parse(records[0]?.schema ?? '')).toEqual(loadSchemaFile(EXAMPLE_SCHEMA_PATH).definition);
    expect(new Date(records[0]?.appliedAt ?? '').toISOString()).toBe(records[0]?.appliedAt);
    expect((await get(app, '/readyz')).status).toBe(200);
  });

  it('works from a model built by parseSchemaText, via startTestApp', async () => {
    const t = await startTestApp({ schema: parseSchemaText('resources:\n  notes:\n    fields:\n      text: { type: string }\n') });
    try {
      expect(await tables(t.db)).toEqual(['_restgraph_account_states', '_restgraph_api_keys', '_restgraph_credentials', '_restgraph_events', '_restgraph_idempotency_keys', '_restgraph_migrations', '_restgraph_one_time_tokens', '_restgraph_rate_limits', '_restgraph_refresh_tokens', '_restgraph_signing_keys', '_restgraph_state', '_restgraph_system_migrations', '_restgraph_webhook_attempts', '_restgraph_webhook_deliveries', '_restgraph_webhooks', 'notes']);
      expect(await columns('notes', t.db)).toEqual(['id', 'text', 'createdAt', 'updatedAt']);
      expect(await migrations(t.db)).toHaveLength(1);
    } finally {
      await t.close();
    }
  });

  it('leaves no promise tracking on once migrated (the schema-change lock is not held past it)', async () => {
    // Node tracks every promise while an AsyncLocalStorage is enabled: a few per cent of a busy
    // server's CPU, for a lock taken at start-up (docs/performance.md). Untracked, the ids are 0.
    // In a process of its own: another test of this worker may have turned tracking on.
    const script = `
      import { executionAsyncId } from 'node:async_hooks';
      import { buildApp } from './dist/app/build-app.js';
      const trackedId = async () => { await null; return executionAsyncId(); };
      const before = await trackedId();
      const app = await buildApp({ databaseUrl: process.env.DATABASE_URL, logLevel: 'silent', adminToken: process.env.ADMIN_TOKEN });
      await app.ready();
      const after = await trackedId();
      await app.close();
      console.log(JSON.stringify({ before, after }));`;
    const child = await finish(startProcess(process.execPath, ['--input-type=module', '-e', script], ROOT, { DATABASE_URL: databaseUrl, ADMIN_TOKEN: TEST_ADMIN_TOKEN }, []));
    expect(child.code, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '')).toEqual({ before: 0, after: 0 });
  });

  it.skipIf(onlyOnSqlite)('is in WAL mode (SQLite)', async () => {
    await boot(EXAMPLE_SCHEMA_PATH);
    expect(await database.query<{ journal_mode: string }>('pragma journal_mode')).toEqual([{ journal_mode: 'wal' }]);
  });

  it.skipIf(onlyOnSqlite)('refuses a database path in folders that do not exist (SQLite): a mistyped path creates nothing', async () => {
    databaseUrl = `sqlite:${join(dir.path, 'nested', 'deeper', 'app.db')}`;
    await expect(boot(EXAMPLE_SCHEMA_PATH)).rejects.toThrow(`the folder ${join(dir.path, 'nested', 'deeper')} does not exist`);
    expect(existsSync(join(dir.path, 'nested'))).toBe(false);
  });
});

describe('restarting', () => {
  it('with the same schema makes no new migration record and keeps the data', async () => {
    await seedBase();
    const firstRecords = await migrations();
    expect(firstRecords).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      const app = await boot(schemaFile(BASE));
      expect((await get(app, '/users/1')).body).toMatchObject({ id: 1, name: 'Ann', age: 30 });
      await stop(app);
    }
    expect(await migrations()).toEqual(firstRecords);
  });

  it('with the same schema as a model from parseSchemaText makes no new record either', async () => {
    await seedBase();
    await boot(parseSchemaText(BASE));
    expect(await migrations()).toHaveLength(1);
  });
});

describe('additive changes apply automatically', () => {
  it('adding a resource and a field keeps existing rows and records the changes', async () => {
    await seedBase();
    const v2 = BASE.replace('      role:', '      bio:   { type: string, maxLength: 500 }\n      role:') + `  projects:
    fields:
      name:   { type: string, required: true }
      teamId: { type: integer, references: teams, index: true }
`;
    const app = await boot(schemaFile(v2));
    expect(await columns('users')).toEqual(['id', 'name', 'email', 'age', 'code', 'role', 'createdAt', 'updatedAt', 'bio']);
    expect(await tables()).toContain('projects');
    const records = await migrations();
    expect(records).toHaveLength(2);
    expect(JSON.parse(records[1]?.changes ?? '')).toEqual(['add field users.bio', 'create resource projects']);
    expect(JSON.parse(records[1]?.schema ?? '')).toEqual(parseSchemaText(v2).definition);

    const ann = await get(app, '/users/1');
    expect(ann.status).toBe(200);
    expect(ann.body).toMatchObject({ id: 1, name: 'Ann', email: 'ann@example.com', age: 30, code: 'A1', role: 'admin', bio: null });
    expect(json<unknown[]>(await app.inject({ method: 'GET', url: '/users' }))).toHaveLength(3);
    expect((await get(app, '/teams/1')).body).toMatchObject({ title: 'Core' });

    const patched = await app.inject({ method: 'PATCH', url: '/users/1', payload: { bio: 'hello' } });
    expect(patched.statusCode).toBe(200);
    expect(json(patched)).toMatchObject({ id: 1, name: 'Ann', bio: 'hello' });
    expect(await create(app, 'projects', { name: 'Apollo', teamId: 1 })).toMatchObject({ id: 1, name: 'Apollo', teamId: 1 });
    expect((await get(app, '/v1/projects/1')).status).toBe(200);
  });

  it('adding fields with defaults fills existing rows with the default', async () => {
    await seedBase();
    const v2 = BASE.replace(
      '      role:',
      [
        '      active: { type: boolean, default: true }',
        '      hidden: { type: boolean, default: false }',
        '      score:  { type: integer, default: 10 }',
        '      ratio:  { type: number, default: 0.5 }',
        "      motto:  { type: string, default: \"it's fine\" }",
        '      tier:   { type: enum, values: [gold, basic], default: basic }',
        '      prefs:  { type: json, default: { theme: dark, sizes: [1, 2] } }',
        '      role:',
      ].join('\n'),
    );
    const app = await boot(schemaFile(v2));
    const users = json<Record<string, unknown>[]>(await app.inject({ method: 'GET', url: '/users?sort=id' }));
    expect(users).toHaveLength(3);
    for (const user of users) {
      expect(user).toMatchObject({ active: true, hidden: false, score: 10, ratio: 0.5, motto: "it's fine", tier: 'basic', prefs: { theme: 'dark', sizes: [1, 2] } });
    }
    expect(users.map((u) => u.name)).toEqual(['Ann', 'Ben', 'Cy']);
    // A row created afterwards gets the defaults too, and an explicit value wins.
    expect(await create(app, 'users', { name: 'Dee', score: 3 })).toMatchObject({ score: 3, active: true, tier: 'basic' });
  });

  it('a new required field without default applies, with a warning in the plan', async () => {
    await seedBase();
    const v2 = parseSchemaText(BASE.replace('      role:', '      nickname: { type: string, required: true }\n      role:'));
    const { db, rules } = await openDatabase(databaseUrl);
    try {
      const plan = await planMigration(db, rules, v2);
      expect(plan.changes.map((c) => [c.description, c.destructive])).toEqual([['add field users.nickname', false]]);
      expect(plan.warnings).toEqual([
        'users.nickname is new and required: rows that already exist have no value for it until they are written',
      ]);
      await applyMigration(db, v2, plan);
    } finally {
      await db.close();
    }
    expect(await columns('users')).toContain('nickname');
    expect(await migrations()).toHaveLength(2);
  });

  it('widening integer to number is not destructive and keeps the values', async () => {
    await seedBase();
    const app = await boot(schemaFile(BASE.replace('age:   { type: integer }', 'age:   { type: number }')));
    expect(JSON.parse((await migrations())[1]?.changes ?? '')).toEqual(['widen users.age from integer to number']);
    expect((await get(app, '/users/2')).body).toMatchObject({ name: 'Ben', age: 40 });
    const patched = await app.inject({ method: 'PATCH', url: '/users/2', payload: { age: 40.5 } });
    expect(patched.statusCode).toBe(200);
    expect(json(patched)).toMatchObject({ age: 40.5 });
    expect((await get(app, '/users/2')).body).toMatchObject({ age: 40.5 });
    expect(json<{ name: string }[]>(await app.inject({ method: 'GET', url: '/users?age[gt]=40.1' })).map((u) => u.name)).toEqual(['Ben', 'Cy']);
  });

  it('widening enum to string is not destructive and keeps the values', async () => {
    // Every enum value is a string, stored as text either way: nothing is lost, so nothing may be deleted.
    await seedBase();
    const app = await boot(schemaFile(BASE.replace('role:  { type: enum, values: [admin, member, guest] }', 'role:  { type: string }')));
    const users = json<Record<string, unknown>[]>(await app.inject({ method: 'GET', url: '/users?sort=id' }));
    expect(users.map((u) => u.role)).toEqual(['admin', 'guest', 'member']);
    expect(await create(app, 'users', { name: 'Free', role: 'anything' })).toMatchObject({ role: 'anything' });
  });

  it('adding an enum value is not destructive', async () => {
    await seedBase();
    const app = await boot(schemaFile(BASE.replace('values: [admin, member, guest]', 'values: [admin, member, guest, owner]')));
    expect(await create(app, 'users', { name: 'Oz', role: 'owner' })).toMatchObject({ role: 'owner' });
    expect((await get(app, '/users/2')).body).toMatchObject({ role: 'guest' });
  });

  it('adding an index creates it; dropping it is not destructive', async () => {
    await seedBase();
    const indexed = BASE.replace('age:   { type: integer }', 'age:   { type: integer, index: true }');
    await stop(await boot(schemaFile(indexed)));
    expect(await database.indexes('users')).toEqual(['rg_ix_users_age']);
    await stop(await boot(schemaFile(BASE)));
    expect(await database.indexes('users')).toEqual([]);
    expect(await migrations()).toHaveLength(3);
  });
});

describe('making a field unique', () => {
  it('works when the values are distinct, and then a clash is a 409', async () => {
    await seedBase();
    const app = await boot(schemaFile(BASE.replace('code:  { type: string }', 'code:  { type: string, unique: true }')));
    expect(JSON.parse((await migrations())[1]?.changes ?? '')).toEqual(['make users.code unique']);
    const clash = await app.inject({ method: 'POST', url: '/users', payload: { name: 'Dup', code: 'A1' } });
    expect(clash.statusCode).toBe(409);
  });

  it('fails with a clear MigrationFailedError when rows hold duplicates, and changes nothing', async () => {
    await seedBase();
    // The new field comes first in the plan: it must be rolled back with the failed unique step.
    const v2 = BASE.replace('      email: { type: string }', '      nickname: { type: string }\n      email: { type: string, unique: true }');
    const error = await rejection(boot(schemaFile(v2)));
    expect(error).toBeInstanceOf(MigrationFailedError);
    const failure = error as MigrationFailedError;
    expect(failure.code).toBe('RG_MIGRATION_FAILED');
    expect(failure.message).toContain('make users.email unique');
    expect(failure.message).toContain('existing rows hold duplicate values, so the field cannot be made unique; remove the duplicates first');
    expect(await migrations()).toHaveLength(1);
    expect(await columns('users')).not.toContain('nickname');
    expect((await rows('users')).map((r) => r.email)).toEqual(['ann@example.com', 'ben@example.com', 'ann@example.com']);

    // The database was closed and still opens with the old schema.
    const app = await boot(schemaFile(BASE));
    expect((await get(app, '/users/3')).body).toMatchObject({ name: 'Cy', email: 'ann@example.com' });
    await stop(app);
    // Once the duplicates are gone, the same schema applies.
    const fixer = await boot(schemaFile(BASE));
    expect((await fixer.inject({ method: 'PATCH', url: '/users/3', payload: { email: 'cy@example.com' } })).statusCode).toBe(200);
    await stop(fixer);
    await boot(schemaFile(v2));
    expect(await migrations()).toHaveLength(2);
  });
});

describe('destructive changes refuse to start', () => {
  const cases: { name: string; schema: string; change: string }[] = [
    { name: 'dropping a field', schema: BASE.replace('      age:   { type: integer }\n', ''), change: 'drop field users.age and every value stored in it' },
    { name: 'dropping a resource', schema: BASE.replace(/ {2}teams:\n.*\n.*\n/, ''), change: 'drop resource teams and every row in it' },
    {
      name: 'changing a type (string to integer)',
      schema: BASE.replace('code:  { type: string }', 'code:  { type: integer }'),
      change: 'change type of users.code from string to integer; its stored values are deleted',
    },
    {
      name: 'changing a type (integer to boolean)',
      schema: BASE.replace('age:   { type: integer }', 'age:   { type: boolean }'),
      change: 'change type of users.age from integer to boolean; its stored values are deleted',
    },
    {
      name: 'removing an enum value',
      schema: BASE.replace('values: [admin, member, guest]', 'values: [admin, member]'),
      change: 'remove guest from the values of users.role; rows holding them are set to null',
    },
  ];

  for (const { name, schema, change } of cases) {
    it(`${name}: DestructiveMigrationError naming the change, and nothing changes`, async () => {
      await seedBase();
      const before = { tables: await tables(), users: await rows('users'), teams: await rows('teams'), migrations: await migrations() };
      const error = await rejection(boot(schemaFile(schema)));
      expect(error).toBeInstanceOf(DestructiveMigrationError);
      const refused = error as DestructiveMigrationError;
      expect(refused.code).toBe('RG_MIGRATION_DESTRUCTIVE');
      expect(refused.changes).toEqual([change]);
      expect(refused.message).toContain(`  - ${change}`);
      expect(refused.message).toContain('restgraph migrate --allow-destructive');
      expect({ tables: await tables(), users: await rows('users'), teams: await rows('teams'), migrations: await migrations() }).toEqual(before);
      // The refused start released the database: the old schema still starts.
      await boot(schemaFile(BASE));
    });
  }

  it('lists every destructive change at once, and applies none of the additive ones', async () => {
    await seedBase();
    const v2 = BASE.replace('      age:   { type: integer }\n', '      bio: { type: string }\n').replace('values: [admin, member, guest]', 'values: [admin]');
    const error = await rejection(boot(schemaFile(v2)));
    expect(error).toBeInstanceOf(DestructiveMigrationError);
    expect((error as DestructiveMigrationError).changes).toEqual([
      'remove member, guest from the values of users.role; rows holding them are set to null',
      'drop field users.age and every value stored in it',
    ]);
    expect(await columns('users')).not.toContain('bio');
  });
});

describe('destructive changes with allowDestructiveMigrations: true', () => {
  it('dropping a field removes its data and keeps the rest', async () => {
    await seedBase();
    const app = await boot(schemaFile(BASE.replace('      age:   { type: integer }\n', '')), { allowDestructiveMigrations: true });
    expect(await columns('users')).toEqual(['id', 'name', 'email', 'code', 'role', 'createdAt', 'updatedAt']);
    const ann = (await get(app, '/users/1')).body as Record<string, unknown>;
    expect(ann).toMatchObject({ id: 1, name: 'Ann', email: 'ann@example.com', code: 'A1', role: 'admin' });
    expect(ann).not.toHaveProperty('age');
    expect((await get(app, '/teams/1')).body).toMatchObject({ title: 'Core' });
    expect(JSON.parse((await migrations())[1]?.changes ?? '')).toEqual(['drop field users.age and every value stored in it']);
    await stop(app);

    // Adding the field back does not bring the old values back.
    const again = await boot(schemaFile(BASE));
    expect((await get(again, '/users/1')).body).toMatchObject({ name: 'Ann', age: null });
  });

  it('dropping an indexed unique field works', async () => {
    const unique = BASE.replace('code:  { type: string }', 'code:  { type: string, unique: true }');
    const first = await boot(schemaFile(unique));
    await create(first, 'users', { name: 'Ann', code: 'A1' });
    await stop(first);
    const app = await boot(schemaFile(unique.replace('      code:  { type: string, unique: true }\n', '')), { allowDestructiveMigrations: true });
    expect(await columns('users')).not.toContain('code');
    expect((await get(app, '/users/1')).body).toMatchObject({ name: 'Ann' });
  });

  it('dropping a resource removes its table and routes, other resources intact', async () => {
    await seedBase();
    const app = await boot(schemaFile(BASE.replace(/ {2}teams:\n.*\n.*\n/, '')), { allowDestructiveMigrations: true });
    expect(await tables()).not.toContain('teams');
    expect((await get(app, '/teams')).status).toBe(404);
    expect(json<unknown[]>(await app.inject({ method: 'GET', url: '/users' }))).toHaveLength(3);
  });

  it('changing a type empties that field only', async () => {
    await seedBase();
    const app = await boot(schemaFile(BASE.replace('code:  { type: string }', 'code:  { type: integer }')), { allowDestructiveMigrations: true });
    const users = json<Record<string, unknown>[]>(await app.inject({ method: 'GET', url: '/users?sort=id' }));
    expect(users.map((u) => [u.name, u.code, u.age])).toEqual([
      ['Ann', null, 30],
      ['Ben', null, 40],
      ['Cy', null, 50],
    ]);
    expect(await create(app, 'users', { name: 'Int', code: 7 })).toMatchObject({ code: 7 });
    const rejected = await app.inject({ method: 'POST', url: '/users', payload: { name: 'Str', code: 'A1' } });
    expect(rejected.statusCode).toBe(422);
  });

  it('removing an enum value nulls only the rows holding it', async () => {
    await seedBase();
    const app = await boot(schemaFile(BASE.replace('values: [admin, member, guest]', 'values: [admin, member]')), { allowDestructiveMigrations: true });
    const users = json<Record<string, unknown>[]>(await app.inject({ method: 'GET', url: '/users?sort=id' }));
    expect(users.map((u) => [u.name, u.role])).toEqual([
      ['Ann', 'admin'],
      ['Ben', null],
      ['Cy', 'member'],
    ]);
  });
});

describe('planMigration and applyMigration', () => {
  it('plans every resource of a fresh database, then nothing once applied', async () => {
    const schema = loadSchemaFile(EXAMPLE_SCHEMA_PATH);
    const { db, rules } = await openDatabase(databaseUrl);
    try {
      const plan = await planMigration(db, rules, schema);
      expect(await lastAppliedDefinition(db)).toBeUndefined();
      expect(plan.changes.map((c) => [c.description, c.destructive])).toEqual([
        ['create resource users', false],
        ['create resource posts', false],
        ['create resource products', false],
        ['create resource orders', false],
      ]);
      expect(plan.warnings).toEqual([]);
      // Planning alone creates no resource table.
      expect(await tables()).toEqual(['_restgraph_account_states', '_restgraph_api_keys', '_restgraph_credentials', '_restgraph_events', '_restgraph_idempotency_keys', '_restgraph_migrations', '_restgraph_one_time_tokens', '_restgraph_rate_limits', '_restgraph_refresh_tokens', '_restgraph_signing_keys', '_restgraph_state', '_restgraph_system_migrations', '_restgraph_webhook_attempts', '_restgraph_webhook_deliveries', '_restgraph_webhooks']);
      await applyMigration(db, schema, plan);
      expect(await lastAppliedDefinition(db)).toEqual(schema.definition);
      const again = await planMigration(db, rules, schema);
      expect(again.changes).toEqual([]);
      await applyMigration(db, schema, again);
    } finally {
      await db.close();
    }
    expect(await migrations()).toHaveLength(1);
  });

  it('lastAppliedDefinition is undefined for a database never migrated (as documented), not an error', async () => {
    const { db } = await openDatabase(databaseUrl);
    try {
      expect(await lastAppliedDefinition(db)).toBeUndefined();
    } finally {
      await db.close();
    }
  });

  it('applyMigration refuses a destructive plan unless allowed', async () => {
    await seedBase();
    const v2 = parseSchemaText(BASE.replace('      age:   { type: integer }\n', ''));
    const { db, rules } = await openDatabase(databaseUrl);
    try {
      const plan = await planMigration(db, rules, v2);
      expect(plan.changes.map((c) => [c.description, c.destructive])).toEqual([['drop field users.age and every value stored in it', true]]);
      await expect(applyMigration(db, v2, plan)).rejects.toBeInstanceOf(DestructiveMigrationError);
      expect(await columns('users')).toContain('age');
      await applyMigration(db, v2, plan, { allowDestructive: true });
      expect(await columns('users')).not.toContain('age');
    } finally {
      await db.close();
    }
  });
});
