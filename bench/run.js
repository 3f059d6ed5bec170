// restgraph benchmark: `npm run bench` (builds first), or `node bench/run.js`.
//
// What it measures: HTTP throughput (requests per second) and p99 latency of the same
// REST scenarios (bench/scenarios.js) on several servers (bench/servers.js), each on the
// same seeded data, one server at a time, pinned to CPU 0, with the load generator
// (wrk when installed, else autocannon; 32 keep-alive connections) pinned to CPU 1:
//
//   restgraph         node dist/cli/main.js serve, in its default configuration (logging on),
//                     on SQLite; requests carry an API key
//   restgraph-ratelimited  the same with a request quota on (RESTGRAPH_RATE_LIMIT, never reached)
//   restgraph-public  the same with users readable and writable without a token (the default
//                     anonymous quota off, as before it existed: every request comes from one address)
//   restgraph-sync-normal  the same with RESTGRAPH_SQLITE_SYNCHRONOUS=NORMAL (commits not waiting
//                     for the disk): runs the create scenario only, to show what durability costs
//   baseline          bench/baseline/server.js: hand-written Fastify + better-sqlite3 with
//                     prepared statements and nothing else, the ceiling for a Node stack
//   restgraph-dbjson  `restgraph serve db.json` on a json-server db.json of N posts (comments and a
//                     profile beside them): the schema inferred, every resource public, json-server's
//                     query language on; its first start imports the file (the anonymous quota off)
//   json-server       json-server 0.17.4 (the line most projects install) on its own copy of the
//                     same db.json, the usual "instant REST API"; it writes the whole file back on
//                     every write, as it does for its users, and that is measured as it is
//   json-server-1x    json-server 1.0.0-beta.15 on the same db.json (for reference)
//   restgraph-pg      restgraph as `restgraph` (default configuration, API key), on PostgreSQL
//   baseline-pg       bench/baseline-pg/server.js: the baseline's twin on Fastify + pg (a pool
//                     of 10 connections, like restgraph's; plain parameterised queries)
//
// The PostgreSQL pair runs get-by-id, list and create, each server on a fresh empty database of
// its own (rg_bench_<pid>_<random>, created on the server BENCH_POSTGRES_URL names, default
// postgres://postgres@127.0.0.1:5432/postgres, whose role needs CREATEDB; PostgreSQL 13 or
// later), seeded like the SQLite ones and dropped when the server is done, or by the exit
// handler when the run fails or is interrupted. When PostgreSQL cannot be reached the pair is
// skipped with the reason. PostgreSQL's own processes are not pinned: they compete with the
// server on CPU 0 and with the load generator on CPU 1, so the pair's figures are less clean;
// their CPU is reported apart ("postgres CPU"), not counted as other processes'.
//
// How to read the ratios: restgraph/baseline is the share of the hand-written ceiling
// that restgraph keeps (1.0 = no overhead at all; targets: >= 0.8 for get-by-id and
// create, >= 0.7 for list); restgraph-pg/baseline-pg the same on PostgreSQL, with the same
// targets. restgraph-dbjson/json-server is how many times faster restgraph serving a db.json is
// than json-server 0.17 serving the same file (target >= 10), in the db.json scenarios, which
// only the three db.json servers run (bench/dbjson-scenarios.js: get-by-id, a list with _sort,
// _order and _limit, create); restgraph-dbjson/json-server-1x is shown without a target. The
// users scenarios do not run on them. A target only PASSes when restgraph answered every
// request with 2xx; any non-2xx or socket error is counted and printed, marked with `!`.
// Each run also reports how busy the server's CPU was (near 100 % = the server was the
// bottleneck, as intended) and warns when other processes took CPU meanwhile: the
// figures of a machine busy with anything else (tests, builds) are not worth comparing.
// Even on an idle VM runs vary by 10-20 %: compare ratios taken in the same run, and
// use BENCH_ROUNDS=3 before judging a ratio near its target.
//
// Env: BENCH_SIZES (rows seeded: users, and posts in the db.json; default "10000,100000"), BENCH_DURATION (seconds per
// measured run, default 10), BENCH_WARMUP (seconds, default 2, discarded),
// BENCH_CONNECTIONS (default 32), BENCH_ROUNDS (default 1; more repeats everything on
// fresh data, servers interleaved, and reports medians), BENCH_LOADGEN (wrk | autocannon;
// default wrk when on PATH: with one core it keeps the server saturated where autocannon
// itself runs out of CPU), BENCH_SERVERS / BENCH_SCENARIOS (comma-separated names to
// run only those REST servers and scenarios, e.g. BENCH_SERVERS=restgraph-pg,baseline-pg;
// BENCH_SCENARIOS=db.json: the three db.json scenarios, e.g. with
// BENCH_SERVERS=restgraph-dbjson,json-server BENCH_SIZES=100000 BENCH_EVENTS=0 for the json-server
// comparison alone, a few minutes; BENCH_SCENARIOS=none runs no REST scenario), BENCH_POSTGRES_URL (see above),
// BENCH_TIMEOUT (seconds before the whole run is aborted; default from the plan),
// BENCH_KEEP=1 (keep the temporary directory: databases, server stderr logs; with
// BENCH_STDOUT_TO_LOG=1 the servers' stdout goes there too, e.g. node's --trace-gc lines),
// BENCH_BEFORE (path to another checkout of restgraph, built with `npm run build`: adds the
// server `restgraph-before`, that checkout served exactly as `restgraph` is, and the ratio
// restgraph/restgraph-before, to measure what a change costs or gains side by side in one run;
// e.g. `git worktree add ../before HEAD~1`, build it, then
// BENCH_BEFORE=../before BENCH_SERVERS=restgraph,restgraph-before npm run bench),
// BENCH_VARIANTS (JSON: more servers `restgraph-<name>` / `baseline-<name>` served from other
// checkouts, by another Node binary or with more environment, several in one run, with their
// ratios; bench/lib/variants.js says how).
//
// Then the query benchmarks (bench/queries.js: filtered lists with `or`, relation paths and
// `any()`, an aggregate and a full-text search on 100,000 orders, each against the plain sorted
// list of the same run; BENCH_QUERIES=0 skips them, BENCH_QUERY_SCENARIOS picks some), the rule
// benchmarks (bench/rules.js: get-by-id and a sorted list with a row rule on the resource against
// the same without it, one JWT; BENCH_RULES=0 skips them), the mapped-database benchmarks
// (bench/mapped.js: get one rental by its key, a customer's rentals sorted by date and a nested
// GraphQL query on the film-rental sample database mapped by `restgraph init --from`, against the
// same on restgraph's own tables with the same rows; BENCH_MAPPED=0 skips them), the accounts benchmarks
// (bench/accounts.js: sign-ins per second, Argon2id-bound, and get-by-id with an account's access
// token against the same with an API key; BENCH_ACCOUNTS=0 skips them), the file benchmarks
// (bench/files.js: 1 MB uploads and downloads against a minimal Fastify + @fastify/multipart + fs
// server doing the same; BENCH_FILES=0 skips them), and the
// event benchmarks (bench/events.js: webhook deliveries and their latency, fan-out
// to 1,000 GraphQL subscribers and their memory, write throughput with subscribers attached,
// and realtime: 10,000 graphql-ws subscribers and 1,000 SSE consumers under a write load, also
// on 3 instances on PostgreSQL), on restgraph only, whatever BENCH_SERVERS and BENCH_SCENARIOS
// select: BENCH_EVENTS=0 skips them, BENCH_EVENT_SCENARIOS picks some (e.g. realtime; the
// names: webhooks, fanout, writes-with-subscribers, realtime, realtime-pg); their other
// settings are described at the top of bench/events.js. So `BENCH_SCENARIOS=none BENCH_EVENTS=0`
// runs only the query, rule, mapped-database, accounts and file benchmarks, and `BENCH_QUERIES=0
// BENCH_RULES=0 BENCH_MAPPED=0 BENCH_ACCOUNTS=0 BENCH_FILES=0 BENCH_EVENTS=0` only REST.
//
// Results: printed tables, and bench/results/latest.json (`sizes`: REST, the PostgreSQL pair's
// results and ratios next to the others, under their own server names, and `postgresVersion`;
// `queries`: the query benchmarks; `rules`: the rule benchmarks; `mapped`: the mapped-database
// benchmarks; `accounts`: the accounts benchmarks;
// `events`: the event benchmarks). A part not run this time is kept from the previous file, with
// its own generatedAt (the top-level one for REST, events.generatedAt for the events, an event
// scenario's own generatedAt when it was kept from an earlier run than the others).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { accountConfig, accountPlannedSeconds, runAccounts } from './accounts.js';
import { DBJSON_SCENARIOS, DBJSON_SERVERS } from './dbjson-scenarios.js';
import { eventConfig, eventPlannedSeconds, runEvents } from './events.js';
import { queryConfig, queryPlannedSeconds, runQueries } from './queries.js';
import { ruleConfig, rulePlannedSeconds, runRules } from './rules.js';
import { mappedConfig, mappedPlannedSeconds, runMapped } from './mapped.js';
import { fileConfig, filePlannedSeconds, runFiles } from './files.js';
import { dropDatabasesNow, postgresVersion } from './lib/postgres.js';
import { canPin, hasCommand, killAllNow, runJsonWorker } from './lib/proc.js';
import { computeRatios, describeFailures, failures, fmtCount, fmtMs, fmtPct, fmtRate, OTHER_CPU_LIMIT, printTable } from './lib/report.js';
import { makeUsers } from './lib/seed.js';
import { requester } from './lib/check-requests.js';
import { scenarioFor, scenarios as allScenarios } from './scenarios.js';
import { SERVER_CPU, servers as allServers } from './servers.js';

