import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { openDatabase } from '../src/store/open-database.js';
import { CLI_TEST_TIMEOUT_MS, type CliFolder, freePort, itWithFolder } from './helpers/cli-process.js';
import { run, serve, writeSchema } from './helpers/cli-serve.js';
import { startPasswordAskingServer, type PasswordAskingServer } from './helpers/password-asking-server.js';
import { createDatabaseOf, onlyOnSqlite, TEST_DIALECT } from './helpers/test-database.js';

/**
 * The database URL of every CLI command, as a child process: a URL it cannot use is a coded error
 * and the process exits 1 (a PostgreSQL server asking for a password the URL lacks left a socket
 * open, and the process never exited); a mistyped URL never becomes a new SQLite database (nor a
 * folder); and no URL is shown with its credentials (user:password@, password=, sslpassword=).
 */

const it = itWithFolder('restgraph-urls-');

const SCHEMA = 'resources:\n  notes:\n    access: { read: public, write: public }\n    fields:\n      body: { type: string }\n';
const EXPORT_LINE = `${JSON.stringify({ resource: 'notes', record: { id: 1, body: 'a', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' } })}\n`;

/** Every command that opens a database, with `url` as its database. */
function commandsWith(dir: CliFolder, url: string): [string, string[]][] {
  const schema = writeSchema(dir, SCHEMA);
  const data = join(dir.path, 'export.ndjson');
  writeFileSync(data, EXPORT_LINE);
  return [
    ['serve', ['serve', schema, '-p', '0', '-d', url]],
    ['migrate', ['migrate', schema, '-d', url]],
    ['token create', ['token', 'create', schema, '--scopes', 'admin', '-d', url]],
    ['token list', ['token', 'list', schema, '-d', url]],
    ['token revoke', ['token', 'revoke', 'rg_AbCdEfGh', schema, '-d', url]],
    ['export data', ['export', 'data', schema, '-d', url]],
    ['import data', ['import', 'data', data, schema, '-d', url]],
    ['import <resource>', ['import', 'notes', data.replace('export', 'notes'), schema, '-d', url]],
    ['copy --to', ['copy', '--from', `sqlite:${join(dir.path, 'source.db')}`, '--to', url]],
  ];
}

