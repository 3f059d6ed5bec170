// restgraph benchmark: `npm run bench` (builds first), or `node bench/run.js`.
//
// What it measures: HTTP throughput (requests per second) and p99 latency of the same
// REST scenarios (bench/scenarios.js) on three servers (bench/servers.js), each on the
// same seeded data, one server at a time, pinned to CPU 0, with the load generator
// (wrk when installed, else autocannon; 32 keep-alive connections) pinned to CPU 1:
//
//   restgraph    node dist/cli/main.js serve, in its default configuration (logging on)
//   baseline     bench/baseline/server.js: hand-written Fastify + better-sqlite3 with
//                prepared statements and nothing else, the ceiling for a Node stack
//   json-server  json-server 1.0.0-beta.3 on a db.json, the usual "instant REST API"
//
// How to read the ratios: restgraph/baseline is the share of the hand-written ceiling
// that restgraph keeps (1.0 = no overhead at all; targets: >= 0.8 for get-by-id and
// create, >= 0.7 for list). restgraph/json-server is how many times faster restgraph
// is than json-server (target >= 10). A target only PASSes when restgraph answered every
// request with 2xx; any non-2xx or socket error is counted and printed, marked with `!`.
// Each run also reports how busy the server's CPU was (near 100 % = the server was the
// bottleneck, as intended) and warns when other processes took CPU meanwhile: the
// figures of a machine busy with anything else (tests, builds) are not worth comparing.
// Even on an idle VM runs vary by 10-20 %: compare ratios taken in the same run, and
// use BENCH_ROUNDS=3 before judging a ratio near its target.
//
// Env: BENCH_SIZES (rows seeded, default "10000,100000"), BENCH_DURATION (seconds per
// measured run, default 10), BENCH_WARMUP (seconds, default 2, discarded),
// BENCH_CONNECTIONS (default 32), BENCH_ROUNDS (default 1; more repeats everything on
// fresh data, servers interleaved, and reports medians), BENCH_LOADGEN (wrk | autocannon;
// default wrk when on PATH: with one core it keeps the server saturated where autocannon
// itself runs out of CPU), BENCH_SERVERS / BENCH_SCENARIOS (comma-separated names to
// run only those),
// BENCH_TIMEOUT (seconds before the whole run is aborted; default from the plan),
// BENCH_KEEP=1 (keep the temporary directory: databases, server stderr logs).
// Results: printed tables, and bench/results/latest.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canPin, describeExit, hasCommand, killAllNow, logTail, startProcess } from './lib/proc.js';
import { makeUsers } from './lib/seed.js';
import { scenarioFor, scenarios as allScenarios } from './scenarios.js';
import { SERVER_CPU, servers as allServers } from './servers.js';

const LOAD_CPU = 1;
/** Other processes using more than this share of a CPU during a run disturb it (warned). */
const OTHER_CPU_LIMIT = 0.05;
const SUBJECT = 'restgraph';
const benchDir = fileURLToPath(new URL('.', import.meta.url));

const env = process.env;
const list = (value) => value?.split(',').map((s) => s.trim()).filter(Boolean);
const config = {
  sizes: (list(env.BENCH_SIZES) ?? ['10000', '100000']).map(Number),
  duration: Number(env.BENCH_DURATION ?? 10),
  warmup: Number(env.BENCH_WARMUP ?? 2),
  connections: Number(env.BENCH_CONNECTIONS ?? 32),
  requestTimeout: 10,
  engine: env.BENCH_LOADGEN ?? (hasCommand('wrk', ['-v']) ? 'wrk' : 'autocannon'),
  rounds: Number(env.BENCH_ROUNDS ?? 1),
  keep: env.BENCH_KEEP === '1',
};
const pick = (items, names) => (names ? items.filter((i) => names.includes(i.name)) : items);
const servers = pick(allServers, list(env.BENCH_SERVERS));
const scenarios = pick(allScenarios, list(env.BENCH_SCENARIOS));

