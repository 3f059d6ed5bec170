import { describe, expect } from 'vitest';
import { createKey, it, migrate, must, run, type TokenJson } from './helpers/auth-cli.js';
import { CLI_TEST_TIMEOUT_MS } from './helpers/cli-process.js';

/**
 * API keys through the CLI (issue 3): `restgraph token create|list|revoke` as child processes of
 * dist/cli/main.js: their help, output and mistakes.
 * (The other auth-cli-*.test.ts files: auth-cli-serve, auth-cli-bootstrap.)
 */

describe('token help', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
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

describe('token create, list, revoke', { timeout: CLI_TEST_TIMEOUT_MS }, () => {

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