const LOAD_CPU = 1;
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
const restOff = env.BENCH_SCENARIOS?.trim() === 'none';
// `db.json` in BENCH_SCENARIOS stands for the json-server comparison's scenarios.
const scenarioNames = list(env.BENCH_SCENARIOS)?.flatMap((n) => (n === 'db.json' ? DBJSON_SCENARIOS : [n]));
const scenarios = restOff ? [] : pick(allScenarios, scenarioNames);
const unknownScenarios = restOff ? [] : (scenarioNames ?? []).filter((n) => !allScenarios.some((s) => s.name === n));
// A server none of the selected scenarios applies to (json-server with only the users
// scenarios, say) is left out, and said so.
const selectedServers = pick(allServers, list(env.BENCH_SERVERS));
const servers = selectedServers.filter((server) => scenarios.some((s) => scenarioFor(s, server.name)));
const idleServers = selectedServers.filter((server) => !servers.includes(server)).map((s) => s.name);
let events;
let queries;
let rules;
let mapped;
let accounts;
let files;
try {
  events = eventConfig(env);
  queries = queryConfig(env);
  rules = ruleConfig(env);
  mapped = mappedConfig(env);
  accounts = accountConfig(env);
  files = fileConfig(env);
} catch (error) {
  fail(error.message);
}

