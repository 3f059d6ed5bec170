// Query benchmarks, run by bench/run.js between the REST scenarios and the events
// (`npm run bench`; BENCH_SCENARIOS=none BENCH_EVENTS=0 runs them alone).
//
// What it measures: restgraph (node dist/cli/main.js serve, default configuration, logging on)
// on SQLite, pinned to CPU 0, on the schema bench/queries/schema.yaml (customers and their
// orders, public) seeded with BENCH_QUERY_ROWS orders (default 100,000) and a tenth as many
// customers (bench/queries/data.js, imported with `restgraph import data`); the load
// (bench/load.js: wrk or autocannon, BENCH_CONNECTIONS connections) pinned to CPU 1. The
// scenarios (bench/queries/scenarios.js) are each checked once against the same query over the
// rows in memory, then loaded for BENCH_QUERY_DURATION seconds (default 5) after a 2 s warm-up,
// all of them in turn, BENCH_QUERY_ROUNDS times (default 3) on the same server and data;
// medians. Each is reported with its ratio to the plain sorted list of the same run
// (`orders sorted limit 20`), and a target where there is one: the list filtered by an `or` of
// two indexed conditions keeps at least 0.7 of the plain list's rate.
//
// Env: BENCH_QUERIES=0 skips them; BENCH_QUERY_SCENARIOS picks some by name (the plain list
// always runs, as the reference).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { requester } from './lib/check-requests.js';
import { canPin, runJsonWorker } from './lib/proc.js';
import { describeFailures, failures, fmtCount, fmtMs, fmtPct, fmtRate, OTHER_CPU_LIMIT, renderTable } from './lib/report.js';
import { exportText, makeQueryData } from './queries/data.js';
import { queryScenarios } from './queries/scenarios.js';
import { SERVER_CPU, serveRestgraph } from './servers.js';

const LOAD_CPU = 1;
const WARMUP = 2;
const benchDir = fileURLToPath(new URL('.', import.meta.url));
const root = join(benchDir, '..');
const cli = join(root, 'dist/cli/main.js');
const schemaFile = join(benchDir, 'queries/schema.yaml');
const PLAIN = queryScenarios[0].name;

const list = (value) => value?.split(',').map((s) => s.trim()).filter(Boolean);

/** The query benchmarks' settings from the environment; throws on a bad one. */
export function queryConfig(env) {
  if (!['0', '1', undefined].includes(env.BENCH_QUERIES)) throw new Error('BENCH_QUERIES must be 0 or 1');
  const names = list(env.BENCH_QUERY_SCENARIOS);
  const unknown = (names ?? []).filter((n) => !queryScenarios.some((s) => s.name === n));
  if (unknown.length) throw new Error(`BENCH_QUERY_SCENARIOS: unknown ${unknown.join(', ')} (known: ${queryScenarios.map((s) => s.name).join(', ')})`);
  const config = {
    enabled: env.BENCH_QUERIES !== '0',
    scenarios: queryScenarios.filter((s) => s.name === PLAIN || !names || names.includes(s.name)).map((s) => s.name),
    rows: Number(env.BENCH_QUERY_ROWS ?? 100_000),
    duration: Number(env.BENCH_QUERY_DURATION ?? 5),
    rounds: Number(env.BENCH_QUERY_ROUNDS ?? 3),
  };
  for (const key of ['rows', 'duration', 'rounds']) {
    if (!(Number.isInteger(config[key]) && config[key] > 0)) throw new Error(`bad query setting ${key}: ${config[key]}`);
  }
  return config;
}

/** Seconds the query benchmarks should take at most (seeding, start, every run, slack). */
export function queryPlannedSeconds(config) {
  if (!config.enabled) return 0;
  return 60 + config.rows / 5000 + config.rounds * config.scenarios.length * (WARMUP + config.duration + 20);
}

