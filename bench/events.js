// restgraph event benchmarks, run by bench/run.js after the REST scenarios (`npm run bench`).
//
// What it measures, on restgraph alone (node dist/cli/main.js serve, default configuration,
// logging on, RESTGRAPH_ADMIN_TOKEN set to a random token), pinned to CPU 0, a fresh SQLite
// file seeded with 10,000 users for each scenario; every client (receiver, subscribers,
// writers) runs in worker processes pinned to CPU 1 (bench/event-worker.js, bench/load.js):
//
//   webhooks       a receiver on loopback registered for user.created; a burst of 5,000 creates
//                  (8 keep-alive connections), then 200 creates one at a time (20 ms apart).
//                  Deliveries/s = distinct deliveries / time from the first to the last one of
//                  the burst; also after the last create (deliveries alone, with the server's
//                  CPU share then: near 100 % = the delivery path is CPU-bound). Commit-to-delivery latency = arrival at the receiver - the event's
//                  `timestamp` (stamped in the writing transaction, ms precision, same clock),
//                  p50/p99: in the burst it is mostly the queue (each endpoint gets its
//                  deliveries one at a time, in order), paced it is the path itself. Every
//                  event must arrive: distinct webhook-ids are counted, duplicates, deliveries
//                  out of order and bad signatures (standardwebhooks' verify) reported.
//   fanout         1,000 graphql-ws clients subscribed to `userCreated { id name }`.
//                  Memory per subscriber = server RSS (VmRSS, median of 5 samples after 1 s
//                  settling) with them - before them, / 1,000: indicative, the heap's growth
//                  and GC timing move it by a few MB. Fan-out time: one create, from its 201
//                  response (and from the row's createdAt, stamped in the same transaction as
//                  the event) until the last client has the event; 3 unmeasured, then 10
//                  measured repeats, median and max. The clients share one CPU, so the last
//                  arrival includes their own processing of 1,000 messages (their CPU share in
//                  that time is printed; near 100 % they, not the server, set the pace).
//   writes-with-subscribers
//                  create req/s (bench/load.js, the REST `create` scenario: wrk or autocannon,
//                  BENCH_CONNECTIONS connections, 1 s warm-up + BENCH_EVENT_DURATION s) on one
//                  server: (a) no subscribers, (b) 1,000 subscribers of `userUpdated(id)` of
//                  seeded rows, which these writes do not concern, (c) 1,000 subscribers of
//                  `userCreated`, which receive every write. (a) and (b) alternate
//                  BENCH_EVENT_ROUNDS times; medians. Target b/a >= 0.8: what idle subscribers
//                  cost the writes. c/a is informative (every write becomes 1,000 messages);
//                  its deliveries/s are messages per second while they arrived (100 ms buckets),
//                  and every subscriber must receive every write of the run (else `!`).
//   realtime       deliveries to many listeners under a write load: BENCH_REALTIME_SUBSCRIBERS
//                  (10,000) graphql-ws subscriptions, BENCH_REALTIME_PER_SOCKET (1) to a
//                  WebSocket, half `userCreated { id name }`, half `userUpdated(id) { id bio }`
//                  over 1,000 watched ids (1..1,000, so 5 subscribers each), plus
//                  BENCH_REALTIME_SSE (1,000) consumers of GET /v1/events?types=user.created
//                  (not of every type: under a full-speed write load each would get every
//                  update, thousands of frames a second each, millions in all, which measures
//                  the clients' CPU and not the server). The clients are bench/lib/realtime.js
//                  (graphql-transport-ws spoken directly on `ws`, cheap enough for 11,000
//                  connections on the load CPU; both processes need ~11,200 open files: the
//                  worker checks its limit and says so). The write load is bench/load.js's
//                  `update-unwatched` and `update-watched` scenarios (PATCH of a seeded user's
//                  bio, ids uniform over 1,001..10,000, which nobody watches, or over the watched
//                  1..1,000, each update then delivered to 5 subscribers), 1 s warm-up +
//                  BENCH_EVENT_DURATION s, after 15 s of `update` not measured (the server is
//                  new): (a) update req/s of each with no listener, (b) the same server and data
//                  with all of them attached; target b/a >= 0.8 for both. Server CPU per write
//                  (its /proc stat over the writes answered) for each run, and per delivery:
//                  (CPU per watched write with listeners - without) / 5. Latency: while (c), the
//                  watched writes again, runs, every 100 ms
//                  a probe, alternately a create (reaching the 5,000 userCreated subscribers and
//                  the 1,000 SSE consumers) and an update of a watched id (its 5 subscribers),
//                  sent without waiting for the previous ones (at most 20 unanswered); before,
//                  with no load, 20 of each one at a time (after 3 unmeasured). Latency of a
//                  probe = arrival at the last of its listeners - the row's createdAt/updatedAt
//                  (stamped in the writing transaction: commit-to-client or a little more);
//                  p50/p99 over the probes, target p99 < 250 ms (for the creates under load:
//                  with the default figures, 6,000 listeners; the probe count is small, so
//                  p99 is close to the max). Every probe must reach every listener it concerns
//                  exactly once (a bitmap per probe: missing, duplicate and misdirected
//                  deliveries are counted, `!` when any). Memory per listener = server RSS
//                  after attaching and proving them live - before, / listeners; target < 20 KiB.
//                  (d) every third WebSocket stops reading while BENCH_REALTIME_PAUSED_BURST (200)
//                  creates are written (bench/burst.js): server RSS then, and once read again.
//   realtime-pg    the same on PostgreSQL with 3 instances of the server (all on CPU 0, one
//                  fresh database: BENCH_POSTGRES_URL, as bench/run.js), sockets, SSE consumers
//                  and probes spread round-robin over the instances, the write load from 3
//                  load generators at once, one per instance (connections split; req/s summed),
//                  RSS summed over the instances. Skipped with the reason when PostgreSQL cannot
//                  be reached. Deliveries across instances go through the outbox and NOTIFY, so
//                  this is the multi-instance path; on 2 cores it is not a scale-out figure.
//
// How to read it: figures of this shared 2-core machine vary by 10-40 % run to run; the ratio
// b/a of one run is what the target is about. A `!` marks a result with failures (lost or
// duplicate events, subscription errors, non-2xx writes), `~` a measurement caveat.
//
// Env: BENCH_EVENTS (1 = run them, the default, also when BENCH_SCENARIOS selects only REST
// scenarios; 0 = skip), BENCH_EVENT_SCENARIOS (comma-separated: webhooks, fanout,
// writes-with-subscribers, realtime, realtime-pg; default all), BENCH_EVENT_SUBSCRIBERS (default 1000),
// BENCH_EVENT_WEBHOOKS (creates in the webhook burst, default 5000), BENCH_EVENT_DURATION
// (seconds per measured write run, default 5), BENCH_EVENT_ROUNDS (a/b alternations, default 2),
// BENCH_REALTIME_SUBSCRIBERS (graphql-ws subscriptions of realtime, default 10000, even, at
// least 2,000: 1,000 watched ids), BENCH_REALTIME_PER_SOCKET (subscriptions per WebSocket,
// default 1; at most 100, the server's default RESTGRAPH_GRAPHQL_MAX_WS_OPERATIONS),
// BENCH_REALTIME_SSE (SSE consumers, default 1000).
// Results: a printed table, and `events` in bench/results/latest.json.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase, dropDatabase, postgresUnavailable, seedPostgres } from './lib/postgres.js';
import { canPin, describeExit, logTail, runJsonWorker, startProcess, stopProcess } from './lib/proc.js';
import { fmtCount, fmtMs, fmtPct, fmtRate, renderTable } from './lib/report.js';
import { makeUsers } from './lib/seed.js';
import { median } from './lib/subscribers.js';
import { createAndSeed, SERVER_CPU, serveRestgraph } from './servers.js';

