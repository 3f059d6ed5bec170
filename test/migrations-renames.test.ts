import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { DestructiveMigrationError } from '../src/errors.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { finish, startCli } from './helpers/cli-process.js';
import { actAsAdmin, captureLogs, json, tempDir, TEST_ADMIN_TOKEN } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

/**
 * Renaming a field (on the suite's database, SQLite file or PostgreSQL schema): `renamedFrom`
 * alone renames the column in place, the data kept under the new name in every API version (a
 * breaking change for clients, said at warn level in the start log); the refusal of a dropped field
 * names both ways to say it was renamed; and every schema change a start applies is logged.
 */

const BEFORE = 'resources:\n  users:\n    access: { read: public, write: public }\n    fields:\n      name: { type: string, required: true }\n';
const RENAMED_IN_PLACE = 'resources:\n  users:\n    access: { read: public, write: public }\n    fields:\n      fullName: { type: string, required: true, renamedFrom: name }\n';
const DROPPED = 'resources:\n  users:\n    access: { read: public, write: public }\n    fields:\n      fullName: { type: string }\n';

let dir: ReturnType<typeof tempDir>;
let database: TestDatabase;
let running: FastifyInstance[] = [];

beforeEach(async () => {
  dir = tempDir('restgraph-rename-');
  database = await createTestDatabase(dir.path, 'app');
  running = [];
});

afterEach(async () => {
  for (const app of running) await app.close();
  await database.drop();
  dir.cleanup();
});

/** Starts the app on the test's database with `text` as its schema: the app and its log lines. */
async function start(text: string): Promise<{ app: FastifyInstance; logs: Record<string, unknown>[] }> {
  const { logs, logDestination } = captureLogs();
  const app = actAsAdmin(await buildApp({ schema: parseSchemaText(text, 'api.yaml'), databaseUrl: database.url, logDestination, adminToken: TEST_ADMIN_TOKEN }));
  running.push(app);
  return { app, logs };
}

async function stop(app: FastifyInstance): Promise<void> {
  running = running.filter((a) => a !== app);
  await app.close();
}

const changeLines = (logs: Record<string, unknown>[]): [unknown, unknown][] => logs.filter((l) => String(l.msg).startsWith('schema change applied')).map((l) => [l.level, l.change]);

describe('renaming a field', () => {
  it('renamedFrom alone renames the column in place: the data is kept under the new name, and the start log warns that clients see it', async () => {
    const first = await start(BEFORE);
    expect((await first.app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } })).statusCode).toBe(201);
    await stop(first.app);

    const second = await start(RENAMED_IN_PLACE);
    expect(json<Record<string, unknown>[]>(await second.app.inject({ method: 'GET', url: '/users' }))).toMatchObject([{ id: 1, fullName: 'Ada' }]);
    expect((await second.app.inject({ method: 'POST', url: '/users', payload: { fullName: 'Grace' } })).statusCode).toBe(201);
    expect(await database.columns('users')).toContain('fullName');
    expect(await database.columns('users')).not.toContain('name');
    const warning = second.logs.find((l) => l.change === 'rename field users.name to fullName');
    expect(warning).toMatchObject({ level: 40, breaking: true });
    expect(String(warning?.msg)).toContain('every API version shows users.fullName instead of name from now on, a breaking change for clients');
    await stop(second.app);

    // Once applied, a start with the same schema changes nothing and logs no change.
    const third = await start(RENAMED_IN_PLACE);
    expect(changeLines(third.logs)).toEqual([]);
    expect(json<Record<string, unknown>[]>(await third.app.inject({ method: 'GET', url: '/users' })).map((u) => u.fullName)).toEqual(['Ada', 'Grace']);
  });

  it('in a versioned schema, renamedFrom without renamedIn shows the new name in every version', async () => {
    const versioned = (fields: string): string => `versions: [v1, v2]\n${fields}`;
    const first = await start(versioned(BEFORE));
    expect((await first.app.inject({ method: 'POST', url: '/v1/users', payload: { name: 'Ada' } })).statusCode).toBe(201);
    await stop(first.app);
    const second = await start(versioned(RENAMED_IN_PLACE));
    expect(json<Record<string, unknown>[]>(await second.app.inject({ method: 'GET', url: '/v1/users' }))).toMatchObject([{ fullName: 'Ada' }]);
    expect(json<Record<string, unknown>[]>(await second.app.inject({ method: 'GET', url: '/v2/users' }))).toMatchObject([{ fullName: 'Ada' }]);
  });

  it('the refusal of a dropped field names both ways to say it was renamed, with the field the schema adds', async () => {
    const first = await start(BEFORE);
    await stop(first.app);
    const refused = await start(DROPPED).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DestructiveMigrationError);
    const message = (refused as Error).message;
    expect(message).toContain('drop field users.name and every value stored in it');
    expect(message).toContain('users.fullName: { …, renamedFrom: name }  renames the column in place: every API version shows the new name (a breaking change for clients)');
    expect(message).toContain('users.fullName: { …, renamedFrom: name, renamedIn: v2 }  with versions: [v1, v2]: the versions before v2 keep showing name');

    // With versions already, the next one.
    const versioned = await start(`versions: [v1, v2]\n${DROPPED}`).catch((error: unknown) => error);
    expect((versioned as Error).message).toContain('renamedIn: v3 }  with v3 added to versions: the versions before v3 keep showing name');
  });

  it('every schema change a start applies is logged: new resources and fields at info, destructive ones at warn', async () => {
    const first = await start(BEFORE);
    expect(changeLines(first.logs)).toEqual([[30, 'create resource users']]);
    await stop(first.app);
    const second = await start(`${BEFORE}      bio: { type: string }\n  teams:\n    fields:\n      title: { type: string }\n`);
    expect(changeLines(second.logs)).toEqual([
      [30, 'add field users.bio'],
      [30, 'create resource teams'],
    ]);
    expect(second.logs.find((l) => l.change === 'add field users.bio')).toMatchObject({ msg: 'schema change applied: add field users.bio', database: expect.stringMatching(/^(sqlite|postgres):/) as string });
  });
});

describe('renaming a field with the CLI', () => {
  it('migrate refuses a dropped field naming renamedFrom, and shows an in-place rename as breaking for clients', async () => {
    const file = (text: string, name: string): string => {
      writeFileSync(join(dir.path, name), text);
      return name;
    };
    const cli = async (args: string[]) => finish(startCli(dir.path, args, {}, []));
    expect((await cli(['migrate', file(BEFORE, 'before.yaml'), '-d', database.url])).code).toBe(0);
    const refused = await cli(['migrate', file(DROPPED, 'dropped.yaml'), '-d', database.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('users.fullName: { …, renamedFrom: name }  renames the column in place');
    expect(refused.stderr).toContain('users.fullName: { …, renamedFrom: name, renamedIn: v2 }');
    const renamed = await cli(['migrate', file(RENAMED_IN_PLACE, 'renamed.yaml'), '-d', database.url]);
    expect(renamed.stdout).toContain('  + rename field users.name to fullName  (renamed in place: every API version shows users.fullName instead of name from now on, a breaking change for clients');
    expect(renamed.code).toBe(0);
  });
});
