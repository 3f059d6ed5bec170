// Load worker: runs one scenario against one server (warm-up, then the measured run)
// and prints the measured result as one JSON line on stdout. bench/run.js starts it
// pinned to its own CPU, so the load generator never shares a core with the server.
//
//   node bench/load.js '{"engine":"autocannon"|"wrk","url":"http://127.0.0.1:PORT",
//     "scenario":"get-by-id","server":"baseline","size":10000,"connections":32,
//     "duration":10,"warmup":2,"timeout":10,"serverPid":123,"serverCpu":0,"loadCpu":1,
//     "workDir":"/tmp/somewhere","otherPids":[456],"dbProcessMatch":"rg_bench_1_ab12cd34"}'
//   (serverPid, serverCpu, loadCpu, workDir optional; otherPids: processes of the benchmark
//   itself, such as subscriber clients, not counted as other processes' CPU; dbProcessMatch:
//   a string in the command line of the database server's processes working for the server,
//   PostgreSQL's backends of its database, whose CPU is reported as dbCpu, not as other's;
//   fixedConnections: true keeps `connections` even when the server is very slow, see the end;
//   seed: of the request generator's PRNG, default 7)
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { eventLoadScenarios, scenarioFor, scenarios, requestFactory } from './scenarios.js';
import { queryScenarios } from './queries/scenarios.js';
import { ruleScenarios } from './rules/scenarios.js';
import { accountScenarios } from './accounts/scenarios.js';
import { mappedScenarios } from './mapped/scenarios.js';
import { prng } from './lib/seed.js';

const spec = JSON.parse(process.argv[2]);
const scenario = scenarioFor(
  [...scenarios, ...eventLoadScenarios, ...queryScenarios, ...ruleScenarios, ...accountScenarios, ...mappedScenarios].find((s) => s.name === spec.scenario) ?? fail(`unknown scenario ${spec.scenario}`),
  spec.server,
);
const nextRequest = requestFactory(scenario, {
  size: spec.size,
  server: spec.server,
  random: prng(spec.seed ?? 7),
  runId: Date.now().toString(36),
  headers: spec.headers ?? {},
});
let connections = spec.connections; // lowered for very slow scenarios, see the end

/** Busy and total jiffies of each CPU (Linux /proc/stat), or null elsewhere. */
function cpuTimes() {
  try {
    const lines = readFileSync('/proc/stat', 'utf8').split('\n').filter((l) => /^cpu\d+ /.test(l));
    return lines.map((line) => {
      const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number);
      const busy = user + nice + system + irq + softirq + steal;
      return { busy, total: busy + idle + iowait };
    });
  } catch {
    return null;
  }
}

/**
 * CPU ticks (USER_HZ = 100) of every user-space process, reaped children included, except
 * this worker, the harness and the server: whatever else ran during a measurement (`other`),
 * and apart those of the server's database processes (`db`, when spec.dbProcessMatch is set).
 */
function foreignTicks() {
  const ours = new Set([process.pid, process.ppid, spec.serverPid, ...(spec.otherPids ?? [])]);
  let total = 0;
  let db = 0;
  let entries;
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  for (const pid of entries) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(f[1]);
    if (ours.has(Number(pid)) || ours.has(ppid) || pid === '2' || ppid === 2) continue; // kernel threads too
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    if (spec.dbProcessMatch && isDbProcess(pid)) db += ticks;
    else total += ticks;
  }
  return { other: total, db };
}

/** PostgreSQL backends show their database's name in their process title. */
function isDbProcess(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(spec.dbProcessMatch);
  } catch {
    return false;
  }
}

/**
 * Runs `fn`; resolves to its result and how busy the server's and the load generator's
 * CPUs were meanwhile (0..1, kernel and softirq time included: loopback networking is
 * charged there, not to the process), and how much CPU other processes took (in CPUs;
 * anything above a few % means the figures were disturbed).
 */
async function measured(fn) {
  const before = cpuTimes();
  const foreign0 = foreignTicks();
  const server0 = processTicks(spec.serverPid);
  const t0 = performance.now();
  const result = await fn();
  const seconds = (performance.now() - t0) / 1000;
  const server1 = processTicks(spec.serverPid);
  const foreign1 = foreignTicks();
  const after = cpuTimes();
  const busy = (cpu) => {
    const a = before?.[cpu];
    const b = after?.[cpu];
    return a && b && b.total > a.total ? (b.busy - a.busy) / (b.total - a.total) : null;
  };
  return {
    result,
    serverCpu: spec.serverCpu === undefined ? null : busy(spec.serverCpu),
    loadCpu: spec.loadCpu === undefined ? null : busy(spec.loadCpu),
    // The server process's own CPU time (user + system, its threads included) in the run: with the
    // requests answered, its cost per request, which other processes on the machine disturb far
    // less than they disturb the request rate.
    serverProcessSeconds: server0 === null || server1 === null ? null : (server1 - server0) / 100,
    otherCpu: foreign0 === null || foreign1 === null ? null : Math.max(0, foreign1.other - foreign0.other) / 100 / seconds,
    ...(spec.dbProcessMatch && foreign0 && foreign1 ? { dbCpu: Math.max(0, foreign1.db - foreign0.db) / 100 / seconds } : {}),
  };
}

/** CPU ticks (USER_HZ = 100) process `pid` has used (user + system), or null. */
function processTicks(pid) {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return null;
  }
}

function fail(message) {
  process.stderr.write(`load.js: ${message}\n`);
  process.exit(2);
}

// ---------------------------------------------------------------- autocannon

