import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { TokenView } from '../src/core/token-operations.js';
import { finish, freePort, itWithFolder, logLines, startCli, waitReady, type CliFolder, type Finished, type Running } from './helpers/cli-process.js';

/**
 * API keys through the CLI (issue 3): `restgraph token create|list|revoke` as child processes of
 * dist/cli/main.js, the keys they make used against `restgraph serve` on 127.0.0.1, the first-start
 * admin key, and a search of the database file and the log for every key in clear.
 */

const KEY_FORMAT = /^rg_[A-Za-z0-9_-]{43}$/;
const ADMIN_TOKEN = 'auth-cli-admin-token-0123456789';

/** A token as /v1/tokens shows it. */
type TokenJson = TokenView;

// Each test has its own folder, database file and processes. Not concurrent: in the whole suite
// five of its servers starting at once missed waitReady's 15 s (and alone it gained nothing at load 8).
const it = itWithFolder('restgraph-auth-cli-');

/** The test's SQLite file, in its folder. */
const dbFileOf = (dir: CliFolder): string => join(dir.path, 'auth.db');

// The CLI runs from dist, built once for the whole run by test/global-setup.ts.

function start(dir: CliFolder, args: string[], env: Record<string, string> = {}): Running {
  return startCli(dir.path, args, { DATABASE_URL: `sqlite:${dbFileOf(dir)}`, ...env }, dir.children);
}

async function run(dir: CliFolder, args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<Finished> {
  return finish(start(dir, args, env), timeoutMs);
}

function must<T>(value: T | undefined | null, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`missing ${what}`);
  return value;
}




/** `token create …`: checks it succeeded and returns the key from the last stdout line. */
async function createKey(dir: CliFolder, args: string[]): Promise<{ key: string; stdout: string }> {
  const result = await run(dir, ['token', 'create', ...args]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const lines = result.stdout.split('\n');
  expect(lines[lines.length - 1]).toBe('');
  const key = must(lines[lines.length - 2], 'last line');
  expect(key).toMatch(KEY_FORMAT);
  return { key, stdout: result.stdout };
}


const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function serve(dir: CliFolder, env: Record<string, string> = {}): Promise<{ running: Running; base: string }> {
  const port = await freePort();
  const running = start(dir, ['serve'], { PORT: String(port), RESTGRAPH_API_KEY_CACHE_SECONDS: '0', ...env });
  await waitReady(running, port);
  return { running, base: `http://127.0.0.1:${port}` };
}

/** SIGTERM, then waits for a clean exit (the log is flushed on the way out). */
async function stop(running: Running): Promise<void> {
  running.child.kill('SIGTERM');
  const exit = await running.exited;
  expect(exit.code).toBe(0);
}


/** Polls the server's stdout until a log line passes `test`. */
async function waitForLog(running: Running, test: (line: Record<string, unknown>) => boolean, timeoutMs = 5_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = logLines(running.stdout()).find(test);
    if (found !== undefined) return found;
    await sleep(50);
  }
  throw new Error(`no such log line after ${timeoutMs} ms:\n${running.stdout()}`);
}

const auth = (key: string): RequestInit => ({ headers: { authorization: `Bearer ${key}` } });


/** GET /v1/tokens over HTTP with an admin credential. */
async function tokensOverHttp(base: string, credential: string): Promise<TokenJson[]> {
  const response = await fetch(`${base}/v1/tokens`, auth(credential));
  expect(response.status).toBe(200);
  return (await response.json()) as TokenJson[];
}

describe('token help', () => {
  it('token --help lists create, list and revoke; each subcommand’s --help shows its usage and flags', async ({ folder: dir }) => {
    const [token, create, list, revoke, top] = await Promise.all([
      run(dir, ['token', '--help']),
      run(dir, ['token', 'create', '--help']),
      run(dir, ['token', 'list', '--help']),
      run(dir, ['token', 'revoke', '--help']),
      run(dir, ['--help']),
    ]);
    for (const result of [token, create, list, revoke, top]) {
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
    }
    expect(token.stdout).toContain('Usage: restgraph token [options] [command]');
    expect(token.stdout).toMatch(/^\s+create \[options\]/m);
    expect(token.stdout).toMatch(/^\s+list \[options\]/m);
    expect(token.stdout).toMatch(/^\s+revoke \[options\] <id-or-prefix>/m);
    expect(top.stdout).toMatch(/^\s+token\b/m);

    expect(create.stdout).toContain('Usage: restgraph token create [options]');
    for (const flag of ['-s, --scopes <scopes>', '-n, --name <name>', '--subject <subject>', '-e, --expires <when>', '-d, --database-url <url>']) expect(create.stdout).toContain(flag);
    expect(create.stdout).toContain('tail -n 1');

    expect(list.stdout).toContain('Usage: restgraph token list [options]');
    expect(list.stdout).toContain('--json');
    expect(revoke.stdout).toContain('Usage: restgraph token revoke [options] <id-or-prefix>');
  });
});

