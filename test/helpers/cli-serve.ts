import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CLI, finish, freePort, startCli, waitReady, type CliFolder, type Finished, type Running } from './cli-process.js';

/**
 * What the `restgraph` CLI test files (cli-*.test.ts) share: the CLI run in a test's folder, `serve`
 * with an admin token on a fresh port, schema files, and a look into the SQLite files it wrote.
 */

/** The repository root (the CLI runs from its dist, built once for the whole run by test/global-setup.ts). */
export const ROOT = resolve(dirname(CLI), '..', '..');

export function start(dir: CliFolder, args: string[], env: Record<string, string> = {}): Running {
  return startCli(dir.path, args, env, dir.children);
}

export async function run(dir: CliFolder, args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Finished> {
  return finish(start(dir, args, env), timeoutMs);
}

/** The admin token `serve` gets in these tests; `fetch` below sends it unless told otherwise. */
export const ADMIN_TOKEN = 'cli-test-admin-token-0123456789';

/** fetch, as the admin: sends the admin token unless the request names its own authorization. */
export function fetch(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has('authorization')) headers.set('authorization', `Bearer ${ADMIN_TOKEN}`);
  return globalThis.fetch(url, { ...init, headers });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `restgraph serve` on a fresh port and the test's database; resolves once /readyz is 200. */
export async function serve(dir: CliFolder, args: string[], env: Record<string, string> = {}): Promise<{ running: Running; port: number; base: string }> {
  const port = await freePort();
  const running = start(dir, ['serve', ...args], { DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}`, PORT: String(port), RESTGRAPH_ADMIN_TOKEN: ADMIN_TOKEN, ...env });
  await waitReady(running, port);
  return { running, port, base: `http://127.0.0.1:${port}` };
}

export function writeSchema(dir: CliFolder, text: string, name = 'schema.yaml'): string {
  const file = join(dir.path, name);
  writeFileSync(file, text);
  return file;
}

function query<T>(file: string, sql: string): T[] {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

export const tableNames = (file: string): string[] =>
  query<{ name: string }>(file, "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name").map((r) => r.name);
export const columnNames = (file: string, table: string): string[] => query<{ name: string }>(file, `pragma table_info("${table}")`).map((r) => r.name);
export const migrationCount = (file: string): number => query<{ n: number }>(file, 'select count(*) as n from "_restgraph_migrations"')[0]?.n ?? -1;
