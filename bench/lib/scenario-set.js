// A set of scenarios side by side on one running server (bench/queries.js, bench/rules.js): each
// checked once, then loaded in turn, every scenario of the set per round, `rounds` times; the
// medians, and each scenario's ratio to the one it names as `versus` (same server, same run), judged
// against its `target` when it has one. The server's CPU time per request is shown beside req/s:
// on a machine where other processes take the server's core, it moves far less.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requester } from './check-requests.js';
import { canPin, runJsonWorker } from './proc.js';
import { describeFailures, failures, fmtMs, fmtPct, fmtRate, OTHER_CPU_LIMIT, renderTable } from './report.js';
import { SERVER_CPU, serveRestgraph } from '../servers.js';

const LOAD_CPU = 1;
export const WARMUP = 2;
const benchDir = fileURLToPath(new URL('..', import.meta.url));
const root = join(benchDir, '..');
const cli = join(root, 'dist/cli/main.js');

/** Runs the restgraph CLI of this checkout (dist/) to completion; resolves to its stdout. */
export function runRestgraphCli(args, env) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [cli, ...args], { env, cwd: root, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`restgraph ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/**
 * A benchmark's row count and timing from `<prefix>_ROWS` (default 100,000), `<prefix>_DURATION`
 * (seconds a scenario is loaded, default 5) and `<prefix>_ROUNDS` (default 3) of `env`; throws,
 * naming the `what` setting, on one that is not a positive whole number.
 */
export function sizeAndTiming(env, prefix, what) {
  const settings = {
    rows: Number(env[`${prefix}_ROWS`] ?? 100_000),
    duration: Number(env[`${prefix}_DURATION`] ?? 5),
    rounds: Number(env[`${prefix}_ROUNDS`] ?? 3),
  };
  for (const key of ['rows', 'duration', 'rounds']) {
    if (!(Number.isInteger(settings[key]) && settings[key] > 0)) throw new Error(`bad ${what} setting ${key}: ${settings[key]}`);
  }
  return settings;
}

/**
 * Imports `ndjson` (written to `dir`) into `env.DATABASE_URL` with `schemaFile`, then serves it with
 * `env` but for LOG_LEVEL and RESTGRAPH_ADMIN_TOKEN (default logging, no admin); resolves to the server.
 */
export async function seedAndServe({ dir, env, schemaFile, ndjson }) {
  const serverEnv = { ...env };
  delete serverEnv.LOG_LEVEL;
  delete serverEnv.RESTGRAPH_ADMIN_TOKEN;
  const file = join(dir, 'data.ndjson');
  writeFileSync(file, ndjson);
  const t0 = Date.now();
  await runRestgraphCli(['import', 'data', file, schemaFile, '-d', serverEnv.DATABASE_URL], serverEnv);
  console.log(`  seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return serveRestgraph({ name: 'restgraph', env: serverEnv, logFile: join(dir, 'server.stderr.log') });
}

export const median = (xs) => {
  const v = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

/**
 * Checks and loads `scenarios` (each { name, check({ request, data }), versus?, target?, headers?, server? },
 * known to bench/load.js by name) against `server` ({ url, pid }), or the scenario's own `server`
 * (bench/mapped.js: two servers side by side); every request carries the scenario's `headers`, else `headers`.
 * Resolves to { [name]: { reqPerSec, p50Ms, p99Ms, serverCpu, cpuUsPerRequest, otherCpu, failed, check, rounds, ratio } }
 * after printing the table.
 */
export async function runScenarioSet({ scenarios, server, data, headers = {}, size, rounds, duration, engine, connections, dir }) {
  const checks = {};
  for (const scenario of scenarios) checks[scenario.name] = await scenario.check({ request: requester((scenario.server ?? server).url, scenario.headers ?? headers), data });
  const samples = Object.fromEntries(scenarios.map((s) => [s.name, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const scenario of scenarios) {
      process.stdout.write(`  [${round}/${rounds}] ${scenario.name} ... `);
      const target = scenario.server ?? server;
      let result;
      try {
        result = await runJsonWorker(
          join(benchDir, 'load.js'),
          {
            engine,
            url: target.url,
            headers: scenario.headers ?? headers,
            scenario: scenario.name,
            server: 'restgraph',
            size,
            seed: 7 + round,
            connections,
            duration,
            warmup: WARMUP,
            timeout: 10,
            serverPid: target.pid,
            workDir: join(dir, 'load'),
            ...(canPin ? { serverCpu: SERVER_CPU, loadCpu: LOAD_CPU } : {}),
          },
          { cpu: LOAD_CPU, logFile: join(dir, 'load.stderr.log'), timeoutMs: (WARMUP + duration + 90) * 1000, what: 'load generator' },
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
  const out = {};
  for (const scenario of scenarios) {
    const ok = samples[scenario.name].filter((r) => !r.error);
    out[scenario.name] = {
      reqPerSec: median(ok.map((r) => r.reqPerSec)),
      p50Ms: median(ok.map((r) => r.p50Ms)),
      p99Ms: median(ok.map((r) => r.p99Ms)),
      serverCpu: median(ok.map((r) => r.serverCpu)),
      // The server's own CPU time per answered request: steadier than req/s when other processes share its core.
      cpuUsPerRequest: median(ok.map((r) => (r.serverProcessSeconds == null || !r.requests ? null : (r.serverProcessSeconds * 1e6) / r.requests))),
      otherCpu: median(ok.map((r) => r.otherCpu)),
      failed: samples[scenario.name].some((r) => r.error || failures(r)) || undefined,
      check: checks[scenario.name].length ? checks[scenario.name] : undefined,
      rounds: samples[scenario.name],
    };
  }
  report(out, scenarios);
  return out;
}

function report(out, scenarios) {
  const rows = [['scenario', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'ratio', 'to', 'target', '']];
  for (const scenario of scenarios) {
    const r = out[scenario.name];
    const reference = scenario.versus && out[scenario.versus]?.reqPerSec;
    const ratio = reference && r.reqPerSec ? r.reqPerSec / reference : null;
    if (ratio !== null) r.ratio = ratio;
    const verdict =
      r.check ? `CHECK FAILED: ${r.check.join('; ')}` : r.failed ? 'ERRORS' : scenario.target === undefined || ratio === null ? '' : ratio >= scenario.target ? 'PASS' : 'MISS';
    rows.push([
      scenario.name,
      r.reqPerSec == null ? 'n/a' : fmtRate(r.reqPerSec),
      fmtMs(r.p50Ms),
      fmtMs(r.p99Ms),
      r.cpuUsPerRequest == null ? 'n/a' : String(Math.round(r.cpuUsPerRequest)),
      ratio === null ? '' : ratio.toFixed(2),
      ratio === null ? '' : scenario.versus,
      scenario.target === undefined ? '' : `>= ${scenario.target}`,
      verdict,
    ]);
  }
  console.log('');
  renderTable(rows, [0, 6, 8]);
}
