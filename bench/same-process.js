// A diagnostic beside `npm run bench`: restgraph's own cost per request, measured against the
// hand-written baseline served by the same Node process.
//
//   node bench/same-process.js                       (after npm run build)
//   SAME_VARIANTS='{"quiet":{"LOG_LEVEL":"warn"}}' node bench/same-process.js
//
// bench/run.js compares servers each in a process of its own. On a shared VM two processes of the
// same server differ by up to ±8 % in throughput, and a process differs by what it has loaded and
// built (the hand-written server alone is faster than the same server in a process that has also
// built restgraph's app). Here one process (bench/same-process-server.js, pinned to CPU 0) serves
// the baseline and restgraph (default configuration, with an API key; plus one app per variant,
// each with its environment overrides) on ports of their own, and wrk (CPU 1) loads them in turn,
// twice each; every round is a fresh process. The ratios restgraph/baseline of one process leave
// out what processes differ by, so they say what restgraph's own work costs, and what a variant
// saves. They are not the targets of bench/run.js, which compare separate processes.
//
// Env: SAME_SIZE (users seeded, default 100000), SAME_ROUNDS (processes, default 3),
// SAME_DURATION (seconds per wrk run, default 3), SAME_PATH (default /users/4242; a list:
// "/users?sort=name&limit=20"), SAME_VARIANTS (JSON: name → environment overrides).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canPin, freePort, hasCommand, killAllNow, startProcess, stopProcess, waitReady } from './lib/proc.js';
import { makeUsers, seedSqlite } from './lib/seed.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'dist/cli/main.js');
const env = process.env;
const size = Number(env.SAME_SIZE ?? 100_000);
const rounds = Number(env.SAME_ROUNDS ?? 3);
const duration = Number(env.SAME_DURATION ?? 3);
const path = env.SAME_PATH ?? '/users/4242';
const variants = { restgraph: {}, ...JSON.parse(env.SAME_VARIANTS ?? '{}') };

if (!hasCommand('wrk')) throw new Error('same-process.js needs wrk on PATH');
const dir = mkdtempSync(join(tmpdir(), 'rg-same-'));
process.on('exit', () => {
  killAllNow();
  rmSync(dir, { recursive: true, force: true });
});

const rgDb = join(dir, 'restgraph.db');
const baseDb = join(dir, 'baseline.db');
const childEnv = { ...env, DATABASE_URL: `sqlite:${rgDb}` };
delete childEnv.LOG_LEVEL;
delete childEnv.RESTGRAPH_LOG_FORMAT; // JSON lines, as measured: the readable form is for a terminal
delete childEnv.RESTGRAPH_SCHEMA;
execFileSync(process.execPath, [cli, 'migrate'], { env: childEnv, stdio: 'ignore' });
seedSqlite(rgDb, makeUsers(size));
const key = execFileSync(process.execPath, [cli, 'token', 'create', '--scopes', 'users:read,users:write', '--name', 'same-process'], { env: childEnv })
  .toString()
  .trim()
  .split('\n')
  .at(-1);
copyFileSync(rgDb, baseDb); // the same table layout and rows

const wrk = (port, seconds) => {
  const args = ['-t1', '-c32', `-d${seconds}s`, '-H', `authorization: Bearer ${key}`, `http://127.0.0.1:${port}${path}`];
  const run = spawnSync(canPin ? 'taskset' : 'wrk', canPin ? ['-c', '1', 'wrk', ...args] : args, { encoding: 'utf8' });
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(run.stdout)?.[1];
  if (rate === undefined || /Non-2xx/.test(run.stdout)) throw new Error(`wrk on ${path} failed:\n${run.stdout}${run.stderr}`);
  return Number(rate);
};

const names = ['baseline', ...Object.keys(variants)];
const results = new Map(names.map((name) => [name, []]));
console.log(`same-process: ${size.toLocaleString('en')} users, GET ${path}, ${rounds} process(es), 2 x ${duration} s per server and process`);
for (let round = 1; round <= rounds; round++) {
  const ports = new Map();
  for (const name of names) ports.set(name, await freePort());
  const spec = Object.entries(variants).map(([name, overrides]) => ({ port: ports.get(name), env: overrides }));
  const logFile = join(dir, 'server.log');
  const child = startProcess(process.execPath, [join(root, 'bench/same-process-server.js')], {
    cpu: 0,
    cwd: root,
    logFile,
    env: { ...childEnv, VARIANTS: JSON.stringify(spec), PORT: String(ports.get('baseline')), DB_PATH: baseDb },
  });
  for (const port of ports.values()) await waitReady(`http://127.0.0.1:${port}/readyz`, child, { logFile });
  for (const port of ports.values()) wrk(port, 1); // warm-up
  const sums = new Map(names.map((name) => [name, 0]));
  for (let pass = 0; pass < 2; pass++) for (const name of names) sums.set(name, sums.get(name) + wrk(ports.get(name), duration) / 2);
  await stopProcess(child);
  const base = sums.get('baseline');
  console.log(`  process ${round}: ` + names.map((name) => `${name} ${Math.round(sums.get(name)).toLocaleString('en')}` + (name === 'baseline' ? '' : ` (${(sums.get(name) / base).toFixed(2)})`)).join(', '));
  for (const name of names) results.get(name).push(sums.get(name) / base);
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
console.log('median ratio to the baseline in the same process:');
for (const name of names.slice(1)) console.log(`  ${name.padEnd(20)} ${median(results.get(name)).toFixed(2)}`);
