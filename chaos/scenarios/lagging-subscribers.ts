import type { Running } from '../../test/helpers/cli-process.js';
import { exchange, keepAliveAgent } from '../lib/http-exchange.js';
import { freePort } from '../../test/helpers/ports.js';
import { collectGarbage, eventually, gauge, rawConnection, residentBytes, type RawConnection } from '../lib/raw-subscribers.js';
import { postgresProblem, scratchDatabase } from '../lib/scratch-database.js';
import { CHAOS_ADMIN_TOKEN, killAll, scratchDir, serveBuilt, type ServedApp } from '../lib/served-app.js';
import type { ChaosContext, ScenarioResult } from '../scenario.js';

/**
 * GraphQL subscribers that stop reading, on the built server with real sockets:
 *
 * - zombie groups: subscriptions that are each a group of their own (distinct operation names)
 *   stop reading while posts are written, until every one is cut as a slow consumer (a small
 *   per-connection queue bound); then their clients go. Passes when no subscription group is left
 *   (`restgraph_subscription_groups` 0: a group with no member would execute every later event for
 *   nobody) and nothing is held queued.
 * - paused members: a third of the connections stop reading during a burst of large events
 *   (members of shared groups and groups of their own), then every client goes. Passes when no
 *   group is left, nothing is held queued, and the server's resident memory comes back within 10 %
 *   of what it was before the subscribers came (after a warm-up round of the same; both readings
 *   once the server has collected its garbage, asked through its inspector on loopback).
 *
 * The short version runs on SQLite with fewer subscribers and writes; the full one on PostgreSQL too.
 */
export default async function laggingSubscribers(context: ChaosContext): Promise<ScenarioResult[]> {
  const results = [await zombieGroups('sqlite', context), await pausedMembers('sqlite', context)];
  if (!context.short) {
    const unreachable = await postgresProblem();
    if (unreachable !== undefined) results.push({ name: 'lagging subscribers (postgres)', passed: false, detail: unreachable });
    else results.push(await zombieGroups('postgres', context), await pausedMembers('postgres', context));
  }
  return results;
}

/** 30 aliases of a post's 4000-character body: ~120 kB per event, so socket buffers fill within a few dozen. */
const HEAVY = Array.from({ length: 30 }, (_, i) => `b${i}: body`).join(' ');
const BODY = 'x'.repeat(4000);

async function zombieGroups(dialect: 'sqlite' | 'postgres', context: ChaosContext): Promise<ScenarioResult> {
  const name = `zombie subscription groups (${dialect})`;
  const groups = context.short ? 10 : 40;
  const posts = context.short ? 80 : 150;
  return withServer(name, dialect, { RESTGRAPH_SUBSCRIPTION_QUEUE_BYTES_PER_CONNECTION: String(256 * 1024) }, async (app, author) => {
    const findings: string[] = [];
    const connections: RawConnection[] = [];
    try {
      for (let n = 0; n < groups; n++) {
        const connection = await rawConnection(app);
        connection.subscribe('s', `subscription S${n} { postCreated { id ${HEAVY} } }`);
        connections.push(connection);
      }
      if (!(await eventually(async () => (await gauge(app, 'restgraph_subscription_groups')) === groups, 10_000))) findings.push(`the ${groups} groups did not all start`);
      for (const connection of connections) connection.pause();
      context.log(`${groups} subscriptions, each a group of its own, stop reading; ${posts} posts of ~120 kB each`);
      await writePosts(app, author, posts);
      if (!(await eventually(async () => (await gauge(app, 'restgraph_event_subscribers')) === 0, 30_000))) {
        findings.push(`subscribers still fed 30 s after the writes: ${await gauge(app, 'restgraph_event_subscribers')}`);
      }
    } finally {
      for (const connection of connections) connection.terminate();
    }
    const ended = await eventually(async () => (await gauge(app, 'restgraph_subscription_groups')) === 0 && (await gauge(app, 'restgraph_subscription_queued_bytes')) === 0, 10_000);
    const left = await gauge(app, 'restgraph_subscription_groups');
    if (!ended) findings.push(`${left} subscription groups left after every member was cut and every client went`);
    return { findings, figures: `${groups} groups cut as slow consumers; groups left after the clients went: ${left}` };
  });
}

