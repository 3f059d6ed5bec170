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
//
// How to read it: figures of this shared 2-core machine vary by 10-40 % run to run; the ratio
// b/a of one run is what the target is about. A `!` marks a result with failures (lost or
// duplicate events, subscription errors, non-2xx writes), `~` a measurement caveat.
//
// Env: BENCH_EVENTS (1 = run them, the default, also when BENCH_SCENARIOS selects only REST
// scenarios; 0 = skip), BENCH_EVENT_SCENARIOS (comma-separated: webhooks, fanout,
// writes-with-subscribers; default all), BENCH_EVENT_SUBSCRIBERS (default 1000),
// BENCH_EVENT_WEBHOOKS (creates in the webhook burst, default 5000), BENCH_EVENT_DURATION
// (seconds per measured write run, default 5), BENCH_EVENT_ROUNDS (a/b alternations, default 2).
// Results: a printed table, and `events` in bench/results/latest.json.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canPin, describeExit, logTail, runJsonWorker, startProcess, stopProcess } from './lib/proc.js';
import { fmtCount, fmtMs, fmtPct, fmtRate, renderTable } from './lib/report.js';
import { makeUsers } from './lib/seed.js';
import { median } from './lib/subscribers.js';
import { createAndSeed, SERVER_CPU, startNode } from './servers.js';

export const eventScenarioNames = ['webhooks', 'fanout', 'writes-with-subscribers'];
const LOAD_CPU = 1;
const SEED_ROWS = 10_000;
const WEBHOOK_CONCURRENCY = 8;
const PACED = 200;
const PACED_GAP_MS = 20;
const FANOUT_REPEATS = 10;
const WRITE_WARMUP = 1;
const TARGET_B_A = 0.8;
const benchDir = fileURLToPath(new URL('.', import.meta.url));
const root = join(benchDir, '..');
const restgraphCli = join(root, 'dist/cli/main.js');
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
  };
  for (const key of ['subscribers', 'webhookEvents', 'duration', 'rounds']) {
    if (!(Number.isInteger(config[key]) && config[key] > 0)) throw new Error(`bad event setting ${key}: ${config[key]}`);
  }
  if (config.subscribers > SEED_ROWS) throw new Error(`BENCH_EVENT_SUBSCRIBERS: at most ${SEED_ROWS}`);
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
  };
  return config.scenarios.reduce((s, name) => s + plan[name], 0);
}

/** restgraph on a fresh seeded database, with a random admin token and loopback webhooks allowed. */
async function startRestgraph(dir) {
  const dbFile = join(dir, 'events.db');
  const logFile = join(dir, 'restgraph.stderr.log');
  const token = randomBytes(24).toString('base64url');
  const env = { ...process.env, DATABASE_URL: `sqlite:${dbFile}`, RESTGRAPH_ADMIN_TOKEN: token, RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' };
  delete env.LOG_LEVEL;
  delete env.RESTGRAPH_SCHEMA;
  const start = () =>
    startNode({
      name: 'restgraph',
      args: () => [restgraphCli, 'serve'],
      env: (port) => ({ ...env, PORT: String(port), HOST: '127.0.0.1' }),
      cwd: root,
      readyPath: '/readyz',
      logFile,
    });
  await createAndSeed(start, dbFile, makeUsers(SEED_ROWS), 'restgraph');
  return { ...(await start()), token, logFile };
}

// ---------------------------------------------------------------- the scenarios

function worker(ctx, spec, timeoutSeconds) {
  return runJsonWorker(workerScript, { url: ctx.server.url, token: ctx.server.token, serverPid: ctx.server.pid, ...spec }, {
    cpu: LOAD_CPU,
    logFile: join(ctx.dir, `worker-${spec.mode}.stderr.log`),
    timeoutMs: timeoutSeconds * 1000,
    what: `event worker (${spec.mode})`,
  });
}

/** The REST create scenario through bench/load.js, as run.js runs it. */
function writeLoad(ctx, otherPids = []) {
  const spec = {
    engine: ctx.engine,
    url: ctx.server.url,
    headers: { authorization: `Bearer ${ctx.server.token}` },
    scenario: 'create',
    server: 'restgraph',
    size: SEED_ROWS,
    connections: ctx.connections,
    duration: ctx.config.duration,
    warmup: WRITE_WARMUP,
    timeout: 10,
    serverPid: ctx.server.pid,
    workDir: join(ctx.dir, 'load'),
    otherPids,
    ...(canPin ? { serverCpu: SERVER_CPU, loadCpu: LOAD_CPU } : {}),
  };
  return runJsonWorker(join(benchDir, 'load.js'), spec, {
    cpu: LOAD_CPU,
    logFile: join(ctx.dir, 'load.stderr.log'),
    timeoutMs: (WRITE_WARMUP + ctx.config.duration + 90) * 1000,
    what: 'load generator',
  });
}

/**
 * Starts a subscriber worker holding `n` subscriptions of `kind`; resolves once they are all
 * live, to { pid, measure(fn) } where measure runs fn between its start and stop marks and
 * resolves to { load: fn's result, subscribers: the worker's counts }.
 */
async function standingSubscribers(ctx, kind) {
  const logFile = join(ctx.dir, `subscribers-${kind}.stderr.log`);
  const spec = { mode: 'subscribers', kind, subscribers: ctx.config.subscribers, url: ctx.server.url, token: ctx.server.token, serverPid: ctx.server.pid };
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
      if (exited) throw new Error(`subscriber worker exited (${exited.code ?? exited.signal})${logTail(logFile)}`);
      if (Date.now() > deadline) throw new Error(`subscriber worker: no answer within ${limitMs} ms${logTail(logFile)}`);
      await new Promise((resolve) => {
        wake = resolve;
        setTimeout(resolve, 500);
      });
    }
    return lines.shift();
  };
  try {
    const ready = await next(60_000 + ctx.config.subscribers * 60);
    return {
      pid: child.pid,
      ready,
      async measure(fn) {
        try {
          child.stdin.write('start\n');
          const load = await fn();
          child.stdin.write('stop\n');
          const subscribers = await next(90_000);
          await child.exited;
          return { load, subscribers: { ...ready, ...subscribers } };
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

const scenarioRuns = {
  webhooks: (ctx) =>
    worker(ctx, { mode: 'webhooks', events: ctx.config.webhookEvents, concurrency: WEBHOOK_CONCURRENCY, paced: PACED, pacedGapMs: PACED_GAP_MS }, 240),

  fanout: (ctx) => worker(ctx, { mode: 'fanout', subscribers: ctx.config.subscribers, repeats: FANOUT_REPEATS }, 180),

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
      server = await startRestgraph(dir);
      console.log(`  ${name} ...`);
      out.scenarios[name] = await scenarioRuns[name]({ config, dir, server, engine, connections });
    } catch (error) {
      console.log(`  ${name}: FAILED: ${error.message}`);
      out.scenarios[name] = { error: error.message };
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
  for (const [name, r] of Object.entries(s)) if (r.error) rows.push([name, 'FAILED', r.error.split('\n')[0].slice(0, 100)]);
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
  console.log(`\nevents, restgraph, ${fmtCount(config.subscribers)} subscribers, ${out.loadGenerator} with ${out.connections} connections for writes:`);
  renderTable(rows);
  for (const note of notes) console.log(note);
}
