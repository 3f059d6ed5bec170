// PATCH throughput of two builds side by side (BEFORE_CLI and AFTER_CLI: paths to dist/cli/main.js),
// alternating ROUNDS times (default 3), each on a fresh SQLite database with 1,000 users; the server on
// CPU 0, bench/load.js's `update` scenario (wrk, 32 connections) on CPU 1. Prints req/s per round.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const builds = { before: process.env.BEFORE_CLI, after: process.env.AFTER_CLI ?? new URL('../dist/cli/main.js', import.meta.url).pathname };
if (!builds.before) throw new Error('BEFORE_CLI: the dist/cli/main.js of the build to compare with');
const TOKEN = 'bench-admin-token-0123456789';
const rounds = Number(process.env.ROUNDS ?? 3);
const results = { before: [], after: [] };
for (let r = 0; r < rounds; r++) for (const [name, cli] of Object.entries(builds)) {
  const dir = mkdtempSync(join(tmpdir(), 'ab-'));
  const port = 4100 + r * 2 + (name === 'after' ? 1 : 0);
  const child = spawn('taskset', ['-c', '0', 'node', cli, 'serve', '-d', `sqlite:${dir}/db.db`], { env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', RESTGRAPH_ADMIN_TOKEN: TOKEN, RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'off' }, stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) { try { if ((await fetch(base + "/readyz")).ok) break; } catch { // not listening yet
  } await new Promise((r) => setTimeout(r, 100)); }
  for (let i = 0; i < 1000; i += 100) await Promise.all(Array.from({ length: 100 }, (_, j) => fetch(base + '/users', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `u${i + j}` }) })));
  const spec = { engine: 'wrk', url: base, scenario: 'update', server: 'restgraph', size: 1000, connections: 32, duration: 8, warmup: 2, timeout: 10, serverPid: child.pid, serverCpu: 0, loadCpu: 1, headers: { authorization: `Bearer ${TOKEN}` } };
  const out = execFileSync('taskset', ['-c', '1', 'node', new URL('./load.js', import.meta.url).pathname, JSON.stringify(spec)], { encoding: 'utf8' });
  const line = JSON.parse(out.trim().split('\n').at(-1));
  results[name].push(Math.round(line.reqPerSec));
  console.log(name, r, JSON.stringify({ rps: Math.round(line.reqPerSec), p99: line.p99Ms ?? line.p99, errors: line.errors, non2xx: line.non2xx, other: line.otherCpu }));
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(results));
