import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { chromiumAvailable, launchChromium } from './helpers/chromium.js';
import { bearer, firstStart, it, KEY_FORMAT, NOTES_SCHEMA, run, serve, stop } from './helpers/new-user.js';
import { CLI_TEST_TIMEOUT_MS } from './helpers/cli-process.js';

/**
 * What a new user does in the first ten minutes, with the CLI in an empty folder and no settings
 * (test/helpers/new-user.ts): the admin console's sign-in page says how to make a key, and the
 * command it gives makes one in the database of the server it is on, whichever schema and
 * database that server was started with; the token commands say on stderr which database they
 * wrote to, the key staying alone on the last line of stdout.
 * (The other new-user-path-*.test.ts files: new-user-path-busy-port, new-user-path-restart, new-user-path-tokens, new-user-path-two-schemas, new-user-path-upgrade.)
 */

/** The command the sign-in page of /admin offers, as the server put it in the page. */
async function hintOf(base: string, headers: Record<string, string> = {}): Promise<string> {
  const html = await (await fetch(`${base}/admin`, { headers })).text();
  const content = /<meta name="restgraph-token-command" content="([^"]*)">/.exec(html)?.[1];
  expect(content, 'the page carries the command').toBeDefined();
  return (content ?? '').replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Runs a hint's `npx restgraph …` command in the folder: the key it printed last, and its stderr. */
async function runHint(dir: Parameters<typeof run>[0], command: string): Promise<{ key: string; stderr: string }> {
  const words = command.split(' ');
  expect(words.slice(0, 2)).toEqual(['npx', 'restgraph']);
  const result = await run(dir, words.slice(2));
  expect(result.code, result.stderr).toBe(0);
  const key = result.stdout.trimEnd().split('\n').pop() ?? '';
  expect(key).toMatch(KEY_FORMAT);
  return { key, stderr: result.stderr };
}

describe.concurrent('the new-user path', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("with the example's database in the folder, the console's command for another schema's server makes a key that server takes", async ({ folder: dir }) => {
    await firstStart(dir, []);
    writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
    const notes = await serve(dir, ['notes.yaml']);
    const hint = await hintOf(notes.base);
    expect(hint).toBe('npx restgraph token create notes.yaml --scopes admin');
    // The page in a browser. (This file uses SQLite files of its own, whichever database the suite
    // runs on: it runs in the SQLite pass only, scripts/database-independent-tests.mjs.)
    if (chromiumAvailable('admin console sign-in hint')) {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${notes.base}/admin`);
        const shown = page.locator('.hint code');
        await shown.waitFor({ timeout: 15_000 });
        expect(await shown.textContent()).toBe(hint);
      } finally {
        await browser.close();
      }
    }
    const { key, stderr } = await runHint(dir, hint);
    expect(stderr).toBe(`Database: sqlite:${join(dir.path, 'data', 'notes.db')}\n`);
    expect((await fetch(`${notes.base}/v1/tokens`, { headers: bearer(key) })).status).toBe(200);

    const revoked = await run(dir, ['token', 'revoke', key.slice(0, 11), 'notes.yaml']);
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toBe(`Database: sqlite:${join(dir.path, 'data', 'notes.db')}\n`);
    await stop(notes.running);
  });

  it('a server on a database named with -d: the command names it for a browser on this machine, and no database for one elsewhere', async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
    const notes = await serve(dir, ['notes.yaml', '-d', 'sqlite:elsewhere.db']);
    const hint = await hintOf(notes.base);
    expect(hint).toBe(`npx restgraph token create notes.yaml --scopes admin -d sqlite:${join(dir.path, 'elsewhere.db')}`);
    const { key, stderr } = await runHint(dir, hint);
    expect(stderr).toBe(`Database: sqlite:${join(dir.path, 'elsewhere.db')}\n`);
    expect((await fetch(`${notes.base}/v1/tokens`, { headers: bearer(key) })).status).toBe(200);

    // Through a proxy, from anywhere: the database is not told to a visitor who has not signed in.
    const remote = await hintOf(notes.base, { 'x-forwarded-for': '203.0.113.9' });
    expect(remote).toBe('npx restgraph token create notes.yaml --scopes admin -d <database URL>');
    await stop(notes.running);
  });
});