for (const [key, value] of Object.entries({ ...config, sizes: Math.min(...config.sizes) })) {
  if (typeof value === 'number' && !(value > 0)) fail(`bad setting ${key}: ${value}`);
}
if (!['wrk', 'autocannon'].includes(config.engine)) fail(`BENCH_LOADGEN must be wrk or autocannon`);
if (config.engine === 'wrk' && !hasCommand('wrk', ['-v'])) fail('BENCH_LOADGEN=wrk but wrk is not on PATH');
if (unknownScenarios.length) fail(`BENCH_SCENARIOS: unknown ${unknownScenarios.join(', ')} (known: ${allScenarios.map((s) => s.name).join(', ')}, db.json, or none)`);
if (!restOff && (!servers.length || !scenarios.length)) fail('BENCH_SERVERS / BENCH_SCENARIOS select nothing');
if (restOff && !events.enabled && !queries.enabled && !rules.enabled && !mapped.enabled && !accounts.enabled && !files.enabled) {
  fail('BENCH_SCENARIOS=none, BENCH_QUERIES=0, BENCH_RULES=0, BENCH_MAPPED=0, BENCH_ACCOUNTS=0, BENCH_FILES=0 and BENCH_EVENTS=0: nothing to run');
}

function fail(message) {
  console.error(`bench: ${message}`);
  process.exit(2);
}

