import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, logLines } from './helpers/cli-process.js';
import { ADMIN_TOKEN, auth, createKey, it, KEY_FORMAT, migrate, must, serve, stop, tokensOverHttp, waitForLog } from './helpers/auth-cli.js';

/**
 * API keys through the CLI (issue 3): the admin key `restgraph serve` makes on its first start,
 * and when it makes none.
 * (The other auth-cli-*.test.ts files: auth-cli-tokens, auth-cli-serve.)
 */

describe('first start: the bootstrap admin key', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
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