export const eventScenarioNames = ['webhooks', 'fanout', 'writes-with-subscribers', 'realtime', 'realtime-pg'];
const LOAD_CPU = 1;
const SEED_ROWS = 10_000;
const WEBHOOK_CONCURRENCY = 8;
const PACED = 200;
const PACED_GAP_MS = 20;
const FANOUT_REPEATS = 10;
const WRITE_WARMUP = 1;
const TARGET_B_A = 0.8;
const REALTIME_WATCHED = 1000;
const REALTIME_WARMUP = 15;
const REALTIME_PG_INSTANCES = 3;
const REALTIME_GAP_MS = 200;
const REALTIME_IDLE_PROBES = 20;
const REALTIME_DRAIN_MS = 60_000;
const REALTIME_TARGET_MS = 250;
const REALTIME_TARGET_BYTES = 20 * 1024;
/** Creates written while a third of the realtime listeners do not read (window d). */
const REALTIME_PAUSED_BURST = Number(process.env.BENCH_REALTIME_PAUSED_BURST ?? 200);
const benchDir = fileURLToPath(new URL('.', import.meta.url));
const workerScript = join(benchDir, 'event-worker.js');

const list = (value) => value?.split(',').map((s) => s.trim()).filter(Boolean);

/** The event benchmarks' settings from the environment; throws on unknown names and bad numbers. */
export function eventConfig(env) {
  const scenarios = list(env.BENCH_EVENT_SCENARIOS) ?? eventScenarioNames;
  const unknown = scenarios.filter((s) => !eventScenarioNames.includes(s));
  if (unknown.length) throw new Error(`BENCH_EVENT_SCENARIOS: unknown ${unknown.join(', ')} (known: ${eventScenarioNames.join(', ')})`);
  if (!['0', '1', undefined].includes(env.BENCH_EVENTS)) throw new Error('BENCH_EVENTS must be 0 or 1');
  const config = {
    enabled: env.BENCH_EVENTS !== '0' && scenarios.length > 0,
    scenarios,
    subscribers: Number(env.BENCH_EVENT_SUBSCRIBERS ?? 1000),
    webhookEvents: Number(env.BENCH_EVENT_WEBHOOKS ?? 5000),
    duration: Number(env.BENCH_EVENT_DURATION ?? 5),
    rounds: Number(env.BENCH_EVENT_ROUNDS ?? 2),
    realtimeSubscribers: Number(env.BENCH_REALTIME_SUBSCRIBERS ?? 10_000),
    realtimePerSocket: Number(env.BENCH_REALTIME_PER_SOCKET ?? 1),
    realtimeSse: Number(env.BENCH_REALTIME_SSE ?? 1000),
  };
  for (const key of ['subscribers', 'webhookEvents', 'duration', 'rounds', 'realtimeSubscribers', 'realtimePerSocket']) {
    if (!(Number.isInteger(config[key]) && config[key] > 0)) throw new Error(`bad event setting ${key}: ${config[key]}`);
  }
  if (!(Number.isInteger(config.realtimeSse) && config.realtimeSse >= 0)) throw new Error(`bad event setting realtimeSse: ${config.realtimeSse}`);
  if (config.subscribers > SEED_ROWS) throw new Error(`BENCH_EVENT_SUBSCRIBERS: at most ${SEED_ROWS}`);
  if (config.realtimeSubscribers < 2 * REALTIME_WATCHED || config.realtimeSubscribers % 2) {
    throw new Error(`BENCH_REALTIME_SUBSCRIBERS: an even number, at least ${2 * REALTIME_WATCHED} (half of them watch ${REALTIME_WATCHED} ids)`);
  }
  if (config.realtimePerSocket > 100) throw new Error('BENCH_REALTIME_PER_SOCKET: at most 100 (the server default RESTGRAPH_GRAPHQL_MAX_WS_OPERATIONS)');
  return config;
}

