// Event benchmark worker: the clients of one event scenario (webhook receiver and writers,
// or many GraphQL subscribers), run by bench/events.js pinned to the load CPU, so that the
// server's CPU does nothing but serve. Prints its result as one JSON line on stdout.
//
//   node bench/event-worker.js '{"mode":"webhooks"|"fanout"|"subscribers","url":"http://127.0.0.1:PORT",
//     "token":"<admin token>","serverPid":123, ...mode options}'
//
// webhooks     {events, concurrency, paced, pacedGapMs}: a receiver on loopback, registered with
//              POST /v1/webhooks for user.created; `events` creates from `concurrency` keep-alive
//              connections (the burst), then `paced` creates one at a time (the latency at light
//              load); every delivery is timed, counted by webhook-id and its signature checked.
// fanout       {subscribers, repeats}: server RSS, then `subscribers` clients of userCreated, RSS
//              again; then `repeats` single creates, each timed until every client has it.
// subscribers  {subscribers, kind: "updated"|"created"}: connects the clients (userUpdated of
//              seeded ids 1..n, or userCreated), proves each subscription live, prints
//              {"ready":true}, then reads "start" / "stop" lines on stdin and counts what
//              arrives in between (and until the backlog has drained); prints the result.
// realtime     {urls, serverPids, subscribers, perSocket, sse, watched, gapMs, idleProbes, drainMs}:
//              server RSS (summed over serverPids), then the listeners of bench/lib/realtime.js
//              spread over `urls`, proven live, RSS again; `idleProbes` creates and as many
//              updates of watched ids one at a time, each timed until every listener it concerns
//              has it; prints {"ready":true, ...}; then windows, each opened by a line on stdin
//              and closed by "stop" (its result printed once every probe reached all its
//              listeners, or after drainMs): "listen" counts the deliveries of the load's own
//              updates; "probe" also probes every gapMs/2 (a create, then an update, alternately,
//              without waiting for them); "exit" ends.
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { connectListeners, openFileLimit, Probes } from './lib/realtime.js';
import { connectSubscribers, cpuSeconds, median, RateMeter, pool, quantile, requester, serverRss, waitFor, wallNow } from './lib/subscribers.js';

const spec = JSON.parse(process.argv[2]);
const request = requester(spec.url, spec.token);
const runId = Date.now().toString(36);
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function createUser(tag, k) {
  const res = await request('POST', '/users', { name: `ev-${tag}-${runId}-${k}`, email: `ev-${tag}-${runId}-${k}@example.com` });
  if (res.status !== 201) throw new Error(`POST /users -> ${res.status} ${res.text.slice(0, 300)}`);
  return res;
}

// ---------------------------------------------------------------- webhooks

