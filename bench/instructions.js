// restgraph's work per request, counted: `npm run bench:instructions` (builds first), or
// `node bench/instructions.js`.
//
// Requests per second on a shared VM move by 10-40 % from run to run, more than most changes
// to the request path do. This counts instead: each server runs under valgrind's callgrind,
// which counts the machine instructions its process executes in user space (Node, V8's
// generated code, SQLite), the same on every run to within a few per cent. For each scenario
// the server is warmed up (BENCH_INSTR_WARMUP requests, so V8 has optimised the path), then the
// count is reset, BENCH_INSTR_REQUESTS requests are sent, and the count read back (a window);
// windows are counted until the last BENCH_INSTR_WINDOWS of them agree within 3 % (at most 10
// more), and their median is reported, as instructions per request. The ratio
// baseline/restgraph reads like the req/s ratios of bench/run.js (1.0 = as little work as the
// hand-written server), with the same targets.
//
// What it does not count: the kernel's share, a third or more of a request's time. For reads
// that is the same socket work for both servers, except that a slower server's client sleeps
// more and is woken more often, at a cost to the server (see the README): a read's ratio here
// is a little higher than its req/s ratio. For writes the kernel's share is the WAL's I/O, which
// restgraph's group commit shares between the creates of one event-loop turn: creates do more
// instructions than the hand-written server's and still more of them per second. So this is
// for comparing changes to the request path, not a replacement for `npm run bench`.
//
// Requests come from this process over 8 keep-alive connections, one scenario at a time, the
// same requests as bench/run.js sends (bench/scenarios.js; restgraph's carry its API key).
// Every response must be a 2xx, or the run fails. Under valgrind a server runs 50-100 times
// slower: the defaults take about 30 minutes for the two servers, most of it in the list
// scenario.
//
// Needs valgrind (Debian: apt-get install valgrind). Env: BENCH_SERVERS (default
// "restgraph,baseline"; any SQLite server of bench/servers.js), BENCH_SCENARIOS (default
// "get-by-id,list sorted limit 20,create"), BENCH_SIZE (users seeded, default 100000),
// BENCH_INSTR_WARMUP (default 20000), BENCH_INSTR_REQUESTS (default 5000),
// BENCH_INSTR_WINDOWS (default 3), BENCH_KEEP=1 (keep the temporary directory: databases,
// server logs, callgrind's files). Results: printed, and bench/results/instructions.json.
//
// BENCH_INSTR_FUNCTIONS=1 also says where the instructions go: the servers run under
// `node --perf-basic-prof` and callgrind keeps each count's address, so the last window's
// instructions are listed by function, V8's generated code (optimised JavaScript) included, by
// name (bench/lib/callgrind-functions.js): the BENCH_INSTR_FUNCTIONS_TOP (default 40) largest are
// printed, and 200 go into the results. Compare two servers' lists, or two builds', to see
// what a change moved.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { hasCommand, killAllNow } from './lib/proc.js';
import { instructionsByFunction } from './lib/callgrind-functions.js';
import { fmtCount, renderTable } from './lib/report.js';
import { makeUsers, prng } from './lib/seed.js';
import { median, pool } from './lib/subscribers.js';
import { requestFactory, scenarioFor, scenarios as allScenarios } from './scenarios.js';
import { servers as allServers } from './servers.js';

const run = promisify(execFile);
// valgrind names its control pipes after the USER and HOST in the server's environment, and
// every server here is started with HOST=127.0.0.1 (bench/servers.js): callgrind_control must
// look for the same names.
const control = (option, pid) => run('callgrind_control', [option, String(pid)], { env: { ...process.env, HOST: '127.0.0.1' } });
const env = process.env;
const list = (value) => value?.split(',').map((s) => s.trim()).filter(Boolean);
const config = {
  servers: list(env.BENCH_SERVERS) ?? ['restgraph', 'baseline'],
  scenarios: list(env.BENCH_SCENARIOS) ?? ['get-by-id', 'list sorted limit 20', 'create'],
  size: Number(env.BENCH_SIZE ?? 100_000),
  warmup: Number(env.BENCH_INSTR_WARMUP ?? 20_000),
  requests: Number(env.BENCH_INSTR_REQUESTS ?? 5_000),
  windows: Number(env.BENCH_INSTR_WINDOWS ?? 3),
  connections: 8,
  functions: env.BENCH_INSTR_FUNCTIONS === '1',
  functionsTop: Number(env.BENCH_INSTR_FUNCTIONS_TOP ?? 40),
};
/** The last BENCH_INSTR_WINDOWS windows agree when the largest is within 3 % of the smallest. */
const STEADY = 1.03;
/** Windows counted at most beyond BENCH_INSTR_WINDOWS while waiting for them to agree. */
const MAX_EXTRA_WINDOWS = 10;
const SUBJECT = 'restgraph';
const REFERENCE = 'baseline';