/** Seconds the event benchmarks are planned to take (for the harness's overall time limit). */
export function eventPlannedSeconds(config) {
  if (!config.enabled) return 0;
  const write = WRITE_WARMUP + config.duration + 15;
  const plan = {
    webhooks: 20 + config.webhookEvents / 100 + (PACED * (PACED_GAP_MS + 10)) / 1000,
    fanout: 20 + config.subscribers / 50 + FANOUT_REPEATS,
    'writes-with-subscribers': 10 + config.rounds * 2 * write + write + (config.rounds + 1) * (5 + config.subscribers / 50),
    // Two write runs, attaching (~10 ms a listener when the server is slow), proving them live,
    // the idle probes, the drain after the loaded run.
    realtime: 60 + REALTIME_WARMUP + 2 * write + (config.realtimeSubscribers + config.realtimeSse) / 100 + REALTIME_IDLE_PROBES + REALTIME_DRAIN_MS / 1000,
  };
  plan['realtime-pg'] = plan.realtime + 30;
  return config.scenarios.reduce((s, name) => s + plan[name], 0);
}

/** The environment restgraph runs with here: a random admin token, loopback webhooks allowed. */
function restgraphEnv(databaseUrl) {
  const token = randomBytes(24).toString('base64url');
  const env = { ...process.env, DATABASE_URL: databaseUrl, RESTGRAPH_ADMIN_TOKEN: token, RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' };
  delete env.LOG_LEVEL;
  delete env.RESTGRAPH_LOG_FORMAT; // JSON lines, as measured: the readable form is for a terminal
  delete env.RESTGRAPH_SCHEMA;
  return { env, token };
}

const restgraphStarter = (env, logFile, name = 'restgraph') => () => serveRestgraph({ name, env, logFile });

/** restgraph on a fresh seeded database, with a random admin token and loopback webhooks allowed. */
async function startRestgraph(dir) {
  const dbFile = join(dir, 'events.db');
  const logFile = join(dir, 'restgraph.stderr.log');
  const { env, token } = restgraphEnv(`sqlite:${dbFile}`);
  const start = restgraphStarter(env, logFile);
  await createAndSeed(start, dbFile, makeUsers(SEED_ROWS), 'restgraph');
  const server = await start();
  return { ...server, urls: [server.url], pids: [server.pid], token, logFile };
}

/**
 * `instances` restgraph servers on one fresh PostgreSQL database (BENCH_POSTGRES_URL), seeded
 * like the SQLite one, all pinned to the server CPU; stop() stops them all and drops the database.
 */
async function startRestgraphPostgres(dir, instances) {
  const unavailable = await postgresUnavailable();
  if (unavailable) throw new Error(`skipped: ${unavailable}`);
  const database = await createDatabase();
  const { env, token } = restgraphEnv(database.url);
  const logFile = (k) => join(dir, `restgraph-${k}.stderr.log`);
  const started = [];
  const stopAll = async (graceMs) => {
    const exits = await Promise.all(started.splice(0).map((s) => s.stop(graceMs)));
    await dropDatabase(database.name).catch(() => undefined); // else the harness's exit handler drops it
    return exits.find((e) => e.code !== 0) ?? exits[0] ?? { code: 0, signal: null };
  };
  try {
    const first = await restgraphStarter(env, logFile(0), 'restgraph-pg')();
    const exit = await first.stop(15_000);
    if (exit.code !== 0) throw new Error(`restgraph-pg did not exit 0 on SIGTERM (${describeExit(exit)})`);
    await seedPostgres(database.url, makeUsers(SEED_ROWS));
    for (let k = 0; k < instances; k++) started.push(await restgraphStarter(env, logFile(k), `restgraph-pg ${k + 1}`)());
    return {
      url: started[0].url,
      urls: started.map((s) => s.url),
      pid: started[0].pid,
      pids: started.map((s) => s.pid),
      token,
      logFile: logFile(0),
      dbProcessMatch: database.name,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll(5000);
    throw error;
  }
}

/** How each scenario's fresh server is started (default: restgraph on SQLite). */
const scenarioServers = { 'realtime-pg': (dir) => startRestgraphPostgres(dir, REALTIME_PG_INSTANCES) };

// ---------------------------------------------------------------- the scenarios

function worker(ctx, spec, timeoutSeconds) {
  return runJsonWorker(workerScript, { url: ctx.server.url, token: ctx.server.token, serverPid: ctx.server.pid, ...spec }, {
    cpu: LOAD_CPU,
    logFile: join(ctx.dir, `worker-${spec.mode}.stderr.log`),
    timeoutMs: timeoutSeconds * 1000,
    what: `event worker (${spec.mode})`,
  });
}

/**
 * A write scenario through bench/load.js, as run.js runs it (default: the REST create scenario,
 * BENCH_CONNECTIONS connections). With several server instances (ctx.server.urls), one load
 * generator per instance at once, the connections split between them; req/s and request counts
 * summed, the rest taken from the first.
 */
async function writeLoad(ctx, otherPids = [], scenario = 'create', options = {}) {
  const urls = ctx.server.urls ?? [ctx.server.url];
  const pids = ctx.server.pids ?? [ctx.server.pid];
  const one = (url, k) => {
    const spec = {
      engine: ctx.engine,
      url,
      headers: { authorization: `Bearer ${ctx.server.token}` },
      scenario,
      server: 'restgraph',
      size: SEED_ROWS,
      seed: 7 + k,
      connections: Math.max(1, Math.round(ctx.connections / urls.length)),
      duration: ctx.config.duration,
      warmup: WRITE_WARMUP,
      timeout: 10,
      serverPid: pids[k],
      workDir: join(ctx.dir, `load-${k}`),
      otherPids: [...otherPids, ...pids],
      ...options,
      ...(ctx.server.dbProcessMatch ? { dbProcessMatch: ctx.server.dbProcessMatch } : {}),
      ...(canPin ? { serverCpu: SERVER_CPU, loadCpu: LOAD_CPU } : {}),
    };
    return runJsonWorker(join(benchDir, 'load.js'), spec, {
      cpu: LOAD_CPU,
      logFile: join(ctx.dir, `load-${k}.stderr.log`),
      timeoutMs: (WRITE_WARMUP + ctx.config.duration + 90) * 1000,
      what: 'load generator',
    });
  };
  if (urls.length === 1) return one(urls[0], 0);
  const runs = await Promise.all(urls.map(one));
  const sum = (key) => runs.reduce((n, r) => n + (r[key] ?? 0), 0);
  return { ...runs[0], reqPerSec: sum('reqPerSec'), requests: sum('requests'), non2xx: sum('non2xx'), errors: sum('errors'), timeouts: sum('timeouts'), perInstance: runs };
}

/**
 * Starts an event worker that reads "start" / "stop" on stdin (modes subscribers and realtime);
 * resolves once it printed its first line (ready), to { pid, ready, measure(fn) } where measure
 * runs fn between its start and stop marks and resolves to { load: fn's result, result: the
 * worker's ready line and last line merged }.
 */
async function standingWorker(ctx, spec, { readyMs, resultMs = 90_000 }) {
  const logFile = join(ctx.dir, `worker-${spec.mode}${spec.kind ? `-${spec.kind}` : ''}.stderr.log`);
  const child = startProcess(process.execPath, [workerScript, JSON.stringify(spec)], { cpu: LOAD_CPU, stdin: 'pipe', stdout: 'pipe', logFile });
  const lines = [];
  let wake = () => {};
  child.stdout.setEncoding('utf8');
  let buffered = '';
  child.stdout.on('data', (d) => {
    buffered += d;
    const parts = buffered.split('\n');
    buffered = parts.pop();
    lines.push(...parts.filter(Boolean).map((l) => JSON.parse(l)));
    wake();
  });
  let exited = null;
  child.exited.then((e) => ((exited = e), wake()));
  const next = async (limitMs) => {
    const deadline = Date.now() + limitMs;
    while (!lines.length) {
      if (exited) throw new Error(`${spec.mode} worker exited (${exited.code ?? exited.signal})${logTail(logFile)}`);
      if (Date.now() > deadline) throw new Error(`${spec.mode} worker: no answer within ${limitMs} ms${logTail(logFile)}`);
      await new Promise((resolve) => {
        wake = resolve;
        setTimeout(resolve, 500);
      });
    }
    return lines.shift();
  };
  try {
    const ready = await next(readyMs);
    return {
      pid: child.pid,
      ready,
      /** Runs fn between the lines `open` and "stop"; resolves to { load: fn's result, window: the worker's answer }. */
      async window(open, fn) {
        child.stdin.write(`${open}\n`);
        const load = await fn();
        child.stdin.write('stop\n');
        return { load, window: await next(resultMs) };
      },
      stop: () => stopProcess(child),
      async measure(fn) {
        try {
          child.stdin.write('start\n');
          const load = await fn();
          child.stdin.write('stop\n');
          const result = await next(resultMs);
          await child.exited;
          return { load, result: { ...ready, ...result } };
        } finally {
          await stopProcess(child);
        }
      },
    };
  } catch (error) {
    await stopProcess(child);
    throw error;
  }
}

/** A subscribers worker holding ctx.config.subscribers subscriptions of `kind`, all live. */
async function standingSubscribers(ctx, kind) {
  const spec = { mode: 'subscribers', kind, subscribers: ctx.config.subscribers, url: ctx.server.url, token: ctx.server.token, serverPid: ctx.server.pid };
  const worker = await standingWorker(ctx, spec, { readyMs: 60_000 + ctx.config.subscribers * 60 });
  return {
    ...worker,
    measure: async (fn) => {
      const { load, result } = await worker.measure(fn);
      return { load, subscribers: result };
    },
  };
}

/**
 * The realtime scenario (and realtime-pg, on several instances): write req/s without listeners,
 * then the listeners attached and proven live (memory, idle latency), then the same writes with
 * them and the probes' latency meanwhile.
 */
async function realtime(ctx) {
  const { config, server } = ctx;
  const n = config.realtimeSubscribers;
  const sse = config.realtimeSse;
  const where = server.urls.length > 1 ? ` (${server.urls.length} instances)` : '';
  // The servers have just started: before (a), measured first, a run of the same writes that is
  // not measured (JIT, connection pools, the database's pages and WAL), else (a) runs on colder
  // servers than (b) and the ratio flatters (b) (a 5 s warm-up of its own was not enough: (a)
  // measured 60 % of the same writes on the same server later).
  process.stdout.write(`  realtime${where} warming up (${REALTIME_WARMUP} s of updates, not measured) ... `);
  await writeLoad(ctx, [], 'update', { warmup: 1, duration: REALTIME_WARMUP });
  process.stdout.write(`done\n  realtime${where} (a) update req/s, no listeners: ids nobody watches ... `);
  const aUnwatched = await writeLoad(ctx, [], 'update-unwatched');
  process.stdout.write(`${fmtRate(aUnwatched.reqPerSec)}; watched ids ... `);
  const aWatched = await writeLoad(ctx, [], 'update-watched');
  console.log(`${fmtRate(aWatched.reqPerSec)} req/s`);
  process.stdout.write(`  realtime: attaching ${fmtCount(n)} graphql-ws subscriptions (${config.realtimePerSocket} a socket) + ${fmtCount(sse)} SSE consumers ... `);
  const spec = {
    mode: 'realtime',
    url: server.url,
    urls: server.urls,
    token: server.token,
    serverPids: server.pids,
    subscribers: n,
    perSocket: config.realtimePerSocket,
    sse,
    watched: REALTIME_WATCHED,
    gapMs: REALTIME_GAP_MS,
    idleProbes: REALTIME_IDLE_PROBES,
    drainMs: REALTIME_DRAIN_MS,
    burst: REALTIME_PAUSED_BURST,
  };
  const listeners = await standingWorker(ctx, spec, {
    readyMs: 180_000 + (n + sse) * 30,
    resultMs: REALTIME_DRAIN_MS + 60_000,
  });
  try {
    const { ready } = listeners;
    console.log(`connected in ${(ready.connectMs / 1000).toFixed(1)} s, live in ${(ready.confirmMs / 1000).toFixed(1)} s more`);
    const fixed = { fixedConnections: true };
    process.stdout.write(`  realtime${where} (b) update req/s with them attached: ids nobody watches ... `);
    const bUnwatched = await listeners.window('listen', () => writeLoad(ctx, [listeners.pid], 'update-unwatched', fixed));
    process.stdout.write(`${fmtRate(bUnwatched.load.reqPerSec)}; watched ids (5 deliveries each) ... `);
    const b = await listeners.window('listen', () => writeLoad(ctx, [listeners.pid], 'update-watched', fixed));
    console.log(`${fmtRate(b.load.reqPerSec)} req/s`);
    process.stdout.write(`  realtime${where} (c) watched ids with a probe every ${REALTIME_GAP_MS / 2} ms ... `);
    const c = await listeners.window('probe', () => writeLoad(ctx, [listeners.pid], 'update-watched', fixed));
    console.log(`${fmtRate(c.load.reqPerSec)} req/s`);
    // (d) A third of the sockets stop reading (their TCP sockets paused), then a burst of creates
    // (every one to each userCreated listener): what their backlog costs the server's memory.
    process.stdout.write(`  realtime${where} (d) a third of the sockets paused, ${fmtCount(REALTIME_PAUSED_BURST)} creates ... `);
    const d = await listeners.window('pause', () => burst(ctx, REALTIME_PAUSED_BURST));
    console.log(`RSS ${fmtBytes(d.window.rssPaused)} paused (before: ${fmtBytes(d.window.rssBefore)}), ${fmtBytes(d.window.rssResumed)} once read again`);
    const perListener = ready.rssBefore && ready.rssAfter ? (ready.rssAfter - ready.rssBefore) / (n + sse) : null;
    const result = { ...ready, load: c.window.probes, windows: { bUnwatched: bUnwatched.window, b: b.window, c: c.window, paused: d.window }, runs: { aUnwatched, a: aWatched, bUnwatched: bUnwatched.load, b: b.load, c: c.load, d: d.load } };
    const p99 = result.load.creates.fromCommitMs.p99;
    /** Server CPU time per write (µs), when measured. */
    const cpuPerWrite = (run) => (run.serverProcessSeconds == null || !run.requests ? null : (run.serverProcessSeconds * 1e6) / run.requests);
    const deliveriesEach = (n / 2 / REALTIME_WATCHED);
    const costPerDelivery = cpuPerWrite(b.load) === null || cpuPerWrite(aWatched) === null ? null : (cpuPerWrite(b.load) - cpuPerWrite(aWatched)) / deliveriesEach;
    return {
      instances: server.urls.length,
      subscribers: n,
      perSocket: config.realtimePerSocket,
      sse,
      watched: REALTIME_WATCHED,
      deliveriesEach,
      reqPerSec: { without: aWatched.reqPerSec, with: b.load.reqPerSec, withProbes: c.load.reqPerSec, unwatchedWithout: aUnwatched.reqPerSec, unwatchedWith: bUnwatched.load.reqPerSec },
      ratio: b.load.reqPerSec / aWatched.reqPerSec,
      ratioUnwatched: bUnwatched.load.reqPerSec / aUnwatched.reqPerSec,
      cpuPerWriteUs: { without: cpuPerWrite(aWatched), with: cpuPerWrite(b.load), unwatchedWithout: cpuPerWrite(aUnwatched), unwatchedWith: cpuPerWrite(bUnwatched.load) },
      costPerDeliveryUs: costPerDelivery,
      bytesPerListener: perListener,
      targets: { ratio: TARGET_B_A, p99Ms: REALTIME_TARGET_MS, bytesPerListener: REALTIME_TARGET_BYTES },
      pass: {
        ratio: b.load.reqPerSec / aWatched.reqPerSec >= TARGET_B_A,
        ratioUnwatched: bUnwatched.load.reqPerSec / aUnwatched.reqPerSec >= TARGET_B_A,
        p99: p99 !== null && p99 < REALTIME_TARGET_MS && result.load.creates.incomplete === 0,
        memory: perListener !== null && perListener < REALTIME_TARGET_BYTES,
        delivery: realtimeFailures(result) === 0,
      },
      ...result,
    };
  } finally {
    await listeners.stop();
  }
}

/** `count` creates from the load CPU, 16 at a time, as fast as the server answers; resolves to {requests, seconds, non2xx, errors}. */
async function burst(ctx, count) {
  return runJsonWorker(join(benchDir, 'burst.js'), { url: ctx.server.urls[0], urls: ctx.server.urls, token: ctx.server.token, count, concurrency: 16 }, {
    cpu: LOAD_CPU,
    logFile: join(ctx.dir, 'burst.stderr.log'),
    timeoutMs: 300_000,
    what: 'burst of creates',
  });
}

/** Lost, duplicate and misdirected deliveries, listener problems and failed writes of a realtime run. */
function realtimeFailures(r) {
  const last = r.windows.c;
  let n = last.unknown + last.problems.errors + last.problems.completed + last.problems.closedEarly;
  for (const phase of [r.idle, r.load]) for (const kind of ['creates', 'updates']) n += phase[kind].missing + phase[kind].duplicates + phase[kind].stray + phase[kind].errors + phase[kind].incomplete;
  for (const run of Object.values(r.runs)) n += (run.non2xx ?? 0) + (run.errors ?? 0) + (run.timeouts ?? 0);
  return n;
}

const scenarioRuns = {
  webhooks: (ctx) =>
    worker(ctx, { mode: 'webhooks', events: ctx.config.webhookEvents, concurrency: WEBHOOK_CONCURRENCY, paced: PACED, pacedGapMs: PACED_GAP_MS }, 240),

  fanout: (ctx) => worker(ctx, { mode: 'fanout', subscribers: ctx.config.subscribers, repeats: FANOUT_REPEATS }, 180),

  realtime,
  'realtime-pg': realtime,

  async 'writes-with-subscribers'(ctx) {
    const runs = { a: [], b: [], c: [] };
    const withSubscribers = async (kind) => {
      const subs = await standingSubscribers(ctx, kind);
      return subs.measure(() => writeLoad(ctx, [subs.pid]));
    };
    for (let round = 1; round <= ctx.config.rounds; round++) {
      process.stdout.write(`  writes [${round}/${ctx.config.rounds}] (a) no subscribers ... `);
      runs.a.push({ load: await writeLoad(ctx) });
      console.log(`${fmtRate(runs.a.at(-1).load.reqPerSec)} req/s`);
      process.stdout.write(`  writes [${round}/${ctx.config.rounds}] (b) ${fmtCount(ctx.config.subscribers)} idle subscribers ... `);
      runs.b.push(await withSubscribers('updated'));
      console.log(`${fmtRate(runs.b.at(-1).load.reqPerSec)} req/s`);
    }
    process.stdout.write(`  writes (c) ${fmtCount(ctx.config.subscribers)} subscribers of every write ... `);
    runs.c.push(await withSubscribers('created'));
    console.log(`${fmtRate(runs.c[0].load.reqPerSec)} req/s`);
    const rate = (k) => median(runs[k].map((r) => r.load.reqPerSec));
    const [a, b, c] = [rate('a'), rate('b'), rate('c')];
    return { runs, reqPerSec: { a, b, c }, ratios: { bOverA: b / a, cOverA: c / a }, target: TARGET_B_A, pass: b / a >= TARGET_B_A && writeFailures(runs) === 0 };
  },
};

const writeFailures = (runs) =>
  Object.values(runs)
    .flat()
    .reduce((n, r) => n + (r.load.non2xx ?? 0) + (r.load.errors ?? 0) + (r.load.timeouts ?? 0) + subscriberFailures(r.subscribers), 0);

const subscriberFailures = (s) =>
  !s ? 0 : s.problems.errors + s.problems.completed + s.problems.closedEarly + (s.kind === 'created' ? s.eventsSeen - s.perSubscriber.min : 0);

// ---------------------------------------------------------------- run, print

/** Runs the selected event scenarios, each on its own fresh server; prints and returns the results. */
export async function runEvents({ config, sessionDir, engine, connections, keep }) {
  const out = { generatedAt: new Date().toISOString(), seedRows: SEED_ROWS, subscribers: config.subscribers, loadGenerator: engine, connections, scenarios: {} };
  console.log(`\n=== events (restgraph, ${fmtCount(SEED_ROWS)} users seeded, a fresh server per scenario) ===`);
  for (const name of config.scenarios) {
    const dir = mkdtempSync(join(sessionDir, `events-${name}-`));
    let server;
    const t0 = Date.now();
    try {
      server = await (scenarioServers[name] ?? startRestgraph)(dir);
      console.log(`  ${name} ...`);
      out.scenarios[name] = await scenarioRuns[name]({ config, dir, server, engine, connections });
    } catch (error) {
      if (error.message.startsWith('skipped: ')) {
        console.log(`  ${name}: ${error.message}`);
        out.scenarios[name] = { skipped: error.message.slice('skipped: '.length) };
      } else {
        console.log(`  ${name}: FAILED: ${error.message}`);
        out.scenarios[name] = { error: error.message };
      }
    } finally {
      const exit = server ? await server.stop(15_000) : null;
      if (exit && exit.code !== 0) {
        const note = `restgraph did not exit 0 on SIGTERM (${describeExit(exit)})${logTail(server.logFile)}`;
        console.log(`  ${name}: ${note}`);
        out.scenarios[name].serverExit = note;
      }
      if (!keep) rmSync(dir, { recursive: true, force: true });
    }
    out.scenarios[name].seconds = (Date.now() - t0) / 1000;
  }
  printEvents(out, config);
  return out;
}

const fmtLat = (r) => `${fmtMs(r.p50Ms)} / ${fmtMs(r.p99Ms)} ms`;
const fmtBytes = (n) => (Math.abs(n) >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`);

function printEvents(out, config) {
  const rows = [['event scenario', 'result', 'notes']];
  const notes = [];
  const s = out.scenarios;
  for (const [name, r] of Object.entries(s)) {
    if (r.error) rows.push([name, 'FAILED', r.error.split('\n')[0].slice(0, 100)]);
    if (r.skipped) rows.push([name, 'skipped', r.skipped.slice(0, 100)]);
  }
  const wh = s.webhooks;
  if (wh && !wh.error) {
    const { burst, paced } = wh;
    const lost = burst.expected - burst.delivered + (paced.expected - paced.delivered);
    const bad = lost + burst.duplicates + paced.duplicates + wh.badSignatures + wh.outOfOrder;
    const mark = bad ? ' !' : '';
    rows.push([`webhook deliveries/s (burst of ${fmtCount(burst.expected)})`, fmtRate(burst.deliveriesPerSec ?? 0) + mark, `${burst.delivered}/${burst.expected} delivered; creates ran at ${fmtRate(burst.createsPerSec)}/s`]);
    const after = burst.afterCreates;
    rows.push([
      '  ... after the last create (deliveries alone)',
      after.perSec == null ? 'n/a' : fmtRate(after.perSec),
      `${fmtCount(after.deliveries)} deliveries in ${fmtMs(burst.drainAfterCreatesMs)} ms` + (after.serverCpu == null ? '' : `, server CPU ${fmtPct(after.serverCpu)}`),
    ]);
    rows.push(['commit-to-delivery p50 / p99, burst', fmtLat(burst), 'mostly time in the queue']);
    rows.push([`commit-to-delivery p50 / p99, paced (${paced.expected}, one at a time)`, fmtLat(paced) + mark, `max ${fmtMs(paced.maxMs)} ms; ${paced.delivered}/${paced.expected} delivered`]);
    if (bad) notes.push(`! webhooks: ${lost} lost, ${burst.duplicates + paced.duplicates} duplicates, ${wh.outOfOrder} out of order, ${wh.badSignatures} bad signatures`);
  }
  const fo = s.fanout;
  if (fo && !fo.error) {
    const bad = fo.missing + fo.extra + fo.problems.errors + fo.problems.completed + fo.problems.closedEarly;
    const mark = bad ? ' !' : '';
    const n = fmtCount(fo.subscribers);
    rows.push([`fan-out to ${n}: 201 -> last client, median / max`, `${fmtMs(fo.fanoutMs.fromResponse.median)} / ${fmtMs(fo.fanoutMs.fromResponse.max)} ms${mark}`, `first client ${fmtMs(fo.fanoutMs.firstFromResponse.median)} ms (median; < 0 = before the 201)`]);
    const busy = fo.fanoutMs.clientsBusy;
    rows.push([`fan-out to ${n}: createdAt -> last client`, `${fmtMs(fo.fanoutMs.fromTimestamp.median)} / ${fmtMs(fo.fanoutMs.fromTimestamp.max)} ms`, `${fo.runs.length} creates` + (busy == null ? '' : `; clients' CPU meanwhile ${fmtPct(busy)}`)]);
    if (busy > 0.8) notes.push(`~ fanout: the clients' process was ${fmtPct(busy)} busy during the fan-out: part of the time is theirs`);
    rows.push(['server memory per subscriber', fo.bytesPerSubscriber == null ? 'n/a' : `~${fmtBytes(fo.bytesPerSubscriber)}`, `RSS ${fmtBytes(fo.rssBefore)} -> ${fmtBytes(fo.rssAfter)}; connected in ${(fo.connectMs / 1000).toFixed(1)} s`]);
    if (bad) notes.push(`! fanout: ${fo.missing} events missing, ${fo.extra} extra, subscription problems ${JSON.stringify(fo.problems)}`);
  }
  const w = s['writes-with-subscribers'];
  if (w && !w.error) {
    const n = fmtCount(config.subscribers);
    const cpu = (r) => (r.load.serverCpu == null ? '' : `server CPU ${fmtPct(r.load.serverCpu)}, load CPU ${fmtPct(r.load.loadCpu)}`);
    const each = (k) => w.runs[k].map((r) => fmtRate(r.load.reqPerSec)).join(', ');
    const c = w.runs.c[0];
    const flag = writeFailures(w.runs) ? ' !' : '';
    rows.push(['create req/s (a) no subscribers', fmtRate(w.reqPerSec.a), `runs: ${each('a')}; ${cpu(w.runs.a[0])}`]);
    rows.push([`create req/s (b) ${n} idle subscribers`, fmtRate(w.reqPerSec.b), `runs: ${each('b')}; ${cpu(w.runs.b[0])}`]);
    rows.push([`create req/s (c) ${n} subscribers of every write`, fmtRate(w.reqPerSec.c), `${cpu(c)}` + (c.subscribers.workerCpu == null ? '' : `, subscribers' CPU ${fmtPct(c.subscribers.workerCpu)}`)]);
    rows.push(['b/a', `${w.ratios.bOverA.toFixed(2)} ${w.pass ? 'PASS' : 'MISS'} (>= ${w.target})${flag}`, 'idle subscribers must not slow writes']);
    rows.push(['c/a', w.ratios.cOverA.toFixed(2), 'informative']);
    rows.push(['(c) subscription deliveries/s', fmtRate(c.subscribers.messagesPerSec), `while arriving; ${fmtCount(c.subscribers.messages)} in all, the last ${fmtMs(c.subscribers.drainAfterStopMs)} ms after the writes ended`]);
    for (const [k, runs] of Object.entries(w.runs)) {
      for (const r of runs) {
        const f = (r.load.non2xx ?? 0) + (r.load.errors ?? 0) + (r.load.timeouts ?? 0);
        if (f) notes.push(`! writes (${k}): ${r.load.non2xx} non-2xx, ${r.load.errors} socket errors, ${r.load.timeouts} timeouts of ${r.load.requests}`);
        if (r.load.otherCpu > 0.05) notes.push(`~ writes (${k}): other processes took ${fmtPct(r.load.otherCpu)} of a CPU meanwhile: figures disturbed`);
        if (r.load.poolWrapped) notes.push(`! writes (${k}): request pool wrapped: repeated bodies`);
        if (subscriberFailures(r.subscribers)) notes.push(`! writes (${k}): subscribers ${JSON.stringify({ ...r.subscribers.problems, eventsSeen: r.subscribers.eventsSeen, perSubscriber: r.subscribers.perSubscriber })}`);
      }
    }
    if (c.subscribers.workerCpu > 0.8) notes.push(`~ writes (c): the subscribers' process used ${fmtPct(c.subscribers.workerCpu)} of CPU ${LOAD_CPU}: the clients may have been the limit`);
  }
  for (const name of ['realtime', 'realtime-pg']) if (s[name] && !s[name].error && !s[name].skipped) realtimeRows(name, s[name], rows, notes);
  console.log(`\nevents, restgraph, ${fmtCount(config.subscribers)} subscribers, ${out.loadGenerator} with ${out.connections} connections for writes:`);
  renderTable(rows);
  for (const note of notes) console.log(note);
}

/** The rows of a realtime result (and its notes). */
function realtimeRows(name, r, rows, notes) {
  const on = r.instances > 1 ? `${r.instances} instances, PostgreSQL` : 'one server';
  const who = `${fmtCount(r.subscribers)} ws + ${fmtCount(r.sse)} SSE`;
  const verdict = (ok) => (ok ? 'PASS' : 'MISS');
  const cpu = (run) => (run.serverCpu == null ? '' : `server CPU ${fmtPct(run.serverCpu)}, load CPU ${fmtPct(run.loadCpu)}` + (run.dbCpu == null ? '' : `, postgres ${fmtPct(run.dbCpu)}`));
  const flag = realtimeFailures(r) ? ' !' : '';
  const us = (x) => (x == null ? 'n/a' : `${x.toFixed(0)} µs`);
  rows.push([`${name} (${on}): update req/s of unwatched ids, no listeners`, fmtRate(r.reqPerSec.unwatchedWithout), `${cpu(r.runs.aUnwatched)}; server CPU per write ${us(r.cpuPerWriteUs.unwatchedWithout)}`]);
  rows.push([`${name}: the same, ${who} listeners`, fmtRate(r.reqPerSec.unwatchedWith) + flag, `${cpu(r.runs.bUnwatched)}; server CPU per write ${us(r.cpuPerWriteUs.unwatchedWith)}`]);
  rows.push([`${name}: unwatched ids, with / without`, `${r.ratioUnwatched.toFixed(2)} ${verdict(r.pass.ratioUnwatched)} (>= ${r.targets.ratio})`, 'idle listeners must not slow writes']);
  rows.push([`${name}: update req/s of watched ids, no listeners`, fmtRate(r.reqPerSec.without), `${cpu(r.runs.a)}; server CPU per write ${us(r.cpuPerWriteUs.without)}`]);
  rows.push([`${name}: the same, ${who} listeners (${r.deliveriesEach} deliveries a write)`, fmtRate(r.reqPerSec.with) + flag, `${cpu(r.runs.b)}; server CPU per write ${us(r.cpuPerWriteUs.with)}`]);
  rows.push([`${name}: watched ids, with / without`, `${r.ratio.toFixed(2)} ${verdict(r.pass.ratio)} (>= ${r.targets.ratio})`, 'deliveries must cost writes little']);
  rows.push([`${name}: server CPU per delivery`, us(r.costPerDeliveryUs), `(CPU per write with listeners - without) / ${r.deliveriesEach}, watched ids`]);
  rows.push([`${name}: update req/s of watched ids, listeners + probes`, fmtRate(r.reqPerSec.withProbes), `${cpu(r.runs.c)}; a create to every ${REALTIME_GAP_MS} ms on top`]);
  const lat = (x, target) => `${fmtMs(x.fromCommitMs.p50)} / ${fmtMs(x.fromCommitMs.p99)} ms` + (target ? ` ${verdict(x.fromCommitMs.p99 !== null && x.fromCommitMs.p99 < target && x.incomplete === 0)} (< ${target})` : '');
  const detail = (x) =>
    `${x.complete}/${x.probes} probes complete; send -> last p99 ${fmtMs(x.fromSendMs.p99)} ms, write p99 ${fmtMs(x.writeMs.p99)} ms` + (x.clientsBusy == null ? '' : `, clients' CPU ${fmtPct(x.clientsBusy)}`);
  const creates = `create -> ${fmtCount(r.idle.creates.listenersEach ?? 0)} listeners`;
  const updates = `update -> ${fmtCount(r.idle.updates.listenersEach ?? 0)} listeners`;
  rows.push([`${name}: ${creates}, commit -> last p50 / p99, idle`, lat(r.idle.creates), detail(r.idle.creates)]);
  rows.push([`${name}: ${creates}, under the load`, lat(r.load.creates, r.targets.p99Ms), detail(r.load.creates)]);
  rows.push([`${name}: ${updates}, idle`, lat(r.idle.updates), detail(r.idle.updates)]);
  rows.push([`${name}: ${updates}, under the load`, lat(r.load.updates), detail(r.load.updates)]);
  rows.push([
    `${name}: server memory per listener`,
    r.bytesPerListener == null ? 'n/a' : `${fmtBytes(r.bytesPerListener)} ${verdict(r.pass.memory)} (< ${fmtBytes(r.targets.bytesPerListener)})`,
    `RSS ${fmtBytes(r.rssBefore)} -> ${fmtBytes(r.rssAfter)}; ${fmtCount(r.sockets)} connections up in ${(r.connectMs / 1000).toFixed(1)} s, live in ${(r.confirmMs / 1000).toFixed(1)} s more`,
  ]);
  const d = r.windows.paused;
  rows.push([
    `${name}: server RSS, a third of the sockets paused`,
    `${fmtBytes(d.rssPaused)} (+${fmtBytes(d.rssPaused - d.rssBefore)})`,
    `${fmtCount(d.pausedSockets)} sockets paused during ${fmtCount(r.runs.d.requests)} creates (${fmtRate(r.runs.d.reqPerSec)}/s); ${fmtBytes(d.rssResumed)} once read again; ${d.cut} listeners cut as slow consumers`,
  ]);
  const quiet = r.windows.b;
  rows.push([`${name}: load's own updates delivered, (b)`, `${fmtRate(quiet.background.perSec)}/s`, `${fmtCount(quiet.background.messages)} to the userUpdated listeners of watched ids; clients' CPU ${fmtPct(quiet.workerCpu)}`]);
  for (const [phase, kinds] of [['idle', r.idle], ['load', r.load]]) {
    for (const kind of ['creates', 'updates']) {
      const x = kinds[kind];
      const bad = x.missing + x.duplicates + x.stray + x.errors + x.incomplete;
      if (bad) notes.push(`! ${name} ${phase} ${kind}: ${x.incomplete} probes incomplete (${x.missing} deliveries missing), ${x.duplicates} duplicate, ${x.stray} misdirected, ${x.errors} failed writes ${x.errorSamples.join('; ')}`);
    }
  }
  const p = r.windows.c.problems;
  if (r.windows.c.unknown || p.errors || p.completed || p.closedEarly) notes.push(`! ${name}: listeners ${JSON.stringify(p)}, ${r.windows.c.unknown} unknown probe deliveries`);
  if (!r.load.drained) notes.push(`! ${name}: probes still undelivered ${REALTIME_DRAIN_MS / 1000} s after the load ended`);
  if (r.load.skipped) notes.push(`~ ${name}: ${r.load.skipped} probe ticks skipped (20 probes unanswered)`);
  for (const [k, run] of Object.entries(r.runs)) {
    const f = (run.non2xx ?? 0) + (run.errors ?? 0) + (run.timeouts ?? 0);
    if (f) notes.push(`! ${name} writes (${k}): ${run.non2xx} non-2xx, ${run.errors} socket errors, ${run.timeouts} timeouts of ${run.requests}`);
    if (!run.requests) notes.push(`~ ${name} writes (${k}): no write was answered within the run (a write before it took ${fmtMs(run.probeLatencyMs)} ms)`);
    if (run.otherCpu > 0.05) notes.push(`~ ${name} writes (${k}): other processes took ${fmtPct(run.otherCpu)} of a CPU meanwhile` + (r.instances > 1 ? ' (the other instances\' load generators count here)' : ': figures disturbed'));
  }
  const busiest = Math.max(r.windows.b.workerCpu, r.windows.c.workerCpu);
  if (busiest > 0.8) notes.push(`~ ${name}: the listeners' process used ${fmtPct(busiest)} of CPU ${LOAD_CPU} under the load, next to the load generator: the clients may have been the limit`);
}
