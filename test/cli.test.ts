import { copyFileSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { CLI, finish, freePort, itWithFolder, logLines, startCli, startProcess, waitReady, type CliFolder, type Finished, type Running } from './helpers/cli-process.js';

/**
 * The `restgraph` CLI as operators run it: a child process of dist/cli/main.js, on real temp
 * SQLite files and real sockets on 127.0.0.1.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const BASE_SCHEMA = `
resources:
  users:
    fields:
      name: { type: string, required: true }
      bio:  { type: string }
`;
const WITHOUT_BIO = `
resources:
  users:
    fields:
      name: { type: string, required: true }
`;

// Each test has its own folder (and processes): the groups below run their tests concurrently,
// most of a test being a child process starting or stopping.
const it = itWithFolder('restgraph-cli-');

// The CLI runs from dist, built once for the whole run by test/global-setup.ts.
const ROOT = resolve(dirname(CLI), '..', '..');

function start(dir: CliFolder, args: string[], env: Record<string, string> = {}): Running {
  return startCli(dir.path, args, env, dir.children);
}

async function run(dir: CliFolder, args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<Finished> {
  return finish(start(dir, args, env), timeoutMs);
}

/** The admin token `serve` gets in these tests; `fetch` below sends it unless told otherwise. */
const ADMIN_TOKEN = 'cli-test-admin-token-0123456789';

/** fetch, as the admin: sends the admin token unless the request names its own authorization. */
function fetch(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has('authorization')) headers.set('authorization', `Bearer ${ADMIN_TOKEN}`);
  return globalThis.fetch(url, { ...init, headers });
}





