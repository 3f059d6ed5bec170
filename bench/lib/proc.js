// Child processes for the benchmark: pinned to a CPU when `taskset` exists, each in
// its own process group (so a load worker's wrk dies with it), all tracked so that
// nothing outlives the harness.
import { spawn, spawnSync } from 'node:child_process';
import { openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

const children = new Set();

export const hasCommand = (cmd, args = ['--version']) => {
  const r = spawnSync(cmd, args, { stdio: 'ignore' });
  return !r.error;
};

/** Pinning is used when taskset exists and there are at least 2 CPUs (server on 0, load on 1). */
export const canPin = hasCommand('taskset', ['-V']) && availableParallelism() >= 2;

/**
 * Starts `cmd args` (pinned to `cpu` when possible) in a new process group.
 * stdin and stdout are discarded unless 'pipe'; stderr goes to `logFile` when given, else is
 * discarded. Returns the ChildProcess with an `exited` promise resolving to {code, signal}.
 */
export function startProcess(cmd, args, { cpu, env, cwd, logFile, stdin = 'ignore', stdout = 'ignore' } = {}) {
  const [file, argv] = canPin && cpu !== undefined ? ['taskset', ['-c', String(cpu), cmd, ...args]] : [cmd, args];
  const errFd = logFile ? openSync(logFile, 'a') : 'ignore';
  // BENCH_STDOUT_TO_LOG=1: a server's stdout goes to its log too (e.g. node's --trace-gc lines).
  const out = stdout === 'ignore' && typeof errFd === 'number' && process.env.BENCH_STDOUT_TO_LOG === '1' ? errFd : stdout;
  const child = spawn(file, argv, { env, cwd, detached: true, stdio: [stdin, out, errFd] });
  if (typeof errFd === 'number') closeSync(errFd);
  children.add(child);
  child.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
    child.once('error', (error) => {
      children.delete(child);
      resolve({ code: null, signal: null, error });
    });
  });
  return child;
}

const signalGroup = (child, signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
};

/** SIGTERM to the child's process group; SIGKILL after `graceMs`. Resolves to {code, signal}. */
export async function stopProcess(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return child.exited;
  signalGroup(child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
  const result = await child.exited;
  clearTimeout(timer);
  return result;
}

/** Synchronous last resort (process 'exit' handler): SIGKILL every group still alive. */
export function killAllNow() {
  for (const child of children) signalGroup(child, 'SIGKILL');
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers 200; fails if the child exits first or after `timeoutMs`. */
export async function waitReady(url, child, { timeoutMs = 60_000, logFile } = {}) {
  const deadline = Date.now() + timeoutMs;
  let exited = null;
  child.exited.then((r) => (exited = r));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`exited before ready (${describeExit(exited)})${logTail(logFile)}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`not ready after ${timeoutMs} ms: ${url}${logTail(logFile)}`);
}

/**
 * Runs a Node worker script pinned to `cpu` with `spec` (JSON) as its argument, killed after
 * `timeoutMs`; resolves to the JSON of the last line it printed on stdout (its result).
 */
export async function runJsonWorker(script, spec, { cpu, logFile, timeoutMs, what = 'worker' }) {
  const child = startProcess(process.execPath, [script, JSON.stringify(spec)], { cpu, stdout: 'pipe', logFile });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), timeoutMs);
  const exit = await child.exited;
  clearTimeout(timer);
  const tail = logTail(logFile);
  rmSync(logFile, { force: true });
  if (exit.code !== 0) throw new Error(`${what} failed (${describeExit(exit)})${tail}`);
  return JSON.parse(out.trim().split('\n').at(-1));
}

export const describeExit = ({ code, signal, error }) =>
  error ? error.message : signal ? `signal ${signal}` : `exit code ${code}`;

export function logTail(logFile, lines = 15) {
  if (!logFile) return '';
  try {
    const text = readFileSync(logFile, 'utf8').trimEnd();
    return text ? `\n--- ${logFile} (last lines) ---\n${text.split('\n').slice(-lines).join('\n')}` : '';
  } catch {
    return '';
  }
}