async function webhooks() {
  const received = []; // { id, phase, latencyMs, at, headers, body }
  const receiver = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = wallNow();
      const body = Buffer.concat(chunks).toString('utf8');
      let payload;
      try {
        payload = JSON.parse(body);
      } catch {
        payload = {};
      }
      const name = String(payload.data?.object?.name ?? '');
      received.push({
        id: String(req.headers['webhook-id']),
        phase: name.startsWith('ev-paced-') ? 'paced' : name.startsWith('ev-burst-') ? 'burst' : 'other',
        latencyMs: at - Date.parse(payload.timestamp),
        at,
        headers: { 'webhook-id': req.headers['webhook-id'], 'webhook-timestamp': req.headers['webhook-timestamp'], 'webhook-signature': req.headers['webhook-signature'] },
        body,
      });
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;
  const reg = await request('POST', '/v1/webhooks', { url: hookUrl, events: ['user.created'], description: 'bench' });
  if (reg.status !== 201) throw new Error(`POST /v1/webhooks -> ${reg.status} ${reg.text.slice(0, 300)}`);
  const distinct = (phase) => new Set(received.filter((r) => r.phase === phase).map((r) => r.id)).size;

  // The burst: throughput of deliveries, and latency with a backlog.
  const t0 = wallNow();
  await pool(spec.events, spec.concurrency, (k) => createUser('burst', k));
  const createdAt = wallNow();
  const cpuAtCreated = cpuSeconds(spec.serverPid);
  const burstAll = await waitFor(() => distinct('burst') >= spec.events, { progress: () => received.length, idleMs: 15_000, maxMs: 150_000 });

  const burstRows = received.filter((r) => r.phase === 'burst');
  const burstEnd = Math.max(...burstRows.map((r) => r.at));
  const drained = burstRows.filter((r) => r.at > createdAt).length;
  const drainCpu = cpuAtCreated === null ? null : (cpuSeconds(spec.serverPid) - cpuAtCreated) / ((wallNow() - createdAt) / 1000);

  // Paced: one create at a time, so each delivery finds no queue in front of it.
  await sleep(200);
  for (let k = 0; k < spec.paced; k++) {
    await createUser('paced', k);
    await sleep(spec.pacedGapMs);
  }
  const pacedAll = await waitFor(() => distinct('paced') >= spec.paced, { progress: () => received.length, idleMs: 15_000, maxMs: 30_000 });
  receiver.close();

  const webhook = new Webhook(reg.json.secret);
  let badSignatures = 0;
  let outOfOrder = 0;
  let lastSeq = 0;
  for (const r of received) {
    try {
      webhook.verify(r.body, r.headers);
    } catch {
      badSignatures++;
    }
    const seq = Number(String(r.id).replace(/^msg_/, ''));
    if (seq < lastSeq) outOfOrder++;
    lastSeq = Math.max(lastSeq, seq);
  }
  const phase = (name, expected) => {
    const rows = received.filter((r) => r.phase === name);
    const ids = new Set(rows.map((r) => r.id));
    const first = Math.min(...rows.map((r) => r.at));
    const last = Math.max(...rows.map((r) => r.at));
    const latencies = rows.map((r) => r.latencyMs);
    return {
      expected,
      delivered: ids.size,
      duplicates: rows.length - ids.size,
      firstToLastMs: last - first,
      deliveriesPerSec: ids.size > 1 ? (ids.size - 1) / ((last - first) / 1000) : null,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      maxMs: quantile(latencies, 1),
      last,
    };
  };
  const burst = phase('burst', spec.events);
  const paced = phase('paced', spec.paced);
  say({
    burst: {
      ...burst,
      complete: burstAll,
      createsPerSec: spec.events / ((createdAt - t0) / 1000),
      drainAfterCreatesMs: burst.last - createdAt,
      // After the last create: deliveries alone (the server's CPU share then, up to the end of the wait).
      afterCreates: { deliveries: drained, perSec: drained > 1 ? drained / ((burstEnd - createdAt) / 1000) : null, serverCpu: drainCpu },
      concurrency: spec.concurrency,
    },
    paced: { ...paced, complete: pacedAll, gapMs: spec.pacedGapMs },
    other: received.filter((r) => r.phase === 'other').length,
    badSignatures,
    outOfOrder,
  });
}

// ---------------------------------------------------------------- subscribers

/** Connects n userCreated / userUpdated subscribers and tracks which user ids each one got. */
async function subscribers(n, kind) {
  const perId = new Map(); // user id -> { n, first, last }
  const counts = new Uint32Array(n);
  const minId = new Float64Array(n).fill(Infinity);
  const maxId = new Float64Array(n).fill(-Infinity);
  let total = 0;
  let lastAt = 0;
  let meter = null;
  const field = kind === 'updated' ? 'userUpdated' : 'userCreated';
  const t0 = Date.now();
  const subs = await connectSubscribers({
    url: spec.url,
    token: spec.token,
    count: n,
    query: (i) => (kind === 'updated' ? `subscription { userUpdated(id: "${i + 1}") { id } }` : 'subscription { userCreated { id name } }'),
    onData: (i, data, at) => {
      const id = Number(data[field].id);
      counts[i]++;
      total++;
      lastAt = at;
      meter?.add(at);
      if (id < minId[i]) minId[i] = id;
      if (id > maxId[i]) maxId[i] = id;
      const s = perId.get(id);
      if (s) {
        s.n++;
        s.last = at;
        if (s.n === n) s.cpuAtLast = process.cpuUsage();
      } else perId.set(id, { n: 1, first: at, last: at, cpuAtLast: n === 1 ? process.cpuUsage() : undefined });
    },
  });
  const connectMs = Date.now() - t0;
  return {
    subs,
    counts,
    minId,
    maxId,
    perId,
    connectMs,
    get total() {
      return total;
    },
    get lastAt() {
      return lastAt;
    },
    meter: () => (meter = new RateMeter()),
  };
}