async function runAutocannon(duration) {
  const result = await autocannon({
    url: spec.url,
    connections,
    duration,
    timeout: spec.timeout,
    requests: [
      {
        setupRequest: (req) => {
          const { method, path, headers, body } = nextRequest();
          return { ...req, method, path, headers: { ...req.headers, ...headers }, body };
        },
      },
    ],
  });
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]),
  );
  return {
    requests: result.requests.total,
    seconds: result.duration,
    reqPerSec: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors - result.timeouts, // autocannon counts timeouts as errors too
    timeouts: result.timeouts,
    statusCodes,
  };
}

// ---------------------------------------------------------------- wrk

// wrk sends requests from a pool built here (raw HTTP/1.1 requests, length-prefixed),
// cycling through it; one thread, so a pool of unique requests is used in order.
const WRK_SCRIPT = `
local reqs, n, i = {}, 0, 0
function init(args)
  local f = assert(io.open(args[1], "rb"))
  local data = f:read("*a")
  f:close()
  local pos = 1
  while pos <= #data do
    local nl = string.find(data, "\\n", pos, true)
    local len = tonumber(string.sub(data, pos, nl - 1))
    n = n + 1
    reqs[n] = string.sub(data, nl + 1, nl + len)
    pos = nl + 1 + len
  end
end
function request()
  i = i % n + 1
  return reqs[i]
end
function done(s, latency)
  io.write(string.format(
    'BENCHJSON {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\\n',
    s.requests, s.duration, s.errors.connect, s.errors.read, s.errors.write, s.errors.status, s.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

let workDir = null;
if (spec.engine === 'wrk') {
  if (spec.workDir) mkdirSync(spec.workDir, { recursive: true });
  workDir = mkdtempSync(join(spec.workDir ?? tmpdir(), 'wrk-'));
}
const removeWorkDir = () => workDir && rmSync(workDir, { recursive: true, force: true });
process.once('SIGTERM', () => {
  removeWorkDir(); // wrk, in this process group, got the signal too
  process.exit(143);
});
const host = new URL(spec.url).host;

function writePool(file, count) {
  const chunks = [];
  for (let k = 0; k < count; k++) {
    const { method, path, headers, body } = nextRequest();
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    if (body !== undefined) head += `Content-Length: ${Buffer.byteLength(body)}\r\n`;
    const raw = Buffer.from(`${head}\r\n${body ?? ''}`);
    chunks.push(Buffer.from(`${raw.length}\n`), raw);
  }
  writeFileSync(file, Buffer.concat(chunks));
}

function execWrk(args, limitSeconds) {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), limitSeconds * 1000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(text);
      else reject(new Error(`wrk exited with ${code}: ${text}`));
    });
  });
}

async function runWrk(duration, poolSize) {
  const script = join(workDir, 'pool.lua');
  const pool = join(workDir, 'pool.bin');
  writeFileSync(script, WRK_SCRIPT);
  writePool(pool, poolSize);
  const args = ['-t1', `-c${connections}`, `-d${duration}s`, '--timeout', `${spec.timeout}s`];
  const { result: out, ...cpu } = await measured(() =>
    execWrk([...args, '-s', script, spec.url, '--', pool], duration + 30),
  );
  const line = out.split('\n').find((l) => l.startsWith('BENCHJSON '));
  if (!line) throw new Error(`no result from wrk: ${out}`);
  const r = JSON.parse(line.slice('BENCHJSON '.length));
  const seconds = r.duration_us / 1e6;
  return {
    requests: r.requests,
    seconds,
    reqPerSec: r.requests / seconds,
    p50Ms: r.p50_us / 1000,
    p99Ms: r.p99_us / 1000,
    non2xx: r.status, // wrk counts responses with status >= 400
    errors: r.connect + r.read + r.write,
    timeouts: r.timeout,
    statusCodes: null,
    ...cpu,
  };
}

// ---------------------------------------------------------------- main

// A pool that cycles is fine for reads; for unique requests it must outlast the run.
const READ_POOL = 50_000;
const WARMUP_UNIQUE_POOL = 200_000;
const MAX_POOL = 3_000_000;

/** Median seconds per request over a few requests sent one after another. */
async function probe() {
  const times = [];
  const deadline = performance.now() + 3000;
  while (times.length < 5 && (times.length === 0 || performance.now() < deadline)) {
    const { method, path, headers, body } = nextRequest();
    const t0 = performance.now();
    const res = await fetch(spec.url + path, { method, headers, body, signal: AbortSignal.timeout(spec.timeout * 1000) });
    await res.arrayBuffer();
    times.push((performance.now() - t0) / 1000);
  }
  return times.sort((x, y) => x - y)[times.length >> 1];
}

try {
  // A server that needs seconds per request (json-server sorting 100k rows) cannot answer
  // 32 connections in a short run: it would complete next to nothing and leave a queue
  // behind. When not every connection could get a response, the run uses as many
  // connections as get two each; a server that works on one request at a time serves
  // the same rate either way.
  const latency = await probe();
  if (latency * spec.connections > spec.duration && !spec.fixedConnections) {
    connections = Math.max(1, Math.min(spec.connections, Math.floor(spec.duration / (2 * latency))));
  }
  let result;
  if (spec.engine === 'wrk') {
    const warm = await runWrk(spec.warmup, scenario.unique ? WARMUP_UNIQUE_POOL : READ_POOL);
    const poolSize = scenario.unique
      ? Math.min(MAX_POOL, Math.ceil(warm.reqPerSec * spec.duration * 2) + 10_000)
      : READ_POOL;
    result = await runWrk(spec.duration, poolSize);
    if (scenario.unique && result.requests > poolSize) result.poolWrapped = true; // repeats were sent
  } else {
    await runAutocannon(spec.warmup);
    const { result: r, ...cpu } = await measured(() => runAutocannon(spec.duration));
    result = { ...r, ...cpu };
  }
  result.connections = connections;
  result.probeLatencyMs = latency * 1000;
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  removeWorkDir();
}
