import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'vitest';

/** The built CLI (test/global-setup.ts builds dist/ once per run). */
export const CLI = join(resolve(fileURLToPath(new URL('../..', import.meta.url))), 'dist', 'cli', 'main.js');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<Exit>;
}

export interface Finished extends Exit {
  stdout: string;
  stderr: string;
}

/** The environment without any restgraph setting inherited from the shell running the tests. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(PORT|HOST|DATABASE_URL|LOG_LEVEL|RESTGRAPH_.*|NODE_OPTIONS)$/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** A test's own temporary folder and the processes it started there. */
export interface CliFolder {
  path: string;
  children: Running[];
}

/**
 * `it` with a `folder` of the test's own (prefix `prefix`), whose processes are killed and which is
 * removed when the test ends: tests holding no state in the module can run concurrently
 * (`describe.concurrent`), overlapping their child processes' start-ups and exits.
 */
export function itWithFolder(prefix: string) {
  return test.extend<{ folder: CliFolder }>({
    // eslint-disable-next-line no-empty-pattern -- vitest reads the fixtures a fixture needs from this pattern
    folder: async ({}, use) => {
      const folder: CliFolder = { path: mkdtempSync(join(tmpdir(), prefix)), children: [] };
      try {
        await use(folder);
      } finally {
        await killAll(folder.children);
        rmSync(folder.path, { recursive: true, force: true });
      }
    },
  });
}

/** Starts `node dist/cli/main.js ...args` in `cwd`, collecting its output; `track` keeps it for cleanup. */
export function startCli(cwd: string, args: string[], env: Record<string, string>, track: Running[]): Running {
  return startProcess(process.execPath, [CLI, ...args], cwd, env, track);
}

/** Starts any command in `cwd` with a clean environment plus `env`, collecting its output; `track` keeps it for cleanup. */
export function startProcess(command: string, args: string[], cwd: string, env: Record<string, string>, track: Running[]): Running {
  const child = spawn(command, args, { cwd, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolveExit) => {
    child.once('close', (code, signal) => resolveExit({ code, signal }));
  });
  const running = { child, stdout: () => stdout, stderr: () => stderr, exited };
  track.push(running);
  return running;
}

/**
 * The timeout of the tests that run CLI child processes (given to the describe blocks of the CLI
 * test files). Each `node dist/cli/main.js` spends 1–2 s of CPU starting, and a file's tests run
 * concurrently: such a test that takes 8 s when its file runs alone took up to 30 s, and one of
 * 18 s up to 60 s, in a full `npm test` on a 2-core machine that other work kept at a load
 * average of 12–17. About twice the slowest of those, 3–4 times most.
 */
export const CLI_TEST_TIMEOUT_MS = 120_000;

/**
 * Waits for a started CLI to finish (killing it after `timeoutMs`: by default a minute, four
 * times the longest a command took in a full `npm test` on a loaded machine).
 */
export async function finish(running: Running, timeoutMs = 60_000): Promise<Finished> {
  const timer = setTimeout(() => running.child.kill('SIGKILL'), timeoutMs);
  const exit = await running.exited;
  clearTimeout(timer);
  return { ...exit, stdout: running.stdout(), stderr: running.stderr() };
}

/** Kills whatever is still running of `children`. */
export async function killAll(children: Running[]): Promise<void> {
  for (const running of children) {
    if (running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
  }
}

export { freePort } from './ports.js';

/** The JSON log lines on stdout; fails on any line that is not JSON. */
export function logLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    });
}

const sleep = (ms: number): Promise<void> => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

/**
 * Polls GET /readyz until it answers 200; fails when the process exits first or after `timeoutMs`
 * (a start takes about 1 s alone; several at once on a busy 2-core machine have taken over 15,
 * and a start that imports a db.json of 100,000 posts, 7 s alone, took over 30 in a loaded full
 * run: by default 60 s, half the timeout of the CLI tests, CLI_TEST_TIMEOUT_MS).
 */
export async function waitReady(running: Running, port: number, timeoutMs = 60_000): Promise<void> {
  let exit: Exit | undefined;
  void running.exited.then((e) => (exit = e));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exit !== undefined) throw new Error(`serve exited (${String(exit.code)}) before it was ready:\n${running.stderr()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`serve was not ready after ${timeoutMs / 1000} s:\n${running.stderr()}`);
}
