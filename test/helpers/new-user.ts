import { expect } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { finish, freePort, itWithFolder, logLines, startCli, waitReady, type CliFolder, type Finished, type Running } from './cli-process.js';

/**
 * What the new-user-path-*.test.ts files share: the CLI as a child process of dist/ in an empty
 * folder with no settings at all (no DATABASE_URL, no RESTGRAPH_SCHEMA), so that every database
 * is a real SQLite file the CLI chose itself.
 */

export const NOTES_SCHEMA = `
resources:
  notes:
    access: { read: [notes:read, notes:write], write: [notes:write] }
    fields:
      text: { type: string, required: true }
`;

export const KEY_FORMAT = /^rg_[A-Za-z0-9_-]{43}$/;

// Each test has its own empty folder and processes: the tests run concurrently.
export const it = itWithFolder('restgraph-new-user-');

function start(dir: CliFolder, args: string[], env: Record<string, string> = {}): Running {
  return startCli(dir.path, args, env, dir.children);
}

export async function run(dir: CliFolder, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  return finish(start(dir, args, env));
}

export async function serve(dir: CliFolder, args: string[]): Promise<{ running: Running; base: string; port: number }> {
  const port = await freePort();
  const running = start(dir, ['serve', ...args, '-p', String(port)]);
  await waitReady(running, port);
  return { running, base: `http://127.0.0.1:${port}`, port };
}

export async function stop(running: Running): Promise<string> {
  running.child.kill('SIGTERM');
  expect((await running.exited).code).toBe(0);
  return running.stdout();
}

/** The log messages a server wrote. */
export function messages(stdout: string): string[] {
  return logLines(stdout).map((l) => String(l.msg));
}

export function adminKeyIn(stdout: string): string | undefined {
  const line = logLines(stdout).find((l) => 'adminKey' in l);
  return line === undefined ? undefined : String(line.adminKey);
}

/** `token create …`: the key on the last line of stdout. */
export async function createToken(dir: CliFolder, args: string[]): Promise<string> {
  const result = await run(dir, ['token', 'create', ...args]);
  // The database the key was made in is told on stderr; stdout ends with the key alone.
  expect(result.stderr).toMatch(/^Database: \S+\n$/);
  expect(result.code).toBe(0);
  const key = result.stdout.trimEnd().split('\n').pop() ?? '';
  expect(key).toMatch(KEY_FORMAT);
  return key;
}

export function tables(file: string): string[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return (db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like '\\_%' escape '\\'").all() as { name: string }[]).map((r) => r.name).sort();
  } finally {
    db.close();
  }
}

export const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/** A first start of `serve <args>`, stopped: the server, the admin key it printed, and its hint. */
export async function firstStart(dir: CliFolder, args: string[]): Promise<{ started: Awaited<ReturnType<typeof serve>>; admin: string; hint: string }> {
  const started = await serve(dir, args);
  const out = await stop(started.running);
  const admin = adminKeyIn(out);
  expect(admin).toMatch(KEY_FORMAT);
  return { started, admin: admin ?? '', hint: messages(out).find((m) => m.startsWith('Use it as')) ?? '' };
}