/** The token commands work on a database `serve` or `migrate` made: make it (the example schema). */
async function migrate(dir: CliFolder): Promise<void> {
  const result = await run(dir, ['migrate']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
}

describe('token create, list, revoke', () => {

  it('create prints the key alone on the last stdout line, once, after its details (name, prefix, scopes, expiry)', async ({ folder: dir }) => {
    await migrate(dir);
    const before = Date.now();
    const { key, stdout } = await createKey(dir, ['--scopes', 'users:read,users:write', '--name', 'ci', '--expires', '30d']);
    expect(stdout.split(key).length).toBe(2);
    const details = stdout.slice(0, stdout.indexOf(key));
    expect(details).toContain('"ci"');
    expect(details).toContain(key.slice(0, 11));
    expect(details).toContain('users:read users:write');
    const expires = must(/expires (\S+)\./.exec(details), 'expiry in the details')[1];
    const expiresAt = Date.parse(must(expires));
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
  });

  it('create needs --scopes (exit 1, names the option); a bad --expires or scope exits 1 naming the property, and creates nothing', async ({ folder: dir }) => {
    await migrate(dir);
    const [missing, badExpiry] = await Promise.all([run(dir, ['token', 'create', '--name', 'x']), run(dir, ['token', 'create', '--scopes', 'users:read', '--expires', 'yesterday'])]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("required option '-s, --scopes <scopes>' not specified");
    const [badScope, listed] = await Promise.all([run(dir, ['token', 'create', '--scopes', 'users read']), run(dir, ['token', 'list', '--json'])]);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    for (const [result, name] of [[badExpiry, 'expires'], [badScope, 'scopes']] as const) {
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('[validation-failed]');
      expect(result.stderr, `the message names ${name}`).toMatch(new RegExp(name, 'i'));
    }
  });

  it('list shows id, name, prefix, scopes, subject, state, created, last used and expiry, and never the key', async ({ folder: dir }) => {
    await migrate(dir);
    const ci = await createKey(dir, ['--scopes', 'users:read,users:write', '--name', 'ci', '--expires', '30d']);
    const owner = await createKey(dir, ['--scopes', 'orders:read', '--name', 'alice-app', '--subject', '1']);
    const [table, asJson] = await Promise.all([run(dir, ['token', 'list']), run(dir, ['token', 'list', '--json'])]);
    expect(table.code).toBe(0);
    expect(asJson.code).toBe(0);
    const tokens = JSON.parse(asJson.stdout) as TokenJson[];
    const lines = table.stdout.trimEnd().split('\n');
    expect(must(lines[0]).split(/\s{2,}/)).toEqual(['ID', 'NAME', 'PREFIX', 'SCOPES', 'SUBJECT', 'STATE', 'CREATED', 'LAST USED', 'EXPIRES']);
    expect(lines).toHaveLength(3);
    const byName = new Map(tokens.map((t) => [t.name, t]));
    const ciToken = must(byName.get('ci'));
    const ownerToken = must(byName.get('alice-app'));
    const ciRow = must(lines.find((l) => l.includes(ci.key.slice(0, 11))), 'ci row').split(/\s+/);
    expect(ciRow).toEqual([String(ciToken.id), 'ci', ci.key.slice(0, 11), 'users:read,users:write', '-', 'active', ciToken.createdAt, '-', must(ciToken.expiresAt)]);
    const ownerRow = must(lines.find((l) => l.includes(owner.key.slice(0, 11))), 'owner row').split(/\s+/);
    expect(ownerRow).toEqual([String(ownerToken.id), 'alice-app', owner.key.slice(0, 11), 'orders:read', '1', 'active', ownerToken.createdAt, '-', '-']);
    for (const output of [table.stdout, asJson.stdout]) {
      for (const key of [ci.key, owner.key]) {
        expect(output).not.toContain(key);
        expect(output).not.toContain(key.slice(11));
      }
    }
    for (const token of tokens) expect(Object.keys(token).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt', 'scopes', 'state', 'subject']);
  });

  it('revoke works by id and by prefix; an unknown id or prefix exits 1', async ({ folder: dir }) => {
    await migrate(dir);
    const first = await createKey(dir, ['--scopes', 'users:read', '--name', 'first']);
    const second = await createKey(dir, ['--scopes', 'users:read', '--name', 'second']);
    const idOf = (stdout: string): number => Number(must(/^Created token (\d+) /.exec(stdout), 'token id')[1]);
    const firstId = idOf(first.stdout);
    const secondId = idOf(second.stdout);
    const byId = await run(dir, ['token', 'revoke', String(firstId)]);
    expect(byId.code).toBe(0);
    expect(byId.stdout).toContain(`Revoked token ${firstId} "first" (${first.key.slice(0, 11)}…)`);
    const byPrefix = await run(dir, ['token', 'revoke', second.key.slice(0, 11)]);
    expect(byPrefix.code).toBe(0);
    expect(byPrefix.stdout).toContain(`Revoked token ${secondId} "second" (${second.key.slice(0, 11)}…)`);
    const [table, unknownId, unknownPrefix] = await Promise.all([run(dir, ['token', 'list']), run(dir, ['token', 'revoke', '999']), run(dir, ['token', 'revoke', 'rg_nothere1'])]);
    const rows = table.stdout.trimEnd().split('\n').slice(1);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.split(/\s+/)[5]).toBe('revoked');
    for (const [result, what] of [[unknownId, '999'], [unknownPrefix, 'rg_nothere1']] as const) {
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`No single token has the id or prefix ${what}`);
    }
  });
});

describe('keys from the CLI against restgraph serve', () => {

  it('a created key works over HTTP with its scopes and its last use is recorded; revoked by id or prefix (cache 0 s) it is refused at once', async ({ folder: dir }) => {
    await migrate(dir);
    const reader = await createKey(dir, ['--scopes', 'users:read', '--name', 'reader']);
    const writer = await createKey(dir, ['--scopes', 'users:read,users:write', '--name', 'writer']);
    const { running, base } = await serve(dir, { RESTGRAPH_ADMIN_TOKEN: ADMIN_TOKEN });

    expect((await fetch(`${base}/users`, auth(reader.key))).status).toBe(200);
    const denied = await fetch(`${base}/users`, { method: 'POST', headers: { authorization: `Bearer ${reader.key}`, 'content-type': 'application/json' }, body: '{"name":"x"}' });
    expect(denied.status).toBe(403);
    expect(denied.headers.get('www-authenticate')).toBe('Bearer realm="restgraph", error="insufficient_scope", scope="users:write"');
    const created = await fetch(`${base}/users`, { method: 'POST', headers: { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json' }, body: '{"name":"x"}' });
    expect(created.status).toBe(201);
    const anonymous = await fetch(`${base}/users`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="restgraph"');

    let lastUsed: string | null = null;
    for (let i = 0; i < 50 && lastUsed === null; i++) {
      lastUsed = (await tokensOverHttp(base, ADMIN_TOKEN)).find((t) => t.name === 'reader')?.lastUsedAt ?? null;
      if (lastUsed === null) await sleep(50);
    }
    expect(Math.abs(Date.parse(must(lastUsed)) - Date.now())).toBeLessThan(60_000);

    const readerId = must((await tokensOverHttp(base, ADMIN_TOKEN)).find((t) => t.name === 'reader')).id;
    expect((await run(dir, ['token', 'revoke', String(readerId)])).code).toBe(0);
    const refused = await fetch(`${base}/users`, auth(reader.key));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer realm="restgraph", error="invalid_token"/);
    expect(((await refused.json()) as { code: string }).code).toBe('invalid-token');

    expect((await run(dir, ['token', 'revoke', writer.key.slice(0, 11)])).code).toBe(0);
    expect((await fetch(`${base}/users`, auth(writer.key))).status).toBe(401);

    const late = await createKey(dir, ['--scopes', 'users:read', '--name', 'late']);
    expect((await fetch(`${base}/users`, auth(late.key))).status).toBe(200);
    await stop(running);
  });
});

describe('first start: the bootstrap admin key', () => {
  it('an empty database without RESTGRAPH_ADMIN_TOKEN gets one admin key, logged once (warn) with a usage hint; it works; a second start makes none', async ({ folder: dir }) => {
    const first = await serve(dir);
    const line = await waitForLog(first.running, (l) => 'adminKey' in l);
    const adminKey = line.adminKey as string;
    expect(adminKey).toMatch(KEY_FORMAT);
    expect(line.level).toBe(40);
    expect((await fetch(`${first.base}/users`, auth(adminKey))).status).toBe(200);
    expect((await tokensOverHttp(first.base, adminKey)).map((t) => [t.name, t.scopes, t.prefix])).toEqual([['bootstrap-admin', ['admin'], adminKey.slice(0, 11)]]);
    await stop(first.running);
    const firstLines = logLines(first.running.stdout());
    expect(firstLines.filter((l) => 'adminKey' in l)).toHaveLength(1);
    const hint = must(firstLines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('Use it as')), 'usage hint');
    expect(hint.msg).toContain('restgraph token create');

    const second = await serve(dir);
    expect((await tokensOverHttp(second.base, adminKey)).map((t) => t.name)).toEqual(['bootstrap-admin']);
    await stop(second.running);
    expect(second.running.stdout()).not.toContain(adminKey);
    expect(logLines(second.running.stdout()).filter((l) => 'adminKey' in l)).toEqual([]);
  });

  it('no bootstrap key when RESTGRAPH_ADMIN_TOKEN is set', async ({ folder: dir }) => {
    const { running, base } = await serve(dir, { RESTGRAPH_ADMIN_TOKEN: ADMIN_TOKEN });
    expect(await tokensOverHttp(base, ADMIN_TOKEN)).toEqual([]);
    await stop(running);
    expect(logLines(running.stdout()).filter((l) => 'adminKey' in l)).toEqual([]);
  });

  it('no bootstrap key when keys already exist (an admin key created by the CLI first)', async ({ folder: dir }) => {
    await migrate(dir);
    const { key } = await createKey(dir, ['--scopes', 'admin', '--name', 'operator']);
    const { running, base } = await serve(dir);
    expect((await tokensOverHttp(base, key)).map((t) => t.name)).toEqual(['operator']);
    await stop(running);
    expect(logLines(running.stdout()).filter((l) => 'adminKey' in l)).toEqual([]);
  });
});

describe('keys are never stored or logged in clear', () => {
  it('neither the database file (nor its WAL) nor the server log holds any key', async ({ folder: dir }) => {
    const server = await serve(dir);
    const bootstrap = (await waitForLog(server.running, (l) => 'adminKey' in l)).adminKey as string;

    const cliKey = (await createKey(dir, ['--scopes', 'users:read,users:write', '--name', 'cli-secret', '--subject', '1'])).key;
    const createOverHttp = async (body: Record<string, unknown>): Promise<{ key: string; id: number }> => {
      const response = await fetch(`${server.base}/v1/tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bootstrap}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(201);
      return (await response.json()) as { key: string; id: number };
    };
    const httpKey = (await createOverHttp({ name: 'http-secret', scopes: ['users:read', 'orders:write'], subject: '1' })).key;
    const doomed = await createOverHttp({ name: 'doomed', scopes: ['users:read'] });

    // Use every key: successes, refusals, a write with an idempotency key (its response is stored).
    for (const key of [cliKey, httpKey, doomed.key, bootstrap]) expect((await fetch(`${server.base}/users`, auth(key))).status).toBe(200);
    const write = await fetch(`${server.base}/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cliKey}`, 'content-type': 'application/json', 'idempotency-key': 'secrecy-1' },
      body: JSON.stringify({ name: 'Writer' }),
    });
    expect(write.status).toBe(201);
    expect((await fetch(`${server.base}/users`, { method: 'POST', headers: { authorization: `Bearer ${httpKey}`, 'content-type': 'application/json' }, body: '{"name":"no"}' })).status).toBe(403);
    expect((await fetch(`${server.base}/v1/tokens/${doomed.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${bootstrap}` } })).status).toBe(204);
    expect((await fetch(`${server.base}/users`, auth(doomed.key))).status).toBe(401);
    expect((await fetch(`${server.base}/users`, auth(`${httpKey}x`))).status).toBe(401);
    expect((await fetch(`${server.base}/v1/tokens`, auth(httpKey))).status).toBe(403);

    const keys = { cliKey, httpKey, doomed: doomed.key, bootstrap };
    const dbFile = dbFileOf(dir);
    const dbFiles = (): string[] => [dbFile, `${dbFile}-wal`].filter((f) => existsSync(f));
    const expectNotIn = (where: string, bytes: Buffer | string, checked: Record<string, string>): void => {
      for (const [name, key] of Object.entries(checked)) {
        expect(bytes.includes(key), `${name} in ${where}`).toBe(false);
        expect(bytes.includes(key.slice(11)), `${name} (without its prefix) in ${where}`).toBe(false);
      }
    };
    expect(dbFiles().length).toBeGreaterThan(0);
    for (const file of dbFiles()) expectNotIn(`${file} (server running)`, readFileSync(file), keys);

    await stop(server.running);
    for (const file of dbFiles()) expectNotIn(`${file} (server stopped)`, readFileSync(file), keys);
    // The bootstrap key is logged once, on purpose, at start-up; no other key may appear in the log.
    const notLogged = { cliKey, httpKey, doomed: doomed.key };
    expectNotIn('server stdout', server.running.stdout(), notLogged);
    expectNotIn('server stderr', server.running.stderr(), keys);
    const lines = logLines(server.running.stdout());
    expect(lines.filter((l) => l.msg === 'request').length).toBeGreaterThanOrEqual(10);
    const withBootstrapKey = lines.filter((l) => JSON.stringify(l).includes(bootstrap));
    expect(withBootstrapKey.length).toBeGreaterThanOrEqual(1);
    for (const line of withBootstrapKey) expect({ level: line.level, request: line.msg === 'request' }).toEqual({ level: 40, request: false });
  });
});