async function pausedMembers(dialect: 'sqlite' | 'postgres', context: ChaosContext): Promise<ScenarioResult> {
  const name = `paused subscription members (${dialect})`;
  const connectionCount = context.short ? 30 : 90;
  const posts = context.short ? 100 : 300;
  // The inspector, on loopback, lets the scenario have the server collect its garbage before each reading.
  const inspector = await freePort();
  return withServer(name, dialect, { NODE_OPTIONS: `--inspect=127.0.0.1:${inspector}` }, async (app, author) => {
    const findings: string[] = [];
    const pid = app.process.child.pid;
    if (pid === undefined) throw new Error('the server has no process id');
    // The same round first: what the server keeps for good (compiled code, caches, the heap's and
    // the allocator's size) is then there before the memory is measured. Both figures are taken
    // the same way: every client gone, and the server idle until its memory stops shrinking.
    await round(app, author, connectionCount, posts);
    if (!(await settle(app))) findings.push('groups or queued bytes left after the warm-up round');
    const before = await idleResidentBytes(pid, inspector);
    const peak = await round(app, author, connectionCount, posts, () => residentBytes(pid));
    if (!(await settle(app))) findings.push(`groups or queued bytes left after every client went: ${await gauge(app, 'restgraph_subscription_groups')} groups, ${await gauge(app, 'restgraph_subscription_queued_bytes')} bytes`);
    const after = await idleResidentBytes(pid, inspector);
    if (after > before * 1.1) findings.push(`resident memory ${mib(after)} MiB once idle after the clients went, over 10 % above the ${mib(before)} MiB before`);
    context.log(`${connectionCount} connections × 3 subscriptions, a third stop reading; ${posts} posts of ~120 kB`);
    return { findings, figures: `RSS ${mib(before)} MiB before, ${mib(peak)} MiB at most meanwhile, ${mib(after)} MiB after` };
  });
}

/**
 * One round: `connections` connections with three subscriptions each (two shared by every
 * connection, one a group of its own), a third of them stop reading, `posts` posts are written,
 * every client goes. Resolves to the most `sample` gave meanwhile.
 */
async function round(app: ServedApp, author: number, connections: number, posts: number, sample: () => number = () => 0): Promise<number> {
  const open: RawConnection[] = [];
  let most = sample();
  try {
    for (let k = 0; k < connections; k++) {
      const connection = await rawConnection(app);
      connection.subscribe('a', `subscription { postCreated { id ${HEAVY} } }`);
      connection.subscribe('b', 'subscription { postCreated { id title } }');
      connection.subscribe('c', `subscription Own${k} { postCreated { id ${HEAVY} } }`);
      open.push(connection);
    }
    for (let k = 0; k < open.length; k += 3) open[k]?.pause();
    const sampler = setInterval(() => (most = Math.max(most, sample())), 50);
    try {
      await writePosts(app, author, posts);
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      clearInterval(sampler);
    }
  } finally {
    for (const connection of open) connection.terminate();
  }
  return most;
}

/**
 * The resident memory of an idle server once its garbage is collected (twice, 1 s apart, through
 * the inspector): the smallest of three readings over the next 3 s.
 */
async function idleResidentBytes(pid: number, inspector: number): Promise<number> {
  await collectGarbage(inspector);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await collectGarbage(inspector);
  const readings: number[] = [];
  for (let s = 0; s < 3; s++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    readings.push(residentBytes(pid));
  }
  return Math.min(...readings);
}

/** Waits until no group is left and nothing is held queued (up to 10 s). */
function settle(app: ServedApp): Promise<boolean> {
  return eventually(async () => (await gauge(app, 'restgraph_subscription_groups')) === 0 && (await gauge(app, 'restgraph_subscription_queued_bytes')) === 0, 10_000);
}

async function writePosts(app: ServedApp, author: number, count: number): Promise<void> {
  const agent = keepAliveAgent(8);
  try {
    for (let start = 0; start < count; start += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, count - start) }, async (_, k) => {
          const response = await exchange(app.base, { method: 'POST', path: '/posts', headers: { authorization: `Bearer ${CHAOS_ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: `lagging ${start + k}`, userId: author, body: BODY }) }, { agent, timeoutMs: 30_000 });
          if (response.status !== 201) throw new Error(`POST /posts answered ${response.status}: ${response.body.slice(0, 200)}`);
        }),
      );
    }
  } finally {
    agent.destroy();
  }
}

const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

/** Serves the built server on a fresh database with one author; the check returns its findings and figures. */
async function withServer(
  name: string,
  dialect: 'sqlite' | 'postgres',
  env: Record<string, string>,
  check: (app: ServedApp, author: number) => Promise<{ findings: string[]; figures: string }>,
): Promise<ScenarioResult> {
  const dir = scratchDir('restgraph-chaos-lagging-');
  const children: Running[] = [];
  const db = await scratchDatabase(dialect, dir.path);
  try {
    const app = await serveBuilt(dir.path, { DATABASE_URL: db.url, RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'off', ...env }, children);
    const created = await exchange(app.base, { method: 'POST', path: '/users', headers: { authorization: `Bearer ${CHAOS_ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{"name":"lagging"}' });
    if (created.status !== 201) throw new Error(`POST /users answered ${created.status}`);
    const { findings, figures } = await check(app, (JSON.parse(created.body) as { id: number }).id);
    const exit = await app.stop();
    if (exit.code !== 0) findings.push(`the server exited ${String(exit.code ?? exit.signal)} on SIGTERM`);
    return { name, passed: findings.length === 0, detail: findings.length === 0 ? figures : [figures, ...findings].join('\n') };
  } finally {
    await killAll(children);
    await db.drop();
    dir.cleanup();
  }
}
