import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { openDatabase } from '../src/store/open-database.js';
import { itWithFolder, type CliFolder } from './helpers/cli-process.js';
import { run, writeSchema } from './helpers/cli-serve.js';
import { startPasswordAskingServer, type PasswordAskingServer } from './helpers/password-asking-server.js';

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

describe('a PostgreSQL server that asks for a password the URL does not give', () => {
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
    it.for(['serve', 'migrate', 'token create', 'token list', 'token revoke', 'export data', 'import data', 'copy --to'])('%s', async (name, { folder: dir }) => {
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