// The URLs of these tests name no database of the suite's: they run in the SQLite pass only.
describe.skipIf(onlyOnSqlite)('a PostgreSQL server that asks for a password the URL does not give', () => {
  let server: PasswordAskingServer;
  beforeAll(async () => {
    server = await startPasswordAskingServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('openDatabase fails with a coded error saying the password is missing, and lets go of the connection', async () => {
    const error = await openDatabase(`postgres://app@127.0.0.1:${server.port}/app`, { postgres: { connectMs: 60_000 } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'RG_CONFIG_INVALID' });
    expect((error as Error).message).toContain(`cannot reach the database postgres://127.0.0.1:${server.port}/app`);
    expect((error as Error).message).toContain('the server asks for a password, and the URL gives none');
    // The client's socket is closed (the server sees it go); it kept the process alive before.
    for (let i = 0; i < 200 && server.openConnections() > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(server.openConnections()).toBe(0);
  });

  describe.concurrent('every command prints the error and exits 1', () => {
    // The exit is the CLI's (main.ts) whatever the command: one of each kind (a server, a token command, export, import, copy).
    it.for(['serve', 'token list', 'token create', 'export data', 'import data', 'copy --to'])('%s', async (name, { folder: dir }) => {
      const url = `postgres://app@127.0.0.1:${server.port}/app`;
      if (name === 'copy --to') await run(dir, ['migrate', writeSchema(dir, SCHEMA), '-d', `sqlite:${join(dir.path, 'source.db')}`]);
      const [, args] = commandsWith(dir, url).find(([command]) => command === name) ?? ['', []];
      const result = await run(dir, args);
      expect(result.stderr).toContain('the server asks for a password, and the URL gives none');
      expect(result.stderr).toContain('[RG_CONFIG_INVALID]');
      expect(result).toMatchObject({ code: 1, signal: null });
    });
  });
});

describe.skipIf(onlyOnSqlite)('a mistyped database URL is refused, and nothing is created', { concurrent: true }, () => {
  const mistakes: [string, (dir: string) => string, string][] = [
    ['one slash missing after postgres:', () => 'postgres:/app:secret@127.0.0.1:54329/app', '"postgres:" must be followed by two slashes: postgres://user:password@host:port/database'],
    ['an unknown scheme', () => 'mysql://app:secret@127.0.0.1/app', 'unsupported database URL scheme "mysql:"'],
    ['a scheme-like word before a path', () => 'data:secret.db', 'unsupported database URL scheme "data:"'],
    ['a file: URL', (dir) => `file:${dir}/app.db`, 'unsupported database URL scheme "file:"'],
  ];
  for (const [what, url, reason] of mistakes) {
    it(`${what}: exits 1 naming the forms it takes, without the password, creating nothing`, async ({ folder: dir }) => {
      const schema = writeSchema(dir, SCHEMA);
      const before = readdirSync(dir.path).sort();
      const result = await run(dir, ['serve', schema, '-p', '0', '-d', url(dir.path)]);
      expect(result.stderr).toContain(`restgraph: Invalid configuration DATABASE_URL: ${reason}`);
      expect(result.stderr).toContain('sqlite:<file>, a file path, or postgres://user:password@host:port/database');
      expect(result.stderr).not.toContain('secret');
      expect(result.stdout).toBe('');
      expect(result.code).toBe(1);
      expect(readdirSync(dir.path).sort()).toEqual(before);
    });
  }

  it.for(['serve', 'migrate', 'import <resource>', 'copy --to'])('a SQLite file in a folder that does not exist: %s exits 1 naming the folder, and creates neither', async (name, { folder: dir }) => {
    const missing = join(dir.path, 'nonexistent', 'dir');
    if (name === 'copy --to') await run(dir, ['migrate', writeSchema(dir, SCHEMA), '-d', `sqlite:${join(dir.path, 'source.db')}`]);
    writeFileSync(join(dir.path, 'notes.ndjson'), '{"body":"a"}\n');
    const [, args] = commandsWith(dir, `sqlite:${missing}/app.db`).find(([command]) => command === name) ?? ['', []];
    const result = await run(dir, args);
    expect(result.stderr).toContain(`the folder ${missing} does not exist (create it first: only restgraph's own ./data is created)`);
    expect(result.stderr).toContain('[RG_CONFIG_INVALID]');
    expect(result.code).toBe(1);
    expect(existsSync(join(dir.path, 'nonexistent'))).toBe(false);
  });

  it("restgraph's own ./data is still created, whether named or the default", async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    expect((await run(dir, ['migrate', schema, '-d', 'sqlite:./data/named.db'])).code).toBe(0);
    expect(existsSync(join(dir.path, 'data', 'named.db'))).toBe(true);
    const other = await run(dir, ['migrate', schema], {});
    expect(other.code).toBe(0);
    expect(existsSync(join(dir.path, 'data', 'schema.db'))).toBe(true);
  });
});

describe.concurrent('credentials in a database URL are never shown', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const SECRETS = /hunter/;

  it.skipIf(onlyOnSqlite)('in a command line printed back (a port in use)', async ({ folder: dir }) => {
    const busy = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => busy.listen(port, '127.0.0.1', resolve));
    try {
      const result = await run(dir, ['serve', '-p', String(port), '-d', 'postgres://app:hunter2@127.0.0.1:1/app?password=hunter3&sslpassword=hunter4&sslmode=disable']);
      expect(result.stderr).toContain(`npx restgraph serve -d 'postgres://127.0.0.1:1/app?sslmode=disable' -p ${port + 1}`);
      expect(result.stderr).not.toMatch(SECRETS);
      expect(result.code).toBe(1);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it.skipIf(onlyOnSqlite)('in the error of a database that cannot be reached', async ({ folder: dir }) => {
    const result = await run(dir, ['token', 'list', '-d', `postgres://app:hunter2@127.0.0.1:${await freePort()}/app?password=hunter3&sslpassword=hunter4&application_name=cli`]);
    expect(result.stderr).toMatch(/cannot reach the database postgres:\/\/127\.0\.0\.1:\d+\/app\?application_name=cli: connect ECONNREFUSED/);
    expect(result.stderr).not.toMatch(SECRETS);
    expect(result.code).toBe(1);
  });

  /** The suite's PostgreSQL database with a password in each place a URL may carry one (the server trusts 127.0.0.1, so they are not checked). */
  async function withPasswords(dir: CliFolder): Promise<{ url: string; shown: string }> {
    const db = await createDatabaseOf('postgres', dir.path);
    const url = `${db.url.replace(/^postgres:\/\/([^:@/]+)@/, 'postgres://$1:hunter2@')}&password=hunter3&sslpassword=hunter4`;
    return { url, shown: db.url.replace(/^postgres:\/\/[^@/]*@/, 'postgres://') };
  }

  describe.runIf(TEST_DIALECT === 'postgres')('on PostgreSQL', () => {
    it('in the start log, its warnings and the first admin key hint', async ({ folder: dir }) => {
      const { url, shown } = await withPasswords(dir);
      const { running } = await serve(dir, [writeSchema(dir, SCHEMA)], { DATABASE_URL: url, RESTGRAPH_ADMIN_TOKEN: '' });
      // Ready may answer before the start log's last line is out.
      while (!running.stdout().includes('restgraph listening')) await new Promise((r) => setTimeout(r, 50));
      running.child.kill('SIGTERM');
      await running.exited;
      const output = running.stdout() + running.stderr();
      expect(output).toContain(`"database":"${shown}"`);
      expect(output).toContain(`-d ${shown}`);
      expect(output).not.toMatch(SECRETS);
    });

    it('by migrate, import, copy and the token commands', async ({ folder: dir }) => {
      const { url, shown } = await withPasswords(dir);
      const schema = writeSchema(dir, SCHEMA);
      const noSchema = await run(dir, ['token', 'list', schema, '-d', url]);
      expect(noSchema.stderr).toContain(`-d ${shown}`);
      const data = join(dir.path, 'export.ndjson');
      writeFileSync(data, EXPORT_LINE);
      const results = [noSchema, await run(dir, ['migrate', schema, '-d', url]), await run(dir, ['import', 'data', data, schema, '-d', url]), await run(dir, ['token', 'create', schema, '--scopes', 'admin', '-d', url])];
      await run(dir, ['migrate', schema, '-d', `sqlite:${join(dir.path, 'copy.db')}`]);
      const other = await withPasswords(dir);
      results.push(await run(dir, ['copy', '--from', url, '--to', other.url]));
      for (const result of results) {
        expect(result.stdout + result.stderr).toContain(shown.slice(0, shown.indexOf('?')));
        expect(result.stdout + result.stderr).not.toMatch(SECRETS);
      }
      expect(results.slice(1).map((r) => r.code)).toEqual([0, 0, 0, 0]);
    });
  });
});