const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `restgraph serve` on a fresh port and the test's database; resolves once /readyz is 200. */
async function serve(dir: CliFolder, args: string[], env: Record<string, string> = {}): Promise<{ running: Running; port: number; base: string }> {
  const port = await freePort();
  const running = start(dir, ['serve', ...args], { DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}`, PORT: String(port), RESTGRAPH_ADMIN_TOKEN: ADMIN_TOKEN, ...env });
  await waitReady(running, port);
  return { running, port, base: `http://127.0.0.1:${port}` };
}


function writeSchema(dir: CliFolder, text: string, name = 'schema.yaml'): string {
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

const tableNames = (file: string): string[] =>
  query<{ name: string }>(file, "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name").map((r) => r.name);
const columnNames = (file: string, table: string): string[] => query<{ name: string }>(file, `pragma table_info("${table}")`).map((r) => r.name);
const migrationCount = (file: string): number => query<{ n: number }>(file, 'select count(*) as n from "_restgraph_migrations"')[0]?.n ?? -1;

describe.concurrent('--help', () => {
  it('restgraph --help lists the commands and exits 0', async ({ folder: dir }) => {
    const result = await run(dir, ['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: restgraph [options] [command]');
    expect(result.stdout).toMatch(/^\s+serve \[options\] \[schema-file\]/m);
    expect(result.stdout).toMatch(/^\s+migrate \[options\] \[schema-file\]/m);
    expect(result.stderr).toBe('');
  });

  it('restgraph serve --help shows its usage, flags and environment, and exits 0', async ({ folder: dir }) => {
    const result = await run(dir, ['serve', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: restgraph serve [options] [schema-file]');
    for (const flag of ['-p, --port <port>', '-H, --host <host>', '-d, --database-url <url>']) expect(result.stdout).toContain(flag);
    expect(result.stdout).toContain('Environment: PORT, HOST, DATABASE_URL, RESTGRAPH_SCHEMA');
  });

  it('restgraph migrate --help shows its usage and flags, and exits 0', async ({ folder: dir }) => {
    const result = await run(dir, ['migrate', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: restgraph migrate [options] [schema-file]');
    for (const flag of ['--dry-run', '--allow-destructive', '-d, --database-url <url>']) expect(result.stdout).toContain(flag);
  });

  it('restgraph help serve is the same as serve --help', async ({ folder: dir }) => {
    const result = await run(dir, ['help', 'serve']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: restgraph serve [options] [schema-file]');
  });

  it('--version prints the package version', async ({ folder: dir }) => {
    const result = await run(dir, ['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('0.1.0');
  });

  it('an unknown command exits 1 with a hint', async ({ folder: dir }) => {
    const result = await run(dir, ['server']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("unknown command 'server'");
  });

  it('a bad --port exits 1 naming the flag', async ({ folder: dir }) => {
    const result = await run(dir, ['serve', '--port', 'abc']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('must be a port number from 0 to 65535');
    expect(result.stderr).toContain('--port');
  });
});

describe.concurrent('serve', () => {
  it('serves the example on a real socket, logs one JSON line per request with its request id, and echoes X-Request-Id', async ({ folder: dir }) => {
    const { running, base } = await serve(dir, []);

    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    const created = await fetch(`${base}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'client-req.1' },
      body: JSON.stringify({ name: 'Alice' }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBe('client-req.1');
    expect(await created.json()).toMatchObject({ id: 1, name: 'Alice' });

    const listed = await fetch(`${base}/v1/users`);
    expect(listed.status).toBe(200);
    const generated = listed.headers.get('x-request-id') ?? '';
    expect(generated).toMatch(UUID);

    const invalid = await fetch(`${base}/users/1`, { headers: { 'x-request-id': 'has spaces and ünïcode' } });
    expect(invalid.status).toBe(200);
    const replaced = invalid.headers.get('x-request-id') ?? '';
    expect(replaced).toMatch(UUID);
    expect(replaced).not.toBe(generated);

    // A URL the router cannot even decode is answered (400) and logged like any other request.
    const malformed = await fetch(`${base}/users/%zz`);
    expect(malformed.status).toBe(400);
    const malformedId = malformed.headers.get('x-request-id') ?? '';
    expect(malformedId).toMatch(UUID);

    running.child.kill('SIGTERM');
    const exit = await running.exited;
    expect(exit).toEqual({ code: 0, signal: null });

    const lines = logLines(running.stdout());
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.filter((l) => l.url === '/users/%zz')).toEqual([expect.objectContaining({ requestId: malformedId, method: 'GET', statusCode: 400, durationMs: expect.any(Number) as number })]);
    const byUrl = (method: string, url: string) => requests.filter((l) => l.method === method && l.url === url);
    expect(byUrl('POST', '/users')).toEqual([expect.objectContaining({ requestId: 'client-req.1', statusCode: 201, durationMs: expect.any(Number) as number })]);
    expect(byUrl('GET', '/v1/users')).toEqual([expect.objectContaining({ requestId: generated, statusCode: 200 })]);
    expect(byUrl('GET', '/users/1')).toEqual([expect.objectContaining({ requestId: replaced, statusCode: 200 })]);
    expect(byUrl('GET', '/healthz')).toHaveLength(1);
    // Every request line has its own id.
    const ids = requests.map((l) => l.requestId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const line of lines) expect(line).toMatchObject({ level: expect.any(Number) as number, time: expect.any(String) as string });

    expect(lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('restgraph listening on http://127.0.0.1:'))).toMatchObject({
      resources: ['users', 'posts', 'products', 'orders'],
      versions: ['v1'],
      database: `sqlite:${join(dir.path, 'x.db')}`,
    });
    expect(lines.map((l) => l.msg)).toContain('stopped');
    expect(lines.at(-1)?.msg).toBe('stopped');
    expect(running.stderr()).toBe('');
  });

  it('writes each request log line promptly, not only at shutdown', async ({ folder: dir }) => {
    const { running, base } = await serve(dir, []);
    const response = await fetch(`${base}/users`, { headers: { 'x-request-id': 'prompt-1' } });
    expect(response.status).toBe(200);
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline && !running.stdout().includes('"prompt-1"')) await sleep(100);
    // An operator tailing the log of a quiet server must see the request (and the start-up line).
    const lines = logLines(running.stdout());
    expect(lines.filter((l) => l.requestId === 'prompt-1')).toHaveLength(1);
    expect(lines.some((l) => typeof l.msg === 'string' && l.msg.startsWith('restgraph listening on'))).toBe(true);
  });

  it('SIGTERM on an idle server exits 0 and logs "stopped"', async ({ folder: dir }) => {
    const { running } = await serve(dir, []);
    running.child.kill('SIGTERM');
    const exit = await running.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    const messages = logLines(running.stdout()).map((l) => l.msg);
    expect(messages).toContain('shutting down: draining in-flight requests');
    expect(messages.at(-1)).toBe('stopped');
  });

  it('SIGTERM lets a request in flight finish, then exits 0', async ({ folder: dir }) => {
    const { running, port } = await serve(dir, []);
    const body = JSON.stringify({ name: 'Slow upload' });
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    const ended = new Promise<void>((resolveEnd) => socket.once('close', () => resolveEnd()));
    // Headers and half the body: the request is in flight until the rest arrives.
    socket.write(
      `POST /users HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: slow-1\r\n\r\n${body.slice(0, 6)}`,
    );
    await sleep(300);
    running.child.kill('SIGTERM');
    await sleep(500);
    expect(running.child.exitCode).toBeNull();
    socket.write(body.slice(6));
    await Promise.race([ended, sleep(3_000)]);
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
    expect(answer).toContain('"name":"Slow upload"');
    // The client keeps the connection alive (HTTP/1.1 default), as load balancers do: the server
    // must close it after the drained response rather than wait for the drain timeout.
    expect(socket.destroyed || socket.readableEnded).toBe(true);
    expect(await running.exited).toEqual({ code: 0, signal: null });
    const lines = logLines(running.stdout());
    expect(lines.find((l) => l.requestId === 'slow-1')).toMatchObject({ method: 'POST', statusCode: 201 });
    expect(lines.at(-1)?.msg).toBe('stopped');
  });

  it('SIGINT stops it cleanly too', async ({ folder: dir }) => {
    const { running } = await serve(dir, []);
    running.child.kill('SIGINT');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    expect(logLines(running.stdout()).map((l) => l.msg)).toContain('stopped');
  });

  it('`npm start` hands SIGTERM to the server (as `docker stop` does to its first process): it drains, exits 0 and frees the port', async ({ folder: dir }) => {
    // The project's own package.json and start script, in a directory of its own. test/global-setup.ts
    // has built dist/ already, so the start script finds it up to date and does not rebuild it (which
    // would rewrite the files other test files' servers are loading).
    const project = join(dir.path, 'project');
    mkdirSync(project);
    copyFileSync(join(ROOT, 'package.json'), join(project, 'package.json'));
    for (const entry of ['dist', 'node_modules', 'examples', 'schema', 'scripts']) symlinkSync(join(ROOT, entry), join(project, entry));
    const port = await freePort();
    const npm = startProcess('npm', ['start'], project, { DATABASE_URL: `sqlite:${join(dir.path, 'npm.db')}`, PORT: String(port), RESTGRAPH_ADMIN_TOKEN: ADMIN_TOKEN }, dir.children);
    await waitReady(npm, port);
    npm.child.kill('SIGTERM');
    // (A server orphaned by its shell keeps npm's output pipe open: npm's exit would never be seen.)
    expect(await Promise.race([npm.exited, sleep(10_000).then(() => 'still running after 10 s')])).toEqual({ code: 0, signal: null });
    // npm's own lines ("> restgraph@… start") come first; the server's are JSON.
    const messages = logLines(npm.stdout().split('\n').filter((line) => line.startsWith('{')).join('\n')).map((l) => l.msg);
    expect(messages).toContain('shutting down: draining in-flight requests');
    expect(messages.at(-1)).toBe('stopped');
    // Nothing is left listening (a server orphaned by its shell would still answer).
    await expect(globalThis.fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  }, 30_000);

  it('takes the schema file argument, and flags over environment', async ({ folder: dir }) => {
    const schema = writeSchema(dir, 'resources:\n  notes:\n    fields:\n      text: { type: string }\n');
    const flagPort = await freePort();
    const dbFile = join(dir.path, 'flags.db');
    const running = start(dir, ['serve', schema, '-p', String(flagPort), '-H', '127.0.0.1', '-d', `sqlite:${dbFile}`], {
      PORT: String(await freePort()),
      DATABASE_URL: `sqlite:${join(dir.path, 'env.db')}`,
      RESTGRAPH_ADMIN_TOKEN: ADMIN_TOKEN,
    });
    await waitReady(running, flagPort);
    const index = await fetch(`http://127.0.0.1:${flagPort}/`);
    expect(await index.json()).toEqual({ name: 'restgraph', versions: ['v1'], latestVersion: 'v1', resources: { notes: '/notes' } });
    expect((await fetch(`http://127.0.0.1:${flagPort}/users`)).status).toBe(404);
    expect(tableNames(dbFile)).toContain('notes');
  });

  it('takes the schema from RESTGRAPH_SCHEMA', async ({ folder: dir }) => {
    const schema = writeSchema(dir, 'resources:\n  notes:\n    fields:\n      text: { type: string }\n');
    const { base } = await serve(dir, [], { RESTGRAPH_SCHEMA: schema });
    expect((await fetch(`${base}/notes`)).status).toBe(200);
    expect((await fetch(`${base}/users`)).status).toBe(404);
  });

  it('a bad schema file exits 1 with file, path, line and reason on stderr', async ({ folder: dir }) => {
    const schema = writeSchema(dir, 'resources:\n  users:\n    fields:\n      name: { type: text }\n', 'broken.yaml');
    const result = await run(dir, ['serve', schema], { DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}`, PORT: String(await freePort()) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`restgraph: Invalid schema ${schema}:`);
    expect(result.stderr).toMatch(new RegExp(`${schema.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4:\\d+ at resources\\.users\\.fields\\.name\\.type: must be one of "string"`));
    expect(result.stderr).toContain('[RG_SCHEMA_INVALID]');
    expect(result.stdout).not.toContain('listening');
  });

  it('a missing schema file exits 1 naming it', async ({ folder: dir }) => {
    const missing = join(dir.path, 'nope.yaml');
    const result = await run(dir, ['serve', missing], { DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(missing);
    expect(result.stderr).toContain('cannot read the file: ENOENT');
  });

  const badEnv: [string, string, string][] = [
    ['PORT', 'abc', 'must be an integer from 0 to 65535, not "abc"'],
    ['PORT', '70000', 'must be an integer from 0 to 65535'],
    ['LOG_LEVEL', 'loud', 'must be one of fatal, error, warn, info, debug, trace, silent'],
    ['RESTGRAPH_CORS_ORIGINS', 'nonsense', '"nonsense" is not an origin like https://app.example.com'],
    ['RESTGRAPH_BODY_LIMIT', '-5', 'must be an integer'],
    ['RESTGRAPH_TRUST_PROXY', 'maybe', 'must be true or false'],
    ['DATABASE_URL', 'mysql://db/app', 'unsupported database URL scheme'],
    ['DATABASE_URL', 'postgres://postgres@127.0.0.1:1/app', 'cannot reach the database postgres://127.0.0.1:1/app: connect ECONNREFUSED 127.0.0.1:1'],
    ['DATABASE_URL', 'postgres://127.0.0.1:5432', 'the postgres:// URL names no database'],
    ['RESTGRAPH_RATE_LIMIT', '100 per minute', 'must be "<count>/<window>", like 100/1m'],
    ['RESTGRAPH_GRAPHQL_RATE_LIMIT', '0/1m', 'must be "<count>/<window>"'],
    ['RESTGRAPH_RATE_LIMIT_STORE', 'disk', 'must be memory, database or redis, not "disk"'],
    ['REDIS_URL', 'http://127.0.0.1:6379', 'must be a redis:// or rediss:// URL'],
  ];
  for (const [name, value, reason] of badEnv) {
    it(`${name}=${value} exits 1 naming the variable`, async ({ folder: dir }) => {
      const env: Record<string, string> = { DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}`, PORT: String(await freePort()) };
      env[name] = value;
      const result = await run(dir, ['serve'], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`restgraph: Invalid configuration ${name}: ${reason}`);
      expect(result.stderr).toContain('[RG_CONFIG_INVALID]');
      expect(result.stdout).not.toContain('listening');
    });
  }

  it('a port already in use exits 1 with one line naming the address and the fix, before creating the database', async ({ folder: dir }) => {
    const first = await serve(dir, []);
    const other = join(dir.path, 'other.db');
    const result = await run(dir, ['serve'], { DATABASE_URL: `sqlite:${other}`, PORT: String(first.port) });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `restgraph: Cannot listen on 127.0.0.1:${first.port}: another program uses port ${first.port}. Choose another port with -p (or PORT), e.g. npx restgraph serve -p ${first.port + 1} [RG_PORT_UNAVAILABLE]\n`,
    );
    expect(existsSync(other)).toBe(false);
  });
});

describe.concurrent('migrate', () => {
  it('--dry-run prints the plan and the SQL, and applies nothing', async ({ folder: dir }) => {
    const dbFile = join(dir.path, 'x.db');
    const result = await run(dir, ['migrate', '--dry-run', '-d', `sqlite:${dbFile}`]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Database: sqlite:${dbFile}`);
    expect(result.stdout).toContain('4 changes:');
    for (const name of ['users', 'posts', 'products', 'orders']) expect(result.stdout).toContain(`  + create resource ${name}\n`);
    expect(result.stdout).toContain('Dry run: nothing applied.');
    expect(result.stdout).toContain('create table "users" (');
    expect(tableNames(dbFile)).not.toContain('users');
    expect(migrationCount(dbFile)).toBe(0);
  });

  it('applies the plan, then finds nothing to do', async ({ folder: dir }) => {
    const dbFile = join(dir.path, 'x.db');
    const schema = writeSchema(dir, BASE_SCHEMA);
    const first = await run(dir, ['migrate', schema], { DATABASE_URL: `sqlite:${dbFile}` });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Schema:   ${schema}`);
    expect(first.stdout).toContain('1 change:\n  + create resource users\n');
    expect(first.stdout).toContain('Applied.');
    expect(tableNames(dbFile)).toContain('users');
    expect(columnNames(dbFile, 'users')).toEqual(['id', 'name', 'bio', 'createdAt', 'updatedAt']);
    expect(migrationCount(dbFile)).toBe(1);

    const second = await run(dir, ['migrate', schema], { DATABASE_URL: `sqlite:${dbFile}` });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('The database already matches the schema.');
    expect(second.stdout).toContain('Nothing to apply.');
    expect(migrationCount(dbFile)).toBe(1);
  });

  it('a bad schema exits 1 naming file, path and reason', async ({ folder: dir }) => {
    const schema = writeSchema(dir, 'resources:\n  graphql: { singular: gql }\n', 'reserved.yaml');
    const result = await run(dir, ['migrate', schema, '-d', `sqlite:${join(dir.path, 'x.db')}`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${schema}:2:`);
    expect(result.stderr).toContain('at resources.graphql: "graphql" is reserved by restgraph');
  });

  it('a destructive change stops serve until migrate --allow-destructive applies it', async ({ folder: dir }) => {
    const dbFile = join(dir.path, 'x.db');
    const env = { DATABASE_URL: `sqlite:${dbFile}` };
    const base = writeSchema(dir, BASE_SCHEMA, 'v1.yaml');
    expect((await run(dir, ['migrate', base], env)).code).toBe(0);
    const first = await serve(dir, [base], env);
    const created = await fetch(`${first.base}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Ann', bio: 'gone soon' }) });
    expect(created.status).toBe(201);
    first.running.child.kill('SIGTERM');
    expect((await first.running.exited).code).toBe(0);

    const v2 = writeSchema(dir, WITHOUT_BIO, 'v2.yaml');
    const refused = await run(dir, ['serve', v2], { ...env, PORT: String(await freePort()) });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`restgraph: The schema ${v2} makes destructive changes to the database sqlite:${dbFile}: [RG_MIGRATION_DESTRUCTIVE]\n`);
    expect(refused.stderr).toContain('drop field users.bio and every value stored in it');
    expect(refused.stderr).toContain('this DELETES the data listed above');
    expect(refused.stderr).toContain(`\n  npx restgraph migrate ${v2} -d sqlite:${dbFile} --dry-run\n  npx restgraph migrate ${v2} -d sqlite:${dbFile} --allow-destructive\n`);
    expect(refused.stderr).not.toContain('Refusing');
    expect(columnNames(dbFile, 'users')).toContain('bio');

    const dry = await run(dir, ['migrate', v2, '--dry-run'], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('  ! drop field users.bio and every value stored in it  (destructive)');
    expect(dry.stdout).toContain('alter table "users" drop column "bio";');
    expect(columnNames(dbFile, 'users')).toContain('bio');

    const plain = await run(dir, ['migrate', v2], env);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('drop field users.bio');
    expect(plain.stderr).toContain(`npx restgraph migrate ${v2} -d sqlite:${dbFile} --allow-destructive\n`);
    expect(plain.stderr).not.toMatch(/Refusing to start/i);
    expect(columnNames(dbFile, 'users')).toContain('bio');
    expect(migrationCount(dbFile)).toBe(1);

    const allowed = await run(dir, ['migrate', v2, '--allow-destructive'], env);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain('Applied.');
    expect(columnNames(dbFile, 'users')).toEqual(['id', 'name', 'createdAt', 'updatedAt']);
    expect(migrationCount(dbFile)).toBe(2);

    const second = await serve(dir, [v2], env);
    const ann = await fetch(`${second.base}/users/1`);
    expect(ann.status).toBe(200);
    const body = (await ann.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ id: 1, name: 'Ann' });
    expect(body).not.toHaveProperty('bio');
  });
});