for (const [key, value] of Object.entries({ ...config, sizes: Math.min(...config.sizes) })) {
  if (typeof value === 'number' && !(value > 0)) fail(`bad setting ${key}: ${value}`);
}
if (!['wrk', 'autocannon'].includes(config.engine)) fail(`BENCH_LOADGEN must be wrk or autocannon`);
if (config.engine === 'wrk' && !hasCommand('wrk', ['-v'])) fail('BENCH_LOADGEN=wrk but wrk is not on PATH');
if (!servers.length || !scenarios.length) fail('BENCH_SERVERS / BENCH_SCENARIOS select nothing');

function fail(message) {
  console.error(`bench: ${message}`);
  process.exit(2);
}

// ---------------------------------------------------------------- safety net

// Everything on disk (databases, server logs, wrk request pools) lives under sessionDir;
// on any exit every child process group is killed and sessionDir removed.
const sessionDir = mkdtempSync(join(tmpdir(), 'restgraph-bench-'));
process.on('exit', () => {
  killAllNow();
  if (config.keep) console.log(`(kept ${sessionDir})`);
  else rmSync(sessionDir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\nbench: ${signal}, killing servers and load generators`);
    process.exit(130);
  });
}
const plannedSeconds =
  config.sizes.length * config.rounds * (servers.length * scenarios.length * (config.warmup + config.duration + 30) + 180);
const timeoutSeconds = Number(env.BENCH_TIMEOUT ?? Math.ceil(plannedSeconds * 1.5));
setTimeout(() => {
  console.error(`\nbench: aborted after ${timeoutSeconds} s (BENCH_TIMEOUT)`);
  process.exit(1);
}, timeoutSeconds * 1000).unref();

// ---------------------------------------------------------------- load

/** Runs bench/load.js pinned to the load CPU; resolves to its JSON result. */
async function runLoad({ url, pid, scenario, server, size, headers }) {
  const spec = {
    engine: config.engine,
    url,
    headers: headers ?? {},
    scenario: scenario.name,
    server,
    size,
    connections: config.connections,
    duration: config.duration,
    warmup: config.warmup,
    timeout: config.requestTimeout,
    serverPid: pid,
    workDir: join(sessionDir, 'load'),
    ...(canPin ? { serverCpu: SERVER_CPU, loadCpu: LOAD_CPU } : {}),
  };
  const logFile = join(sessionDir, 'load.stderr.log');
  const child = startProcess(process.execPath, [join(benchDir, 'load.js'), JSON.stringify(spec)], {
    cpu: LOAD_CPU,
    stdout: 'pipe',
    logFile,
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const limit = (config.warmup + config.duration + 90) * 1000;
  const timer = setTimeout(() => process.kill(-child.pid, 'SIGKILL'), limit);
  const exit = await child.exited;
  clearTimeout(timer);
  const tail = logTail(logFile);
  rmSync(logFile, { force: true });
  if (exit.code !== 0) throw new Error(`load generator failed (${describeExit(exit)})${tail}`);
  return JSON.parse(out.trim().split('\n').at(-1));
}

/** A tiny HTTP client for the scenario checks. */
function requester(url, serverHeaders = {}) {
  return async (method, path, body) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...serverHeaders, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json };
  };
}

// ---------------------------------------------------------------- one size

async function benchSize(size) {
  const users = makeUsers(size);
  const out = { size, servers: {}, scenarios: [] };
  const samples = scenarios.map(() => ({})); // [scenario][server] -> results of each round
  for (const scenario of scenarios) out.scenarios.push({ name: scenario.name, results: {}, checks: {} });
  console.log(`\n=== ${fmtCount(size)} users ===`);
  for (const server of servers) {
    const reason = server.unavailable();
    if (reason) {
      console.log(`  ${server.name}: skipped, ${reason}`);
      out.servers[server.name] = { skipped: reason };
    }
  }
  const active = servers.filter((s) => !out.servers[s.name]?.skipped);
  for (let round = 1; round <= config.rounds; round++) {
    // Fresh data every round: the create scenario leaves rows behind.
    const dir = mkdtempSync(join(sessionDir, `${size}-`));
    const shared = {};
    const tag = config.rounds > 1 ? `[${round}/${config.rounds}] ` : '';
    for (const server of active) {
      if (out.servers[server.name]?.error) continue;
      await benchServer({ server, size, users, dir, shared, tag, out, samples });
    }
    if (!config.keep) rmSync(dir, { recursive: true, force: true });
  }
  out.scenarios.forEach((row, i) => {
    for (const [name, list] of Object.entries(samples[i])) row.results[name] = aggregate(list);
  });
  computeRatios(out);
  printTable(out);
  return out;
}

/** Seeds one server, starts it, runs every scenario that applies, stops it. */
async function benchServer({ server, size, users, dir, shared, tag, out, samples }) {
  let instance;
  let running;
  try {
    const t0 = Date.now();
    instance = await server.prepare({ dir, size, users, shared });
    console.log(`  ${tag}${server.name}: seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    out.servers[server.name] = { layout: instance.layout };
    running = await instance.start();
  } catch (error) {
    console.log(`  ${tag}${server.name}: FAILED: ${error.message}`);
    out.servers[server.name] = { error: error.message };
    return;
  }
  try {
    for (const [i, base] of scenarios.entries()) {
      const scenario = scenarioFor(base, server.name);
      if (!scenario) continue;
      const row = out.scenarios[i];
      process.stdout.write(`  ${tag}${server.name} / ${scenario.name} ... `);
      let result;
      try {
        const problems = scenario.check
          ? await scenario.check({ request: requester(running.url, instance.headers), size, users, server: server.name, path: scenario.path })
          : [];
        if (problems.length) row.checks[server.name] = problems;
        result = await runLoad({ url: running.url, pid: running.pid, scenario, server: server.name, size, headers: instance.headers });
        console.log(
          `${fmtRate(result.reqPerSec)} req/s, p99 ${fmtMs(result.p99Ms)} ms` +
            (result.serverCpu == null ? '' : `, server CPU ${fmtPct(result.serverCpu)}`) +
            (result.loadCpu == null ? '' : `, load CPU ${fmtPct(result.loadCpu)}`) +
            (result.otherCpu > OTHER_CPU_LIMIT ? `, OTHER PROCESSES ${fmtPct(result.otherCpu)}` : '') +
            (result.connections < config.connections ? `, ${result.connections} connection(s)` : '') +
            (failures(result) ? `, ${describeFailures(result)}` : '') +
            (problems.length ? `  [check: ${problems.join('; ')}]` : ''),
        );
      } catch (error) {
        result = { error: error.message };
        console.log(`FAILED: ${error.message}`);
      }
      (samples[i][server.name] ??= []).push(result);
      await settle(running, server.name);
    }
  } finally {
    await running.stop();
  }
}

/**
 * Waits until the server answers its cheap ready URL again, so that requests still queued
 * from one scenario (json-server sorting 100k rows per list request) do not run into the
 * next one.
 */
async function settle(running, name) {
  const t0 = Date.now();
  try {
    const res = await fetch(running.readyUrl, { signal: AbortSignal.timeout(180_000) });
    await res.arrayBuffer();
  } catch (error) {
    console.log(`  ${name}: did not settle after the run: ${error.message}`);
  }
  const waited = Date.now() - t0;
  if (waited > 1000) console.log(`  (${name} took ${(waited / 1000).toFixed(1)} s to work off queued requests)`);
}

const median = (xs) => {
  const v = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
const sum = (xs) => xs.reduce((a, b) => a + (b ?? 0), 0);

/** One result from the rounds: medians of rates, latencies and CPU use; sums of counts. */
function aggregate(list) {
  const ok = list.filter((r) => !r.error);
  if (!ok.length) return { error: list[0].error };
  if (ok.length === 1 && list.length === 1) return ok[0];
  const statusCodes = {};
  for (const r of ok) for (const [code, n] of Object.entries(r.statusCodes ?? {})) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    reqPerSec: median(ok.map((r) => r.reqPerSec)),
    p50Ms: median(ok.map((r) => r.p50Ms)),
    p99Ms: median(ok.map((r) => r.p99Ms)),
    connections: Math.min(...ok.map((r) => r.connections)),
    probeLatencyMs: median(ok.map((r) => r.probeLatencyMs)),
    serverCpu: median(ok.map((r) => r.serverCpu)),
    loadCpu: median(ok.map((r) => r.loadCpu)),
    otherCpu: median(ok.map((r) => r.otherCpu)),
    requests: sum(ok.map((r) => r.requests)),
    non2xx: sum(ok.map((r) => r.non2xx)),
    errors: sum(ok.map((r) => r.errors)),
    timeouts: sum(ok.map((r) => r.timeouts)),
    statusCodes: ok.some((r) => r.statusCodes) ? statusCodes : null,
    poolWrapped: ok.some((r) => r.poolWrapped) || undefined,
    failedRounds: list.length - ok.length || undefined,
    rounds: list,
  };
}

// ---------------------------------------------------------------- ratios and table

const failures = (r) =>
  r ? (r.non2xx ?? 0) + (r.errors ?? 0) + (r.timeouts ?? 0) + (r.requests === 0 ? 1 : 0) : 0;

function describeFailures(r) {
  const parts = [];
  if (r.requests === 0) parts.push('no request completed');
  if (r.non2xx) {
    const codes = r.statusCodes
      ? Object.entries(r.statusCodes)
          .filter(([code]) => !code.startsWith('2'))
          .map(([code, n]) => `${code}x${n}`)
          .join(' ')
      : '';
    parts.push(`${r.non2xx} non-2xx${codes ? ` (${codes})` : ''}`);
  }
  if (r.errors) parts.push(`${r.errors} socket errors`);
  if (r.timeouts) parts.push(`${r.timeouts} timeouts`);
  if (r.poolWrapped) parts.push('request pool wrapped: repeated bodies');
  return parts.join(', ');
}

function computeRatios(out) {
  for (const row of out.scenarios) {
    const scenario = allScenarios.find((s) => s.name === row.name);
    row.ratios = {};
    const subject = row.results[SUBJECT];
    for (const [reference, target] of Object.entries(scenario.targets ?? {})) {
      const ref = row.results[reference];
      if (!subject?.reqPerSec || !ref?.reqPerSec) continue;
      const value = subject.reqPerSec / ref.reqPerSec;
      const clean = failures(subject) === 0 && !row.checks[SUBJECT];
      row.ratios[reference] = { value, target, pass: clean && value >= target, flagged: !clean || failures(ref) > 0 };
    }
    row.scenarioRatios = {};
    for (const [otherName, target] of Object.entries(scenario.scenarioTargets ?? {})) {
      const other = out.scenarios.find((r) => r.name === otherName)?.results[SUBJECT];
      if (!subject?.reqPerSec || !other?.reqPerSec) continue;
      const value = subject.reqPerSec / other.reqPerSec;
      const clean = failures(subject) === 0 && !row.checks[SUBJECT];
      row.scenarioRatios[otherName] = { value, target, pass: clean && value >= target, flagged: !clean || failures(other) > 0 };
    }
  }
}

const fmtRate = (n) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
const fmtPct = (x) => `${Math.round(x * 100)}%`;
const fmtMs = (n) => (n >= 100 ? String(Math.round(n)) : n >= 10 ? n.toFixed(1) : n.toFixed(2));

function printTable(out) {
  const names = servers.map((s) => s.name);
  const references = [...new Set(allScenarios.flatMap((s) => Object.keys(s.targets ?? {})))].filter((r) =>
    names.includes(r),
  );
  const header = ['scenario'];
  for (const name of names) header.push(`${name} req/s`, 'p99 ms');
  for (const ref of references) header.push(`${SUBJECT}/${ref}`);
  const rows = [header];
  const notes = [];
  for (const row of out.scenarios) {
    const cells = [row.name];
    for (const name of names) {
      const r = row.results[name];
      const status = out.servers[name];
      if (!r) cells.push(status?.skipped ? 'skipped' : status?.error ? 'failed' : '-', '');
      else if (r.error) cells.push('failed', '');
      else {
        const mark = failures(r) > 0 ? ' !' : row.checks[name] ? ' *' : '';
        cells.push(fmtRate(r.reqPerSec) + mark, fmtMs(r.p99Ms));
        if (failures(r)) notes.push(`! ${name} / ${row.name}: ${describeFailures(r)} of ${r.requests} requests`);
        if (r.connections < config.connections) {
          notes.push(
            `~ ${name} / ${row.name}: ran with ${r.connections} connection(s), not ${config.connections}: ` +
              `a request alone took ${fmtMs(r.probeLatencyMs)} ms (p99 not comparable)`,
          );
        }
        if (r.otherCpu > OTHER_CPU_LIMIT) {
          notes.push(`~ ${name} / ${row.name}: other processes took ${fmtPct(r.otherCpu)} of a CPU meanwhile: figures disturbed`);
        }
        if (r.serverCpu != null && r.serverCpu < 0.85) {
          notes.push(`~ ${name} / ${row.name}: server CPU ${fmtPct(r.serverCpu)}, not saturated (load generator, I/O or waits)`);
        }
      }
      if (r?.error) notes.push(`! ${name} / ${row.name}: ${r.error.split('\n')[0]}`);
      if (r?.failedRounds) notes.push(`! ${name} / ${row.name}: failed in ${r.failedRounds} round(s), see latest.json`);
      if (row.checks[name]) notes.push(`* ${name} / ${row.name}: check: ${row.checks[name].join('; ')}`);
    }
    for (const ref of references) {
      const ratio = row.ratios[ref];
      const target = allScenarios.find((s) => s.name === row.name).targets?.[ref];
      if (!ratio) cells.push(target === undefined ? '' : `n/a (>= ${target})`);
      else {
        const value = ratio.value >= 10 ? ratio.value.toFixed(1) : ratio.value.toFixed(2);
        cells.push(`${value} ${ratio.pass ? 'PASS' : 'MISS'} (>= ${target})${ratio.flagged ? ' !' : ''}`);
      }
    }
    rows.push(cells);
  }
  const widths = header.map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (cells) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join(' | ');
  const rounds = config.rounds > 1 ? `, median of ${config.rounds} rounds` : '';
  console.log(`\n${fmtCount(out.size)} users, ${config.engine}, ${config.connections} connections, ${config.duration} s${rounds}:`);
  console.log(line(rows[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const r of rows.slice(1)) console.log(line(r));
  for (const row of out.scenarios) {
    for (const [otherName, ratio] of Object.entries(row.scenarioRatios ?? {})) {
      console.log(
        `${SUBJECT}: ${row.name} / ${otherName} = ${ratio.value.toFixed(2)} ${ratio.pass ? 'PASS' : 'MISS'} (>= ${ratio.target})${ratio.flagged ? ' !' : ''}`,
      );
    }
  }
  for (const note of notes) console.log(note);
  console.log(
    '(! = failed requests: non-2xx, socket errors or timeouts; * = differs from the expected API; ' +
      `~ = measurement caveat${config.engine === 'wrk' ? '; wrk counts status >= 400 as non-2xx' : ''})`,
  );
}

const fmtCount = (n) => n.toLocaleString('en-US');

// ---------------------------------------------------------------- main

async function main() {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const engineNote =
    config.engine === 'wrk'
      ? 'wrk (1 thread)'
      : `autocannon${hasCommand('wrk', ['-v']) ? '' : ' (wrk not installed)'}`;
  console.log(
    `restgraph bench: node ${process.version}, ${availableParallelism()} x ${cpu}; ` +
      `load generator ${engineNote}, ${config.connections} connections, ` +
      `${config.warmup} s warm-up + ${config.duration} s per run, ${config.rounds} round(s); ` +
      (canPin ? `server on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}` : 'NOT pinned (no taskset or < 2 CPUs)'),
  );
  const results = {
    generatedAt: new Date().toISOString(),
    node: process.version,
    cpus: availableParallelism(),
    cpuModel: cpu,
    pinned: canPin,
    loadGenerator: config.engine,
    connections: config.connections,
    durationSeconds: config.duration,
    warmupSeconds: config.warmup,
    rounds: config.rounds,
    sizes: [],
  };
  for (const n of config.sizes) results.sizes.push(await benchSize(n));
  const resultsDir = join(benchDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, 'latest.json');
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nResults written to ${file}`);
}

main().catch((error) => {
  console.error(`bench: ${error.stack ?? error.message}`);
  process.exit(1);
});