function runCli(args, env) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [cli, ...args], { env, cwd: root, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`restgraph ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

const median = (xs) => {
  const v = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

/** Runs the query benchmarks; resolves to their results (for results/latest.json). */
export async function runQueries({ config, sessionDir, engine, connections }) {
  const dir = mkdtempSync(join(sessionDir, 'queries-'));
  console.log(`\n=== queries (restgraph on SQLite, ${fmtCount(config.rows)} orders of ${fmtCount(Math.floor(config.rows / 10))} customers) ===`);
  const data = makeQueryData(config.rows);
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'queries.db')}`, RESTGRAPH_SCHEMA: schemaFile, RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'off' };
  delete env.LOG_LEVEL;
  delete env.RESTGRAPH_ADMIN_TOKEN;
  const file = join(dir, 'data.ndjson');
  writeFileSync(file, exportText(data));
  const t0 = Date.now();
  await runCli(['import', 'data', file, schemaFile, '-d', env.DATABASE_URL], env);
  console.log(`  seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const server = await serveRestgraph({ name: 'restgraph', env, logFile: join(dir, 'server.stderr.log') });
  const scenarios = queryScenarios.filter((s) => config.scenarios.includes(s.name));
  const out = { generatedAt: new Date().toISOString(), rows: config.rows, rounds: config.rounds, durationSeconds: config.duration, scenarios: {} };
  try {
    const checks = {};
    for (const scenario of scenarios) checks[scenario.name] = await scenario.check({ request: requester(server.url), data });
    const samples = Object.fromEntries(scenarios.map((s) => [s.name, []]));
    for (let round = 1; round <= config.rounds; round++) {
      for (const scenario of scenarios) {
        process.stdout.write(`  [${round}/${config.rounds}] ${scenario.name} ... `);
        let result;
        try {
          result = await runJsonWorker(
            join(benchDir, 'load.js'),
            {
              engine,
              url: server.url,
              headers: {},
              scenario: scenario.name,
              server: 'restgraph',
              size: config.rows,
              seed: 7 + round,
              connections,
              duration: config.duration,
              warmup: WARMUP,
              timeout: 10,
              serverPid: server.pid,
              workDir: join(dir, 'load'),
              ...(canPin ? { serverCpu: SERVER_CPU, loadCpu: LOAD_CPU } : {}),
            },
            { cpu: LOAD_CPU, logFile: join(dir, 'load.stderr.log'), timeoutMs: (WARMUP + config.duration + 90) * 1000, what: 'load generator' },
          );
          console.log(
            `${fmtRate(result.reqPerSec)} req/s, p99 ${fmtMs(result.p99Ms)} ms` +
              (result.serverCpu == null ? '' : `, server CPU ${fmtPct(result.serverCpu)}`) +
              (result.otherCpu > OTHER_CPU_LIMIT ? `, OTHER PROCESSES ${fmtPct(result.otherCpu)}` : '') +
              (failures(result) ? `, ${describeFailures(result)}` : ''),
          );
        } catch (error) {
          result = { error: error.message };
          console.log(`FAILED: ${error.message}`);
        }
        samples[scenario.name].push(result);
      }
    }
    for (const scenario of scenarios) {
      const ok = samples[scenario.name].filter((r) => !r.error);
      out.scenarios[scenario.name] = {
        reqPerSec: median(ok.map((r) => r.reqPerSec)),
        p50Ms: median(ok.map((r) => r.p50Ms)),
        p99Ms: median(ok.map((r) => r.p99Ms)),
        serverCpu: median(ok.map((r) => r.serverCpu)),
        otherCpu: median(ok.map((r) => r.otherCpu)),
        failed: samples[scenario.name].some((r) => r.error || failures(r)) || undefined,
        check: checks[scenario.name].length ? checks[scenario.name] : undefined,
        rounds: samples[scenario.name],
      };
    }
    report(out, scenarios);
  } finally {
    await server.stop(15_000);
  }
  return out;
}

function report(out, scenarios) {
  const plain = out.scenarios[PLAIN]?.reqPerSec;
  const rows = [['scenario', 'req/s', 'p50 ms', 'p99 ms', `ratio to ${PLAIN}`, 'target', '']];
  for (const scenario of scenarios) {
    const r = out.scenarios[scenario.name];
    const ratio = scenario.versus && plain && r.reqPerSec ? r.reqPerSec / plain : null;
    if (ratio !== null) r.ratio = ratio;
    const verdict =
      r.check ? `CHECK FAILED: ${r.check.join('; ')}` : r.failed ? 'ERRORS' : scenario.target === undefined || ratio === null ? '' : ratio >= scenario.target ? 'PASS' : 'MISS';
    rows.push([
      scenario.name,
      r.reqPerSec == null ? 'n/a' : fmtRate(r.reqPerSec),
      fmtMs(r.p50Ms),
      fmtMs(r.p99Ms),
      ratio === null ? '' : ratio.toFixed(2),
      scenario.target === undefined ? '' : `>= ${scenario.target}`,
      verdict,
    ]);
  }
  console.log('');
  renderTable(rows, [0, 6]);
}
