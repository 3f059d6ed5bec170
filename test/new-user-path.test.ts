import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { createTestDatabase } from './helpers/test-database.js';
import { finish, freePort, itWithFolder, logLines, startCli, waitReady, type CliFolder, type Finished, type Running } from './helpers/cli-process.js';

/**
 * What a new user does in the first ten minutes, with the CLI as a child process of dist/ in an
 * empty folder and no settings at all (no DATABASE_URL, no RESTGRAPH_SCHEMA): serve the example,
 * then a schema of their own in the same folder, make a token for each and use both; a port that
 * is taken; a restart. Every database is a real SQLite file the CLI chose itself.
 */

const NOTES_SCHEMA = `
resources:
  notes:
    access: { read: [notes:read, notes:write], write: [notes:write] }
    fields:
      text: { type: string, required: true }
`;

const KEY_FORMAT = /^rg_[A-Za-z0-9_-]{43}$/;

// Each test has its own empty folder and processes: the tests run concurrently.
const it = itWithFolder('restgraph-new-user-');

function start(dir: CliFolder, args: string[], env: Record<string, string> = {}): Running {
  return startCli(dir.path, args, env, dir.children);
}

async function run(dir: CliFolder, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  return finish(start(dir, args, env));
}

async function serve(dir: CliFolder, args: string[]): Promise<{ running: Running; base: string; port: number }> {
  const port = await freePort();
  const running = start(dir, ['serve', ...args, '-p', String(port)]);
  await waitReady(running, port);
  return { running, base: `http://127.0.0.1:${port}`, port };
}

async function stop(running: Running): Promise<string> {
  running.child.kill('SIGTERM');
  expect((await running.exited).code).toBe(0);
  return running.stdout();
}

/** The log messages a server wrote. */
function messages(stdout: string): string[] {
  return logLines(stdout).map((l) => String(l.msg));
}

function adminKeyIn(stdout: string): string | undefined {
  const line = logLines(stdout).find((l) => 'adminKey' in l);
  return line === undefined ? undefined : String(line.adminKey);
}