/**
 * Proves every subscription is live (the protocol has no acknowledgement of a subscribe): for
 * userCreated, creates users until one reached every client; for userUpdated, updates each
 * client's row once and waits until each has its event.
 */
async function confirm(s, n, kind) {
  const t0 = Date.now();
  if (kind === 'updated') {
    await pool(n, 8, async (i) => {
      const res = await request('PATCH', `/users/${i + 1}`, { bio: `bench ${runId}` });
      if (res.status !== 200) throw new Error(`PATCH /users/${i + 1} -> ${res.status} ${res.text.slice(0, 300)}`);
    });
    if (!(await waitFor(() => s.counts.every((c) => c > 0), { progress: () => s.total, idleMs: 10_000 }))) {
      throw new Error(`only ${s.counts.filter((c) => c > 0).length} of ${n} userUpdated subscribers got their row's update`);
    }
  } else {
    for (let attempt = 1; ; attempt++) {
      const { json } = await createUser('confirm', attempt);
      if (await waitFor(() => s.perId.get(json.id)?.n === n, { progress: () => s.total, idleMs: 2000, maxMs: 10_000 })) break;
      if (attempt >= 10) throw new Error(`after ${attempt} creates, only ${s.perId.get(json.id)?.n ?? 0} of ${n} userCreated subscribers got one`);
    }
  }
  return Date.now() - t0;
}

async function fanout() {
  const n = spec.subscribers;
  for (let k = 0; k < 20; k++) await createUser('warm', k); // the write path is warm before the RSS baseline
  await sleep(1000);
  const rssBefore = await serverRss(spec.serverPid);
  const s = await subscribers(n, 'created');
  const confirmMs = await confirm(s, n, 'created');
  await sleep(1000);
  const rssAfter = await serverRss(spec.serverPid);
  // Three unmeasured fan-outs first: the first ones after start-up run colder code (2-4x slower).
  for (let k = 0; k < 3; k++) {
    const { json } = await createUser('fanout-warm', k);
    await waitFor(() => s.perId.get(json.id)?.n === n, { progress: () => s.total, idleMs: 5000, maxMs: 20_000 });
    await sleep(200);
  }
  const countsBefore = Array.from(s.counts);
  const runs = [];
  for (let k = 0; k < spec.repeats; k++) {
    await sleep(200);
    const [sentAt, cpuAtSend] = [wallNow(), process.cpuUsage()];
    const res = await createUser('fanout', k);
    const id = res.json.id;
    const all = await waitFor(() => s.perId.get(id)?.n === n, { progress: () => s.total, idleMs: 5000, maxMs: 20_000 });
    const got = s.perId.get(id) ?? { n: 0, first: NaN, last: NaN };
    runs.push({
      // This process's CPU share from sending the create to the last arrival (near 100 %: the
      // clients' own work, not the server, set the pace).
      clientsBusy: got.cpuAtLast ? (got.cpuAtLast.user + got.cpuAtLast.system - cpuAtSend.user - cpuAtSend.system) / 1000 / (got.last - sentAt) : null,
      received: got.n,
      complete: all,
      fromResponseMs: got.last - res.responded,
      firstFromResponseMs: got.first - res.responded,
      fromTimestampMs: got.last - Date.parse(res.json.createdAt),
    });
  }
  const missing = s.counts.reduce((m, c, i) => m + Math.max(0, countsBefore[i] + spec.repeats - c), 0);
  const extra = s.counts.reduce((m, c, i) => m + Math.max(0, c - countsBefore[i] - spec.repeats), 0);
  await s.subs.dispose();
  say({
    subscribers: n,
    connectMs: s.connectMs,
    confirmMs,
    rssBefore,
    rssAfter,
    bytesPerSubscriber: rssBefore && rssAfter ? (rssAfter - rssBefore) / n : null,
    fanoutMs: {
      fromResponse: { median: median(runs.map((r) => r.fromResponseMs)), max: Math.max(...runs.map((r) => r.fromResponseMs)) },
      firstFromResponse: { median: median(runs.map((r) => r.firstFromResponseMs)) },
      clientsBusy: median(runs.map((r) => r.clientsBusy)),
      fromTimestamp: { median: median(runs.map((r) => r.fromTimestampMs)), max: Math.max(...runs.map((r) => r.fromTimestampMs)) },
    },
    runs,
    missing,
    extra,
    problems: s.subs.problems,
  });
}

