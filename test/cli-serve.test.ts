import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, freePort, itWithFolder, logLines, waitReady } from './helpers/cli-process.js';
import { ADMIN_TOKEN, fetch, serve, sleep, start, tableNames, writeSchema } from './helpers/cli-serve.js';
import { PACKAGE_VERSION } from '../src/package-version.js';

/**
 * The `restgraph` CLI as operators run it: a child process of dist/cli/main.js, on real temp
 * SQLite files and real sockets on 127.0.0.1.
 * `serve`: requests and their log lines, and where it takes its schema from.
 * (The other cli-*.test.ts files: cli-help, cli-serve-signals, cli-serve-errors, cli-migrate.)
 */

// Each test has its own folder (and processes): the tests run concurrently, most of a test being a
// child process starting or stopping.
const it = itWithFolder('restgraph-cli-');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.concurrent('serve', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
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
    expect(await index.json()).toEqual({ name: 'restgraph', versions: ['v1'], latestVersion: 'v1', resources: { notes: '/notes' }, server: { version: PACKAGE_VERSION, database: 'SQLite' } });
    expect((await fetch(`http://127.0.0.1:${flagPort}/users`)).status).toBe(404);
    expect(tableNames(dbFile)).toContain('notes');
  });

  it('takes the schema from RESTGRAPH_SCHEMA', async ({ folder: dir }) => {
    const schema = writeSchema(dir, 'resources:\n  notes:\n    fields:\n      text: { type: string }\n');
    const { base } = await serve(dir, [], { RESTGRAPH_SCHEMA: schema });
    expect((await fetch(`${base}/notes`)).status).toBe(200);
    expect((await fetch(`${base}/users`)).status).toBe(404);
  });

});
