import { copyFileSync, mkdirSync, symlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, freePort, itWithFolder, logLines, startProcess, waitReady } from './helpers/cli-process.js';
import { ADMIN_TOKEN, ROOT, serve, sleep } from './helpers/cli-serve.js';

/**
 * The `restgraph` CLI as operators run it: a child process of dist/cli/main.js, on real temp
 * SQLite files and real sockets on 127.0.0.1.
 * `serve` stopped by a signal: it drains, exits 0 and says so.
 * (The other cli-*.test.ts files: cli-help, cli-serve, cli-serve-errors, cli-migrate.)
 */

// Each test has its own folder (and processes): the tests run concurrently, most of a test being a
// child process starting or stopping.
const it = itWithFolder('restgraph-cli-');

describe.concurrent('serve', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
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

  // Node's fetch opens a spare connection whenever a request is aborted (an EventSource closed),
  // browsers preconnect: Node's closeIdleConnections() leaves such connections open.
  it('SIGTERM with a connection open on which nothing was sent yet: the server closes it and exits 0 (not at the drain timeout, with 1)', async ({ folder: dir }) => {
    const { running, port } = await serve(dir, []);
    const socket = connect(port, '127.0.0.1');
    const closed = new Promise<void>((resolveClose) => socket.once('close', () => resolveClose()));
    await new Promise<void>((resolveConnect, reject) => socket.once('connect', resolveConnect).once('error', reject));
    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    await closed;
    expect(logLines(running.stdout()).map((l) => l.msg)).not.toContain('drain timed out; exiting');
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

});