async function standing() {
  const n = spec.subscribers;
  const s = await subscribers(n, spec.kind);
  const confirmMs = await confirm(s, n, spec.kind);
  say({ ready: true, connectMs: s.connectMs, confirmMs });
  const lines = createInterface({ input: process.stdin });
  let mark;
  for await (const line of lines) {
    if (line === 'start') {
      mark = { at: wallNow(), total: s.total, counts: Array.from(s.counts), cpu: process.cpuUsage(), meter: s.meter() };
      s.minId.fill(Infinity);
      s.maxId.fill(-Infinity);
    } else if (line === 'stop' && mark) {
      const stoppedAt = wallNow();
      // What was committed is still being sent: wait until nothing arrives for a second.
      await waitFor(() => false, { progress: () => s.total, idleMs: 1000, maxMs: 60_000 });
      const cpu = process.cpuUsage(mark.cpu);
      const got = s.counts.map((c, i) => c - mark.counts[i]);
      const lo = Math.min(...s.minId);
      const hi = Math.max(...s.maxId);
      const messages = s.total - mark.total;
      const seconds = (Math.max(s.lastAt, stoppedAt) - mark.at) / 1000;
      await s.subs.dispose();
      say({
        kind: spec.kind,
        subscribers: n,
        connectMs: s.connectMs,
        confirmMs,
        messages,
        messagesPerSec: mark.meter.rate(),
        drainAfterStopMs: Math.max(0, s.lastAt - stoppedAt),
        eventsSeen: Number.isFinite(lo) ? hi - lo + 1 : 0,
        perSubscriber: { min: Math.min(...got), max: Math.max(...got) },
        // Its CPU share while messages arrived (near 100 %: the clients may have been the limit).
        workerCpu: mark.meter.activeSeconds() ? (cpu.user + cpu.system) / 1e6 / mark.meter.activeSeconds() : null,
        activeSeconds: mark.meter.activeSeconds(),
        windowSeconds: seconds,
        problems: s.subs.problems,
      });
      process.exit(0);
    }
  }
  process.exit(3); // stdin closed: the harness is gone
}

// ---------------------------------------------------------------- realtime

/** The realtime probes of one phase: how many reached all their listeners, exactly once, and how fast. */
function probeSummary(list) {
  const done = list.filter((p) => !p.error && p.count === p.expected);
  const dist = (values) => {
    const v = values.filter(Number.isFinite);
    return { p50: quantile(v, 0.5), p99: quantile(v, 0.99), max: quantile(v, 1) };
  };
  const sum = (f) => list.reduce((n, p) => n + f(p), 0);
  return {
    probes: list.length,
    listenersEach: median(list.map((p) => p.expected)),
    complete: done.length,
    incomplete: list.length - done.length,
    missing: sum((p) => (p.error ? 0 : p.expected - p.count)),
    duplicates: sum((p) => p.duplicates),
    stray: sum((p) => p.stray),
    errors: list.filter((p) => p.error).length,
    errorSamples: list.filter((p) => p.error).slice(0, 3).map((p) => p.error),
    // The row's createdAt / updatedAt is stamped in the writing transaction: commit -> last listener, at least.
    fromCommitMs: dist(done.map((p) => p.lastAt - p.stampAt)),
    fromSendMs: dist(done.map((p) => p.lastAt - p.sentAt)),
    fromResponseMs: dist(done.map((p) => p.lastAt - p.respondedAt)),
    firstFromCommitMs: dist(done.map((p) => p.firstAt - p.stampAt)),
    writeMs: dist(list.map((p) => p.respondedAt - p.sentAt)),
    // This process's CPU share from the send to the last arrival (near 100 %: the clients set the pace).
    clientsBusy: median(done.map((p) => (p.cpuAtLast.user + p.cpuAtLast.system - p.cpuAtSend.user - p.cpuAtSend.system) / 1000 / (p.lastAt - p.sentAt))),
  };
}