/** `token create …`: the key on the last line of stdout. */
async function createToken(dir: CliFolder, args: string[]): Promise<string> {
  const result = await run(dir, ['token', 'create', ...args]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const key = result.stdout.trimEnd().split('\n').pop() ?? '';
  expect(key).toMatch(KEY_FORMAT);
  return key;
}

function tables(file: string): string[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return (db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like '\\_%' escape '\\'").all() as { name: string }[]).map((r) => r.name).sort();
  } finally {
    db.close();
  }
}

const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/** A first start of `serve <args>`, stopped: the server, the admin key it printed, and its hint. */
async function firstStart(dir: CliFolder, args: string[]): Promise<{ started: Awaited<ReturnType<typeof serve>>; admin: string; hint: string }> {
  const started = await serve(dir, args);
  const out = await stop(started.running);
  const admin = adminKeyIn(out);
  expect(admin).toMatch(KEY_FORMAT);
  return { started, admin: admin ?? '', hint: messages(out).find((m) => m.startsWith('Use it as')) ?? '' };
}

describe.concurrent('the new-user path', () => {
  it('serve the example, then another schema in the same folder; a token for each; both work', async ({ folder: dir }) => {
    const { started: example, admin: exampleAdmin, hint: exampleHint } = await firstStart(dir, []);
    // The hint fits the server: its real address, a resource of the example that needs a token.
    expect(exampleHint).toContain(`${example.base}/users`);
    expect(exampleHint).toContain('npx restgraph token create --scopes users:read,users:write');
    expect(existsSync(join(dir.path, 'data', 'example-schema.db'))).toBe(true);

    writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
    const { started: notes, admin: notesAdmin, hint: notesHint } = await firstStart(dir, ['notes.yaml']);
    expect(notesHint).toContain(`${notes.base}/notes`);
    expect(notesHint).toContain('npx restgraph token create notes.yaml --scopes notes:read,notes:write');
    expect(notesHint).not.toContain('users');
    expect(readdirSync(join(dir.path, 'data')).filter((f) => f.endsWith('.db')).sort()).toEqual(['example-schema.db', 'notes.db']);
    expect(tables(join(dir.path, 'data', 'notes.db'))).toEqual(['notes']);

    // A token for each, as the hints print them.
    const usersKey = await createToken(dir, ['--scopes', 'users:read,users:write']);
    const notesKey = await createToken(dir, ['notes.yaml', '--scopes', 'notes:read,notes:write']);
    // Token commands change no schema: the notes database still has only notes.
    expect(tables(join(dir.path, 'data', 'notes.db'))).toEqual(['notes']);

    const [exampleAgain, notesAgain] = await Promise.all([serve(dir, []), serve(dir, ['notes.yaml'])]);
    const posted = await fetch(`${notesAgain.base}/notes`, { method: 'POST', headers: { ...bearer(notesKey), 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hello' }) });
    expect(posted.status).toBe(201);
    expect((await fetch(`${notesAgain.base}/notes`, { headers: bearer(notesKey) })).status).toBe(200);
    expect((await fetch(`${exampleAgain.base}/users`, { headers: bearer(usersKey) })).status).toBe(200);
    // Each key belongs to its own database.
    expect((await fetch(`${notesAgain.base}/notes`, { headers: bearer(usersKey) })).status).toBe(401);
    expect((await fetch(`${exampleAgain.base}/users`, { headers: bearer(notesKey) })).status).toBe(401);
    // And the first admin keys still work, each on its own server.
    expect((await fetch(`${exampleAgain.base}/v1/tokens`, { headers: bearer(exampleAdmin) })).status).toBe(200);
    expect((await fetch(`${notesAgain.base}/v1/tokens`, { headers: bearer(notesAdmin) })).status).toBe(200);
    await Promise.all([stop(exampleAgain.running), stop(notesAgain.running)]);
  });

  it('a busy port: one line with a code and the fix, nothing created; the next start on a free port prints the key', async ({ folder: dir, onTestFinished }) => {
    const busy = createServer();
    onTestFinished(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const port = await new Promise<number>((resolve) => busy.listen(0, '127.0.0.1', () => resolve((busy.address() as { port: number }).port)));
    const refused = await run(dir, ['serve', '-p', String(port)]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    const lines = refused.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`127.0.0.1:${port}`);
    expect(lines[0]).toMatch(/\[RG_[A-Z_]+\]$/);
    expect(lines[0]).toContain('-p');
    expect(lines[0]).toContain('PORT');
    expect(existsSync(join(dir.path, 'data'))).toBe(false);

    const next = await serve(dir, []);
    const out = await stop(next.running);
    expect(adminKeyIn(out)).toMatch(KEY_FORMAT);
  });

  it('a restart makes no new key; a database without an admin key says how to make one', async ({ folder: dir }) => {
    const first = await serve(dir, []);
    const admin = adminKeyIn(await stop(first.running)) ?? '';
    expect(admin).toMatch(KEY_FORMAT);

    const second = await serve(dir, []);
    const secondOut = await stop(second.running);
    expect(secondOut).not.toContain(admin);
    expect(adminKeyIn(secondOut)).toBeUndefined();
    expect(messages(secondOut)).toContain(`restgraph listening on ${second.base}`);

    // Without an admin-capable key, every start says how to make one.
    expect((await run(dir, ['token', 'revoke', admin.slice(0, 11)])).code).toBe(0);
    const third = await serve(dir, []);
    const thirdOut = await stop(third.running);
    expect(adminKeyIn(thirdOut)).toBeUndefined();
    expect(messages(thirdOut).join('\n')).toContain('npx restgraph token create --scopes admin');
  });

  it('token commands open the database of the schema they are given and never migrate it', async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
    const migrated = await run(dir, ['migrate', 'notes.yaml', '-d', 'sqlite:own.db']);
    expect(migrated.code).toBe(0);
    const listed = await run(dir, ['token', 'list', '-d', 'sqlite:own.db']);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(tables(join(dir.path, 'own.db'))).toEqual(['notes']);
  });

  it('token commands create no database: a mistyped path is one line, and nothing appears', async ({ folder: dir }) => {
    const result = await run(dir, ['token', 'list', '-d', `sqlite:${join(dir.path, 'typo', 'dir', 'x.db')}`]);
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(join(dir.path, 'typo', 'dir', 'x.db'));
    expect(existsSync(join(dir.path, 'typo'))).toBe(false);

    const none = await run(dir, ['token', 'create', '--scopes', 'admin']);
    expect(none.code).toBe(1);
    expect(existsSync(join(dir.path, 'data'))).toBe(false);
    expect(none.stderr).toContain('npx restgraph serve');
  });

  it('with only another schema served, a token command without a schema names the command to use', async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
    expect((await run(dir, ['migrate', 'notes.yaml'])).code).toBe(0);
    const result = await run(dir, ['token', 'create', '--scopes', 'admin']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('data/notes.db');
    expect(result.stderr).toContain('npx restgraph token create --scopes admin -d sqlite:./data/notes.db');
    expect(readdirSync(join(dir.path, 'data')).filter((f) => f.endsWith('.db'))).toEqual(['notes.db']);
  });

  it("token commands on the suite's database (SQLite or PostgreSQL): refused before a schema is applied, then working without changing it", async ({ folder: dir }) => {
    const db = await createTestDatabase(dir.path, 'tokens');
    try {
      // An empty SQLite file exists but holds no schema; an empty PostgreSQL schema likewise.
      if (db.file !== undefined) writeFileSync(db.file, '');
      const refused = await run(dir, ['token', 'list', '-d', db.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('holds no restgraph schema');
      expect(refused.stderr).toContain('[RG_DATABASE_NOT_FOUND]');
      expect((await db.tables()).filter((t) => !t.startsWith('_'))).toEqual([]);

      writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
      expect((await run(dir, ['migrate', 'notes.yaml', '-d', db.url])).code).toBe(0);
      const before = await db.tables();
      await createToken(dir, ['notes.yaml', '--scopes', 'notes:read', '-d', db.url]);
      const listed = await run(dir, ['token', 'list', '--json', '-d', db.url]);
      expect(listed.code).toBe(0);
      expect((JSON.parse(listed.stdout) as { scopes: string[] }[]).map((t) => t.scopes)).toEqual([['notes:read']]);
      expect(await db.tables()).toEqual(before);
    } finally {
      await db.drop();
    }
  });

  it('upgrading: the example goes on using ./data/restgraph.db of earlier releases, saying so; another schema gets its own file, with a word about the old one', async ({ folder: dir }) => {
    expect((await run(dir, ['migrate', '-d', 'sqlite:./data/restgraph.db'])).code).toBe(0);
    const example = await serve(dir, []);
    const out = await stop(example.running);
    const notice = messages(out).find((m) => m.startsWith('Using ./data/restgraph.db')) ?? '';
    expect(notice).toContain('mv ./data/restgraph.db ./data/example-schema.db');
    expect(logLines(out).find((l) => l.msg === `restgraph listening on ${example.base}`)?.database).toBe(`sqlite:${join(dir.path, 'data', 'restgraph.db')}`);
    // The hint names the database: it is not the example's own.
    expect(messages(out).join('\n')).toContain('--scopes users:read,users:write -d sqlite:');
    expect(existsSync(join(dir.path, 'data', 'example-schema.db'))).toBe(false);

    writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
    const notes = await serve(dir, ['notes.yaml']);
    const notesOut = await stop(notes.running);
    expect(messages(notesOut).join('\n')).toContain('npx restgraph serve notes.yaml -d sqlite:./data/restgraph.db');
    expect(existsSync(join(dir.path, 'data', 'notes.db'))).toBe(true);
  });
});
