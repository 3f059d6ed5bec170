import { join } from 'node:path';
import { expect } from 'vitest';
import type { TokenView } from '../../src/core/token-operations.js';
import { finish, freePort, itWithFolder, logLines, startCli, waitReady, type CliFolder, type Finished, type Running } from './cli-process.js';

/**
 * What the auth-cli-*.test.ts files share (API keys through the CLI, issue 3): `restgraph token …`
 * and `restgraph serve` as child processes of dist/cli/main.js on the test's own SQLite file.
 */

export const KEY_FORMAT = /^rg_[A-Za-z0-9_-]{43}$/;
export const ADMIN_TOKEN = 'auth-cli-admin-token-0123456789';

/** A token as /v1/tokens shows it. */
export type TokenJson = TokenView;

// Each test has its own folder, database file and processes. Not concurrent: in the whole suite
// five of its servers starting at once missed waitReady's 15 s (and alone it gained nothing at load 8).
export const it = itWithFolder('restgraph-auth-cli-');

/** The test's SQLite file, in its folder. */
export const dbFileOf = (dir: CliFolder): string => join(dir.path, 'auth.db');

// The CLI runs from dist, built once for the whole run by test/global-setup.ts.

function start(dir: CliFolder, args: string[], env: Record<string, string> = {}): Running {
  return startCli(dir.path, args, { DATABASE_URL: `sqlite:${dbFileOf(dir)}`, ...env }, dir.children);
}

export async function run(dir: CliFolder, args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<Finished> {
  return finish(start(dir, args, env), timeoutMs);
}

export function must<T>(value: T | undefined | null, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`missing ${what}`);
  return value;
}

/** `token create …`: checks it succeeded and returns the key from the last stdout line. */
export async function createKey(dir: CliFolder, args: string[]): Promise<{ key: string; stdout: string }> {
  const result = await run(dir, ['token', 'create', ...args]);
  // The database the key was made in is told on stderr; stdout ends with the key alone.
  expect(result.stderr).toMatch(/^Database: \S+\n$/);
  expect(result.code).toBe(0);
  const lines = result.stdout.split('\n');
  expect(lines[lines.length - 1]).toBe('');
  const key = must(lines[lines.length - 2], 'last line');
  expect(key).toMatch(KEY_FORMAT);
  return { key, stdout: result.stdout };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function serve(dir: CliFolder, env: Record<string, string> = {}): Promise<{ running: Running; base: string }> {
  const port = await freePort();
  const running = start(dir, ['serve'], { PORT: String(port), RESTGRAPH_API_KEY_CACHE_SECONDS: '0', ...env });
  await waitReady(running, port);
  return { running, base: `http://127.0.0.1:${port}` };
}

/** SIGTERM, then waits for a clean exit (the log is flushed on the way out). */
export async function stop(running: Running): Promise<void> {
  running.child.kill('SIGTERM');
  const exit = await running.exited;
  expect(exit.code).toBe(0);
}

/** Polls the server's stdout until a log line passes `test`. */
export async function waitForLog(running: Running, test: (line: Record<string, unknown>) => boolean, timeoutMs = 5_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = logLines(running.stdout()).find(test);
    if (found !== undefined) return found;
    await sleep(50);
  }
  throw new Error(`no such log line after ${timeoutMs} ms:\n${running.stdout()}`);
}

export const auth = (key: string): RequestInit => ({ headers: { authorization: `Bearer ${key}` } });

/** GET /v1/tokens over HTTP with an admin credential. */
export async function tokensOverHttp(base: string, credential: string): Promise<TokenJson[]> {
  const response = await fetch(`${base}/v1/tokens`, auth(credential));
  expect(response.status).toBe(200);
  return (await response.json()) as TokenJson[];
}

/** The token commands work on a database `serve` or `migrate` made: make it (the example schema). */
export async function migrate(dir: CliFolder): Promise<void> {
  const result = await run(dir, ['migrate']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
}