// ---------------------------------------------------------------- safety net

// Everything on disk (databases, server logs, wrk request pools) lives under sessionDir;
// on any exit every child process group is killed, sessionDir removed and every PostgreSQL
// database of the run still there dropped.
const sessionDir = mkdtempSync(join(tmpdir(), 'restgraph-bench-'));
process.on('exit', () => {
  killAllNow();
  dropDatabasesNow();
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
  (scenarios.length ? config.sizes.length * config.rounds * (servers.length * scenarios.length * (config.warmup + config.duration + 30) + 180) : 0) +
  queryPlannedSeconds(queries) +
  rulePlannedSeconds(rules) +
  mappedPlannedSeconds(mapped) +
  accountPlannedSeconds(accounts) +
  filePlannedSeconds(files) +
  eventPlannedSeconds(events);
const timeoutSeconds = Number(env.BENCH_TIMEOUT ?? Math.ceil(plannedSeconds * 1.5));
setTimeout(() => {
  console.error(`\nbench: aborted after ${timeoutSeconds} s (BENCH_TIMEOUT)`);
  process.exit(1);
}, timeoutSeconds * 1000).unref();

// ---------------------------------------------------------------- load

/** Runs bench/load.js pinned to the load CPU; resolves to its JSON result. */
async function runLoad({ url, pid, scenario, server, size, headers, dbProcessMatch }) {
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
    dbProcessMatch,
    workDir: join(sessionDir, 'load'),
    ...(canPin ? { serverCpu: SERVER_CPU, loadCpu: LOAD_CPU } : {}),
  };
  return runJsonWorker(join(benchDir, 'load.js'), spec, {
    cpu: LOAD_CPU,
    logFile: join(sessionDir, 'load.stderr.log'),
    timeoutMs: (config.warmup + config.duration + 90) * 1000,
    what: 'load generator',
  });
}

// ---------------------------------------------------------------- one size

async function benchSize(size) {
  const users = makeUsers(size);
  const out = { size, servers: {}, scenarios: [] };
  const samples = scenarios.map(() => ({})); // [scenario][server] -> results of each round
  for (const scenario of scenarios) out.scenarios.push({ name: scenario.name, results: {}, checks: {} });
  const posts = servers.some((s) => DBJSON_SERVERS.includes(s.name)) ? ` (db.json servers: ${fmtCount(size)} posts)` : '';
  console.log(`\n=== ${fmtCount(size)} users${posts} ===`);
  for (const server of servers) {
    const reason = await server.unavailable();
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
  printTable(out, { servers, config, postgresVersion: postgresVersion() });
  return out;
}

/** Seeds one server, starts it, runs every scenario that applies, stops it. */
async function benchServer({ server, size, users, dir, shared, tag, out, samples }) {
  let instance;
  let running;
  try {
    const t0 = Date.now();
    instance = await server.prepare({ dir, size, users, shared });
    const seeded = (Date.now() - t0) / 1000;
    // Start-up: until it answers (restgraph-dbjson's first start imports its db.json).
    const startSeconds = out.servers[server.name]?.startSeconds ?? [];
    out.servers[server.name] = { layout: instance.layout, startSeconds };
    const t1 = Date.now();
    running = await instance.start();
    startSeconds.push((Date.now() - t1) / 1000);
    console.log(`  ${tag}${server.name}: seeded in ${seeded.toFixed(1)} s, started in ${startSeconds.at(-1).toFixed(1)} s`);
  } catch (error) {
    console.log(`  ${tag}${server.name}: FAILED: ${error.message}`);
    out.servers[server.name] = { error: error.message };
    await cleanup(instance, server.name, tag);
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
        result = await runLoad({
          url: running.url,
          pid: running.pid,
          scenario,
          server: server.name,
          size,
          headers: instance.headers,
          dbProcessMatch: instance.dbProcessMatch,
        });
        console.log(
          `${fmtRate(result.reqPerSec)} req/s, p99 ${fmtMs(result.p99Ms)} ms` +
            (result.serverCpu == null ? '' : `, server CPU ${fmtPct(result.serverCpu)}`) +
            (result.loadCpu == null ? '' : `, load CPU ${fmtPct(result.loadCpu)}`) +
            (result.dbCpu == null ? '' : `, postgres CPU ${fmtPct(result.dbCpu)}`) +
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
    await cleanup(instance, server.name, tag);
  }
}

/** Removes what prepare() made outside the round's directory (a PostgreSQL database). */
async function cleanup(instance, name, tag) {
  try {
    await instance?.cleanup?.();
  } catch (error) {
    console.log(`  ${tag}${name}: cleanup failed (the exit handler tries again): ${error.message}`);
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
    dbCpu: median(ok.map((r) => r.dbCpu)) ?? undefined,
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
  if (idleServers.length && servers.length) console.log(`(${idleServers.join(', ')}: none of the selected scenarios applies, not started)`);
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
  if (scenarios.length) for (const n of config.sizes) results.sizes.push(await benchSize(n));
  if (postgresVersion()) results.postgresVersion = postgresVersion();
  if (queries.enabled) results.queries = await runQueries({ config: queries, sessionDir, engine: config.engine, connections: config.connections });
  if (rules.enabled) results.rules = await runRules({ config: rules, sessionDir, engine: config.engine, connections: config.connections });
  if (mapped.enabled) results.mapped = await runMapped({ config: mapped, sessionDir, engine: config.engine, connections: config.connections });
  if (accounts.enabled) results.accounts = await runAccounts({ config: accounts, sessionDir, engine: config.engine, connections: config.connections });
  if (files.enabled) results.files = await runFiles(files);
  if (events.enabled) {
    results.events = await runEvents({ config: events, sessionDir, engine: config.engine, connections: config.connections, keep: config.keep });
  }
  const resultsDir = join(benchDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, 'latest.json');
  writeFileSync(file, `${JSON.stringify(mergePrevious(file, results), null, 2)}\n`);
  console.log(`\nResults written to ${file}`);
}

/** This run's results, with the part it did not run (REST or events) kept from the previous file. */
function mergePrevious(file, results) {
  let previous;
  try {
    previous = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return results;
  }
  const { events: previousEvents, queries: previousQueries, rules: previousRules, mapped: previousMapped, accounts: previousAccounts, files: previousFiles, ...previousRest } = previous;
  const merged = scenarios.length
    ? results
    : { ...previousRest, events: results.events, queries: results.queries, rules: results.rules, mapped: results.mapped, accounts: results.accounts, files: results.files };
  if (!events.enabled && previousEvents) merged.events = previousEvents;
  if (!queries.enabled && previousQueries) merged.queries = previousQueries;
  if (!rules.enabled && previousRules) merged.rules = previousRules;
  if (!mapped.enabled && previousMapped) merged.mapped = previousMapped;
  if (!accounts.enabled && previousAccounts) merged.accounts = previousAccounts;
  if (!files.enabled && previousFiles) merged.files = previousFiles;
  // Event scenarios not run this time are kept from the previous run, each with its own generatedAt.
  if (events.enabled && previousEvents?.scenarios) {
    for (const [name, result] of Object.entries(previousEvents.scenarios)) {
      if (!(name in merged.events.scenarios)) merged.events.scenarios[name] = { generatedAt: previousEvents.generatedAt, ...result };
    }
  }
  return merged;
}

main().catch((error) => {
  console.error(`bench: ${error.stack ?? error.message}`);
  process.exit(1);
});