function fail(message) {
  console.error(`bench/instructions.js: ${message}`);
  process.exit(1);
}

for (const [key, value] of Object.entries(config)) {
  if (typeof value === 'number' && !(Number.isSafeInteger(value) && value > 0)) fail(`${key} must be a positive integer, not ${value}`);
}
if (!hasCommand('valgrind')) fail('valgrind is not installed (Debian: apt-get install valgrind)');
const servers = config.servers.map((name) => allServers.find((s) => s.name === name) ?? fail(`unknown server ${name}`));
for (const server of servers) {
  if (server.name.endsWith('-pg')) fail(`${server.name}: only the SQLite servers are counted (PostgreSQL's own processes would not be)`);
  const reason = await server.unavailable();
  if (reason) fail(`${server.name}: ${reason}`);
}
const scenarios = config.scenarios.map((name) => allScenarios.find((s) => s.name === name) ?? fail(`unknown scenario ${name}`));

/** Sends `count` requests of the scenario over keep-alive connections; resolves to the statuses that were not 2xx. */
async function load(url, next, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.connections });
  const refused = new Map();
  const one = () =>
    new Promise((resolve, reject) => {
      const { method, path, headers, body } = next();
      const request = http.request(`${url}${path}`, { method, headers, agent }, (response) => {
        if (response.statusCode < 200 || response.statusCode > 299) refused.set(response.statusCode, (refused.get(response.statusCode) ?? 0) + 1);
        response.resume();
        response.on('end', resolve);
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(body);
    });
  try {
    await pool(count, config.connections, one);
  } finally {
    agent.destroy();
  }
  return refused;
}

/** Instructions counted since the last reset: callgrind dumps them to the next numbered file. */
async function dumpCount(pid, outFile, dumpNumber) {
  await control('--dump', pid);
  const file = `${outFile}.${dumpNumber}`;
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      const match = /^(?:totals|summary): (\d+)/m.exec(readFileSync(file, 'utf8'));
      if (match) return Number(match[1]);
    } catch {
      // not written yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`callgrind wrote no ${file}`);
}

/** What --perf-basic-prof leaves behind: the map, and V8's log in the server's working directory (the repository). */
function removePerfFiles(pid) {
  rmSync(`/tmp/perf-${pid}.map`, { force: true });
  const root = fileURLToPath(new URL('..', import.meta.url));
  for (const name of readdirSync(root)) if (name.startsWith('isolate-') && name.endsWith(`-${pid}-v8.log`)) rmSync(join(root, name), { force: true });
}

const dir = mkdtempSync(join(tmpdir(), 'restgraph-instr-'));
const cleanup = () => {
  killAllNow();
  if (env.BENCH_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
};
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

const { stdout: valgrindVersion } = await run('valgrind', ['--version']);
console.log(
  `restgraph bench, instructions: ${valgrindVersion.trim()} callgrind, node ${process.version}, ${fmtCount(config.size)} users; ` +
    `per scenario ${fmtCount(config.warmup)} warm-up requests, then ${config.windows} windows of ${fmtCount(config.requests)} ` +
    `(${config.connections} keep-alive connections) until ${config.windows} agree within ${Math.round((STEADY - 1) * 100)} %, their median`,
);

const users = makeUsers(config.size);
const shared = {};
const results = {};
try {
  for (const server of servers) {
    const serverDir = join(dir, server.name);
    mkdirSync(serverDir);
    const prepared = await server.prepare({ dir: serverDir, size: config.size, users, shared });
    const outFile = join(serverDir, 'callgrind.out');
    const callgrind = ['valgrind', '--tool=callgrind', `--callgrind-out-file=${outFile}`];
    const started = await prepared.start({
      launcher: config.functions ? ['env', 'NODE_OPTIONS=--perf-basic-prof', ...callgrind, '--dump-instr=yes'] : callgrind,
      readyTimeoutMs: 300_000,
    });
    let dumps = 0;
    try {
      for (const scenario of scenarios) {
        const applied = scenarioFor(scenario, server.name);
        if (applied === null) continue;
        const next = requestFactory(applied, {
          size: config.size,
          server: server.name,
          random: prng(7),
          runId: Date.now().toString(36),
          headers: prepared.headers ?? {},
        });
        const counted = async (count) => {
          const refused = await load(started.url, next, count);
          if (refused.size > 0) throw new Error(`${server.name} / ${scenario.name}: not 2xx: ${JSON.stringify(Object.fromEntries(refused))}`);
        };
        process.stdout.write(`  ${server.name} / ${scenario.name} ... `);
        await counted(config.warmup);
        // V8 keeps optimising (and collecting start-up garbage) well after the warm-up, and more
        // slowly under valgrind: windows are counted until the last few agree within STEADY.
        const perRequest = [];
        let last = [];
        do {
          await control('--zero', started.pid);
          await counted(config.requests);
          perRequest.push(Math.round((await dumpCount(started.pid, outFile, ++dumps)) / config.requests));
          last = perRequest.slice(-config.windows);
        } while ((last.length < config.windows || Math.max(...last) > STEADY * Math.min(...last)) && perRequest.length < config.windows + MAX_EXTRA_WINDOWS);
        const steady = Math.max(...last) <= STEADY * Math.min(...last);
        const result = { instructionsPerRequest: Math.round(median(last)), steady, windows: perRequest };
        (results[scenario.name] ??= {})[server.name] = result;
        console.log(
          `${fmtCount(Math.round(median(last)))} instructions/request${steady ? '' : ' ~ (never steady)'} (windows: ${perRequest.map(fmtCount).join(', ')})`,
        );
        if (config.functions) {
          const functions = instructionsByFunction(`${outFile}.${dumps}`, `/tmp/perf-${started.pid}.map`, config.requests);
          result.functions = functions.slice(0, 200);
          console.log(`    instructions/request by function, last window (${server.name} / ${scenario.name}):`);
          for (const { name, perRequest: count } of functions.slice(0, config.functionsTop)) console.log(`    ${fmtCount(count).padStart(9)}  ${name}`);
        }
      }
    } finally {
      await started.stop(60_000);
      await prepared.cleanup?.();
      if (config.functions && env.BENCH_KEEP !== '1') removePerfFiles(started.pid);
    }
  }
} catch (error) {
  cleanup();
  fail(error.message);
}

const names = servers.map((s) => s.name);
const hasPair = names.includes(SUBJECT) && names.includes(REFERENCE);
const rows = [['scenario', ...names.map((n) => `${n} instr/req`), ...(hasPair ? [`${REFERENCE}/${SUBJECT} (req/s target)`] : [])]];
for (const scenario of scenarios) {
  const row = results[scenario.name];
  if (row === undefined) continue;
  const ratio = hasPair && row[SUBJECT] && row[REFERENCE] ? row[REFERENCE].instructionsPerRequest / row[SUBJECT].instructionsPerRequest : undefined;
  if (ratio !== undefined) row.ratio = ratio;
  const target = scenario.targets?.[REFERENCE];
  rows.push([
    scenario.name,
    ...names.map((n) => (row[n] ? `${fmtCount(row[n].instructionsPerRequest)}${row[n].steady ? '' : ' ~'}` : '-')),
    ...(hasPair ? [ratio === undefined ? '-' : `${ratio.toFixed(2)}${target === undefined ? '' : ` (${target})`}`] : []),
  ]);
}
console.log();
renderTable(rows);
console.log("(user-space instructions only: the kernel's share of each request is not counted, see the top of this file; ~ = windows never agreed within 3 %)");

const resultsDir = fileURLToPath(new URL('results/', import.meta.url));
mkdirSync(resultsDir, { recursive: true });
writeFileSync(
  join(resultsDir, 'instructions.json'),
  `${JSON.stringify({ generatedAt: new Date().toISOString(), node: process.version, valgrind: valgrindVersion.trim(), config, scenarios: results }, null, 2)}\n`,
);
console.log(`Results written to ${join(resultsDir, 'instructions.json')}`);
cleanup();