async function realtime() {
  const { urls, subscribers: n, perSocket, sse, watched } = spec;
  const sockets = Math.ceil(n / perSocket) + sse;
  const limit = openFileLimit();
  if (limit !== null && limit < sockets + 200) throw new Error(`${sockets} connections need more open files than this process may have (ulimit -n ${limit}): raise it, or lower BENCH_REALTIME_SUBSCRIBERS / BENCH_REALTIME_SSE`);
  const requests = urls.map((url) => requester(url, spec.token));
  const watchOf = new Int32Array(n + sse);
  for (let i = 1; i < n; i += 2) watchOf[i] = 1 + ((i >> 1) % watched);
  const probes = new Probes(watchOf);
  const rss = async () => {
    const values = await Promise.all(spec.serverPids.map((pid) => serverRss(pid)));
    return values.includes(null) ? null : values.reduce((a, b) => a + b, 0);
  };

  /** One probe write; resolves once answered (its deliveries are counted as they come). */
  const send = async (kind, phase, id = 0) => {
    const p = probes.add(kind, phase, id);
    const request = requests[p.seq % requests.length];
    p.cpuAtSend = process.cpuUsage();
    p.sentAt = wallNow();
    try {
      const res =
        kind === 'c'
          ? await request('POST', '/users', { name: `rtc-${p.seq}`, email: `rt${p.seq}-${runId}@example.com` })
          : await request('PATCH', `/users/${id}`, { bio: `rtu-${p.seq}` });
      p.respondedAt = res.responded;
      if (res.status !== (kind === 'c' ? 201 : 200)) p.error = `${kind === 'c' ? 'POST /users' : `PATCH /users/${id}`} -> ${res.status} ${res.text.slice(0, 200)}`;
      else p.stampAt = Date.parse(kind === 'c' ? res.json.createdAt : res.json.updatedAt);
    } catch (error) {
      p.error = error.message;
    }
    p.settled = true;
    return p;
  };
  const reached = (p) => p.count >= p.expected || (p.settled && p.error !== null);
  const settle = (list, { idleMs = 10_000, maxMs = 60_000 } = {}) =>
    waitFor(() => list.every((p) => p.settled && reached(p)), { progress: () => probes.messages, idleMs, maxMs });
  const allGot = (want) => {
    for (let i = 0; i < watchOf.length; i++) if (want(watchOf[i]) && probes.got[i] === 0) return false;
    return true;
  };

  for (let k = 0; k < 20; k++) {
    const res = await requests[k % requests.length]('POST', '/users', { name: `warm-${runId}-${k}`, email: `warm-${runId}-${k}@example.com` });
    if (res.status !== 201) throw new Error(`POST /users -> ${res.status} ${res.text.slice(0, 300)}`);
  }
  await sleep(1000);
  const rssBefore = await rss();
  const t0 = Date.now();
  const listeners = await connectListeners({ urls, token: spec.token, subscribers: n, perSocket, sse, watched, probes, timeoutMs: 60_000 + sockets * 30 });
  const connectMs = Date.now() - t0;

  // Proves every listener live (a subscribe message has no acknowledgement): creates until every
  // listener of creates has one, then an update of each watched id until each of theirs has one.
  const t1 = Date.now();
  for (let attempt = 1; !allGot((w) => w === 0); attempt++) {
    if (attempt > 10) throw new Error(`after 10 creates, ${watchOf.filter((w, i) => w === 0 && probes.got[i] === 0).length} listeners of creates had none${JSON.stringify(listeners.problems)}`);
    const p = await send('c', 'confirm');
    if (p.error) throw new Error(p.error);
    await waitFor(() => allGot((w) => w === 0), { progress: () => probes.messages, idleMs: 3000, maxMs: 30_000 });
  }
  for (let attempt = 1; !allGot((w) => w !== 0); attempt++) {
    if (attempt > 5) throw new Error(`userUpdated listeners without their update after 5 rounds: ${watchOf.filter((w, i) => w !== 0 && probes.got[i] === 0).length}${JSON.stringify(listeners.problems)}`);
    const ids = [...new Set(Array.from(watchOf).filter((w, i) => w !== 0 && probes.got[i] === 0))];
    await pool(ids.length, 8, async (k) => {
      const p = await send('u', 'confirm', ids[k]);
      if (p.error) throw new Error(p.error);
    });
    await waitFor(() => allGot((w) => w !== 0), { progress: () => probes.messages, idleMs: 5000, maxMs: 60_000 });
  }
  const confirmMs = Date.now() - t1;
  await sleep(1000);
  const rssAfter = await rss();

  // Idle: one probe at a time (3 of each kind unmeasured first: colder code).
  const idle = [];
  for (let k = 0; k < spec.idleProbes + 3; k++) {
    for (const kind of ['c', 'u']) {
      const p = await send(kind, k < 3 ? 'warm' : 'idle', 1 + ((k * 37) % watched));
      await settle([p], { idleMs: 5000, maxMs: 30_000 });
      if (k >= 3) idle.push(p);
      await sleep(spec.gapMs / 2);
    }
  }
  const byKind = (list) => ({ creates: probeSummary(list.filter((p) => p.kind === 'c')), updates: probeSummary(list.filter((p) => p.kind === 'u')) });
  say({ ready: true, listeners: n + sse, sockets, connectMs, confirmMs, rssBefore, rssAfter, openFileLimit: limit, idle: byKind(idle) });

  // Windows: "listen" or "probe" opens one, "stop" closes it (its result is printed), "exit" ends.
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const nextLine = async () => (await lines.next()).value;
  for (let line = await nextLine(); line !== 'exit'; line = await nextLine()) {
    if (line === 'pause') {
      await pausedWindow(listeners, probes, rss, nextLine);
      continue;
    }
    if (line !== 'listen' && line !== 'probe') process.exit(3); // stdin closed: the harness is gone
    const mark = { at: wallNow(), background: probes.background, cpu: process.cpuUsage() };
    const loaded = [];
    let stopped = false;
    let skipped = 0;
    const probing = (async () => {
      for (let k = 0; line === 'probe' && !stopped; k++) {
        if (loaded.filter((p) => !p.settled).length >= 20) skipped++;
        else {
          send(k % 2 ? 'u' : 'c', 'load', 1 + ((k * 37) % watched)).catch(() => undefined);
          loaded.push(probes.list.at(-1));
        }
        await sleep(spec.gapMs / 2);
      }
    })();
    if ((await nextLine()) !== 'stop') process.exit(3);
    stopped = true;
    const stoppedAt = wallNow();
    await probing;
    const drained = await settle(loaded, { idleMs: 15_000, maxMs: spec.drainMs });
    // What the load committed may still be on its way: until nothing arrives for a second.
    await waitFor(() => false, { progress: () => probes.messages, idleMs: 1000, maxMs: spec.drainMs });
    const cpu = process.cpuUsage(mark.cpu);
    const background = probes.background - mark.background;
    say({
      ...(line === 'probe' ? { probes: { ...byKind(loaded), skipped, drained } } : {}),
      drainAfterStopMs: Math.max(0, probes.lastAt - stoppedAt),
      // Deliveries of the load's own updates to the userUpdated listeners of the watched ids.
      background: { messages: background, perSec: background / ((stoppedAt - mark.at) / 1000) },
      workerCpu: (cpu.user + cpu.system) / 1e6 / ((wallNow() - mark.at) / 1000),
      unknown: probes.unknown,
      problems: listeners.problems,
    });
  }
  listeners.dispose();
  process.exit(0);
}

