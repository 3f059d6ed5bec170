import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, finish, freePort, killAll, logLines, startProcess, waitReady, type Running } from './helpers/cli-process.js';
import { TEST_ADMIN_TOKEN, tempDir } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

/**
 * A failure nothing caught, in the real server process: an unhandled promise rejection is logged
 * and the server goes on; an uncaught exception is logged, the server drains and exits 1. Either
 * line is in the log although the process stops right after (the batched log is flushed first).
 * The fault is injected by a module preloaded into `restgraph serve` (node --import), on SIGUSR2.
 */

const INJECT_FAULT = `data:text/javascript,${encodeURIComponent(`
  process.on('SIGUSR2', () => {
    if (process.env.RG_TEST_FAULT === 'reject') Promise.reject(new Error('injected rejection'));
    else setTimeout(() => { throw new Error('injected exception'); });
  });
`)}`;

let dir: ReturnType<typeof tempDir>;
let database: TestDatabase;
let children: Running[] = [];
beforeEach(async () => {
  dir = tempDir('restgraph-faults-');
  database = await createTestDatabase(dir.path);
  children = [];
});
afterEach(async () => {
  await killAll(children);
  await database.drop();
  dir.cleanup();
});

async function serveWithFault(fault: 'reject' | 'throw'): Promise<{ running: Running; base: string }> {
  const port = await freePort();
  const env = { DATABASE_URL: database.url, PORT: String(port), RESTGRAPH_ADMIN_TOKEN: TEST_ADMIN_TOKEN, RG_TEST_FAULT: fault };
  const running = startProcess(process.execPath, ['--import', INJECT_FAULT, CLI, 'serve'], dir.path, env, children);
  await waitReady(running, port);
  return { running, base: `http://127.0.0.1:${port}` };
}

const messages = (running: Running): unknown[] => logLines(running.stdout()).map((l) => l.msg);

describe('faults nothing caught, in restgraph serve', () => {
  it('an unhandled promise rejection is logged at once (level 50, with the error) and the server goes on serving; SIGTERM still exits 0', async () => {
    const { running, base } = await serveWithFault('reject');
    running.child.kill('SIGUSR2');
    const deadline = Date.now() + 5000;
    while (!running.stdout().includes('unhandled promise rejection') && running.child.exitCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(running.child.exitCode, running.stderr()).toBeNull();
    const line = logLines(running.stdout()).find((l) => l.msg === 'unhandled promise rejection (the process goes on)');
    expect(line).toMatchObject({ level: 50, err: { message: 'injected rejection' } });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const created = await fetch(`${base}/users`, { method: 'POST', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{"name":"Ada"}' });
    expect(created.status).toBe(201);
    running.child.kill('SIGTERM');
    expect((await finish(running)).code).toBe(0);
  });

  it('an uncaught exception is logged (level 60, with the error), the server drains, and the process exits 1', async () => {
    const { running } = await serveWithFault('throw');
    running.child.kill('SIGUSR2');
    const exit = await finish(running);
    expect(exit.code, exit.stderr).toBe(1);
    const line = logLines(exit.stdout).find((l) => l.msg === 'uncaught exception: draining, then exiting 1');
    expect(line).toMatchObject({ level: 60, err: { message: 'injected exception' } });
    // Drained as on SIGTERM: the shutdown lines follow.
    expect(messages(running)).toEqual(expect.arrayContaining(['shutting down: draining in-flight requests', 'stopped']));
  });
});
