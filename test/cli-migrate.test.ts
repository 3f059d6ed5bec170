import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, freePort, itWithFolder } from './helpers/cli-process.js';
import { columnNames, fetch, migrationCount, run, serve, tableNames, writeSchema } from './helpers/cli-serve.js';

/**
 * The `restgraph` CLI as operators run it: a child process of dist/cli/main.js, on real temp
 * SQLite files and real sockets on 127.0.0.1.
 * `migrate`: dry runs, plans applied, and destructive changes.
 * (The other cli-*.test.ts files: cli-help, cli-serve, cli-serve-signals, cli-serve-errors.)
 */

// Each test has its own folder (and processes): the tests run concurrently, most of a test being a
// child process starting or stopping.
const it = itWithFolder('restgraph-cli-');

const BASE_SCHEMA = `
resources:
  users:
    fields:
      name: { type: string, required: true }
      bio:  { type: string }
`;
const WITHOUT_BIO = `
resources:
  users:
    fields:
      name: { type: string, required: true }
`;

describe.concurrent('migrate', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('--dry-run prints the plan and the SQL, and applies nothing', async ({ folder: dir }) => {
    const dbFile = join(dir.path, 'x.db');
    const result = await run(dir, ['migrate', '--dry-run', '-d', `sqlite:${dbFile}`]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Database: sqlite:${dbFile}`);
    expect(result.stdout).toContain('4 changes:');
    for (const name of ['users', 'posts', 'products', 'orders']) expect(result.stdout).toContain(`  + create resource ${name}\n`);
    expect(result.stdout).toContain('Dry run: nothing applied.');
    expect(result.stdout).toContain('create table "users" (');
    expect(tableNames(dbFile)).not.toContain('users');
    expect(migrationCount(dbFile)).toBe(0);
  });

  it('applies the plan, then finds nothing to do', async ({ folder: dir }) => {
    const dbFile = join(dir.path, 'x.db');
    const schema = writeSchema(dir, BASE_SCHEMA);
    const first = await run(dir, ['migrate', schema], { DATABASE_URL: `sqlite:${dbFile}` });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Schema:   ${schema}`);
    expect(first.stdout).toContain('1 change:\n  + create resource users\n');
    expect(first.stdout).toContain('Applied.');
    expect(tableNames(dbFile)).toContain('users');
    expect(columnNames(dbFile, 'users')).toEqual(['id', 'name', 'bio', 'createdAt', 'updatedAt']);
    expect(migrationCount(dbFile)).toBe(1);

    const second = await run(dir, ['migrate', schema], { DATABASE_URL: `sqlite:${dbFile}` });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('The database already matches the schema.');
    expect(second.stdout).toContain('Nothing to apply.');
    expect(migrationCount(dbFile)).toBe(1);
  });

  it('a bad schema exits 1 naming file, path and reason', async ({ folder: dir }) => {
    const schema = writeSchema(dir, 'resources:\n  graphql: { singular: gql }\n', 'reserved.yaml');
    const result = await run(dir, ['migrate', schema, '-d', `sqlite:${join(dir.path, 'x.db')}`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${schema}:2:`);
    expect(result.stderr).toContain('at resources.graphql: "graphql" is reserved by restgraph');
  });

  it('a destructive change stops serve until migrate --allow-destructive applies it', async ({ folder: dir }) => {
    const dbFile = join(dir.path, 'x.db');
    const env = { DATABASE_URL: `sqlite:${dbFile}` };
    const base = writeSchema(dir, BASE_SCHEMA, 'v1.yaml');
    expect((await run(dir, ['migrate', base], env)).code).toBe(0);
    const first = await serve(dir, [base], env);
    const created = await fetch(`${first.base}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Ann', bio: 'gone soon' }) });
    expect(created.status).toBe(201);
    first.running.child.kill('SIGTERM');
    expect((await first.running.exited).code).toBe(0);

    const v2 = writeSchema(dir, WITHOUT_BIO, 'v2.yaml');
    const refused = await run(dir, ['serve', v2], { ...env, PORT: String(await freePort()) });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`restgraph: The schema ${v2} makes destructive changes to the database sqlite:${dbFile}: [RG_MIGRATION_DESTRUCTIVE]\n`);
    expect(refused.stderr).toContain('drop field users.bio and every value stored in it');
    expect(refused.stderr).toContain('this DELETES the data listed above');
    expect(refused.stderr).toContain(`\n  npx restgraph migrate ${v2} -d sqlite:${dbFile} --dry-run\n  npx restgraph migrate ${v2} -d sqlite:${dbFile} --allow-destructive\n`);
    expect(refused.stderr).not.toContain('Refusing');
    expect(columnNames(dbFile, 'users')).toContain('bio');

    const dry = await run(dir, ['migrate', v2, '--dry-run'], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('  ! drop field users.bio and every value stored in it  (destructive)');
    expect(dry.stdout).toContain('alter table "users" drop column "bio";');
    expect(columnNames(dbFile, 'users')).toContain('bio');

    const plain = await run(dir, ['migrate', v2], env);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('drop field users.bio');
    expect(plain.stderr).toContain(`npx restgraph migrate ${v2} -d sqlite:${dbFile} --allow-destructive\n`);
    expect(plain.stderr).not.toMatch(/Refusing to start/i);
    expect(columnNames(dbFile, 'users')).toContain('bio');
    expect(migrationCount(dbFile)).toBe(1);

    const allowed = await run(dir, ['migrate', v2, '--allow-destructive'], env);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain('Applied.');
    expect(columnNames(dbFile, 'users')).toEqual(['id', 'name', 'createdAt', 'updatedAt']);
    expect(migrationCount(dbFile)).toBe(2);

    const second = await serve(dir, [v2], env);
    const ann = await fetch(`${second.base}/users/1`);
    expect(ann.status).toBe(200);
    const body = (await ann.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ id: 1, name: 'Ann' });
    expect(body).not.toHaveProperty('bio');
  });
});