/**
 * The "pause" window: every third WebSocket stops reading while the harness writes (a burst of
 * creates); then the server's RSS, those sockets read again, and once nothing has arrived for 2 s
 * the RSS again. Prints the RSS figures and what the paused listeners got (a listener cut as a
 * slow consumer gets an error and a complete: counted, not a failure here).
 */
async function pausedWindow(listeners, probes, rss, nextLine) {
  const rssBefore = await rss();
  const before = { ...listeners.problems };
  const pausedSockets = listeners.pauseSockets(3);
  if ((await nextLine()) !== 'stop') process.exit(3);
  const rssPaused = await rss();
  listeners.resumeSockets();
  await waitFor(() => false, { progress: () => probes.messages, idleMs: 2000, maxMs: spec.drainMs });
  const rssResumed = await rss();
  say({
    pausedSockets,
    rssBefore,
    rssPaused,
    rssResumed,
    cut: listeners.problems.completed - before.completed,
    closed: listeners.problems.closedEarly - before.closedEarly,
    errors: listeners.problems.errors - before.errors,
  });
}

const modes = { webhooks, fanout, subscribers: standing, realtime };
try {
  await modes[spec.mode]();
} catch (error) {
  process.stderr.write(`event-worker ${spec.mode}: ${error.stack ?? error.message}\n`);
  process.exit(1);
}
process.exit(0);
