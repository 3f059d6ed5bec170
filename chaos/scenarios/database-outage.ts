import type { Exit, Running } from '../../test/helpers/cli-process.js';
import { holdWriteLock } from '../../test/helpers/sqlite-lock-holder.js';
import { healthProblems, probeHealth } from '../lib/health-prober.js';
import { exchange } from '../lib/http-exchange.js';
import { acknowledgedCreates, outageTrafficFigures, outageTrafficProblems, startOutageTraffic } from '../lib/outage-traffic.js';
import { postgresProblem, scratchDatabase, type ScratchDatabase } from '../lib/scratch-database.js';
import { CHAOS_ADMIN_TOKEN, killAll, scratchDir, serveBuilt, type ServedApp } from '../lib/served-app.js';
import { storedWriteProblems } from '../lib/stored-writes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../lib/webhook-receiver.js';
import type { ChaosContext, ScenarioResult } from '../scenario.js';

/**
 * Database outages under a running server: the built server takes writes from several clients
 * (REST and GraphQL) with a webhook endpoint registered, while its database goes away for a few
 * seconds and comes back. Passes when the process stays up; meanwhile creates answer 503
 * problem+json `database-unavailable` with Retry-After (GraphQL: that code in `extensions.code`),
 * `/readyz` answers 503 and `/healthz` 200 within 1 s (asked every 20 ms); no
 * answer is another 5xx; it recovers by itself (`/readyz` 200, creates succeed); every
 * acknowledged create is stored with its `user.created` event and reaches the webhook receiver;
 * and SIGTERM still ends the process with exit code 0 (see chaos/lib/outage-traffic.ts for every
 * check of the answers). Each database the scenario uses is its own: nothing else is disturbed.
 */

/**
 * PostgreSQL refuses and drops connections: the scenario's database is cut off (ALTER DATABASE …
 * ALLOW_CONNECTIONS false and pg_terminate_backend of its connections) for 4 s (2 s in the short
 * version), then allowed again. Reads fail as writes do.
 */
export async function postgresOutage(context: ChaosContext): Promise<ScenarioResult> {
  const name = 'database outage (postgres: refuses and drops connections while writes flow)';
  const unreachable = await postgresProblem();
  if (unreachable !== undefined) return { name, passed: false, detail: unreachable };
  return outageOn(name, context, async (dir) => {
    const db = await scratchDatabase('postgres', dir);
    return {
      db,
      env: { RESTGRAPH_DB_CONNECT_TIMEOUT_MS: '1000' },
      durationMs: context.short ? 2_000 : 4_000,
      readsGoOn: false,
      begin: async () => {
        await db.refuseConnections();
        // Connections that were being opened while the first pass ran: terminated too.
        await sleep(300);
        await db.refuseConnections();
        return () => db.allowConnections();
      },
    };
  });
}

/** RESTGRAPH_SQLITE_LOCK_TIMEOUT_MS of the SQLite outage: low, so that the lock outlasts it by seconds. */
const SQLITE_LOCK_TIMEOUT_MS = 1_000;

/**
 * Another process holds the SQLite file's write lock (BEGIN IMMEDIATE, as the CLI or a backup
 * would) for 4 s (3 s in the short version) longer than the server's lock timeout, then releases
 * it. Reads go on meanwhile: only writes fail. /readyz says so once a write has failed (until
 * then it cannot know), after the writes queued before it, so it is slow to answer meanwhile.
 */
export async function sqliteLockOutage(context: ChaosContext): Promise<ScenarioResult> {
  const name = `database outage (sqlite: another process holds the write lock past the ${SQLITE_LOCK_TIMEOUT_MS} ms lock timeout)`;
  return outageOn(name, context, async (dir, children) => {
    const db = await scratchDatabase('sqlite', dir);
    return {
      db,
      env: { RESTGRAPH_SQLITE_LOCK_TIMEOUT_MS: String(SQLITE_LOCK_TIMEOUT_MS) },
      durationMs: SQLITE_LOCK_TIMEOUT_MS + (context.short ? 3_000 : 4_000),
      readsGoOn: true,
      begin: async () => {
        const holder = await holdWriteLock(db.file, children);
        return () => holder.release();
      },
    };
  });
}

/** One way to lose the database. */
interface Outage {
  /** The server's database, the one to lose. */
  db: ScratchDatabase;
  /** Settings of the server beyond the common ones (the bound that turns the fault into 503s). */
  env: Record<string, string>;
  /** How long the database stays away, from the start of {@link begin}. */
  durationMs: number;
  /** Whether reads answer throughout (SQLite's lock stops writes alone). */
  readsGoOn: boolean;
  /** Makes the database unreachable; resolves to what ends that. */
  begin(): Promise<() => Promise<void>>;
}

/** The webhook settings of the server: its receiver is on loopback; failed attempts are retried every second. */
const WEBHOOK_ENV = {
  RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  RESTGRAPH_WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1',
};

/**
 * How soon after the database is back every acknowledged create must have reached the webhook:
 * less than a delivery's lease (the default 10 s attempt time + the default 5 s lease margin), so
 * an attempt whose outcome could not be recorded during the outage must not hold its endpoint's
 * queue until its lease ends.
 */
const DELIVERED_WITHIN_MS = 10_000;

/** REST clients creating at once. */
const WRITERS = 3;

/** Runs the scenario with the outage `prepare` makes in `dir` (child processes it starts go in `children`). */
async function outageOn(name: string, context: ChaosContext, prepare: (dir: string, children: Running[]) => Promise<Outage>): Promise<ScenarioResult> {
  const dir = scratchDir('restgraph-chaos-outage-');
  const children: Running[] = [];
  const problems: string[] = [];
  const facts: string[] = [];
  let outage: Outage | undefined;
  let receiver: WebhookReceiver | undefined;
  let app: ServedApp | undefined;
  /** When the database came back (Date.now()). */
  let back = Date.now();
  try {
    outage = await prepare(dir.path, children);
    const db = outage.db;
    receiver = await startWebhookReceiver();
    const served = await serveBuilt(dir.path, { DATABASE_URL: db.url, ...WEBHOOK_ENV, ...outage.env }, children);
    app = served;
    await registerWebhook(app, `${receiver.url}/hook`);
    const traffic = startOutageTraffic(app.base, WRITERS);
    const prober = probeHealth(app.base);
    try {
      await sleep(1_000);
      traffic.phase = 'outage';
      const started = Date.now();
      const end = await outage.begin();
      await sleep(Math.max(0, outage.durationMs - (Date.now() - started)));
      await end();
      traffic.phase = 'after';
      context.log(`the database was away for ${Date.now() - started} ms`);
      back = Date.now();
      await waitFor(async () => (await exchange(served.base, { method: 'GET', path: '/readyz' }, { timeoutMs: 5_000 })).status === 200, '/readyz to answer 200 after the database came back', 20_000, app);
      facts.push(`ready again ${Date.now() - back} ms after the database came back`);
      await sleep(1_000);
    } finally {
      await traffic.stop();
      const probes = await prober.stop();
      problems.push(...healthProblems(probes));
      facts.push(`/healthz: ${probes.count} probes, the slowest ${probes.slowestMs.toFixed(0)} ms`);
    }
    if (exited(app)) throw new Error(`the server exited (${describeExit(app)}) during the outage`);
    problems.push(...outageTrafficProblems(traffic.answers, { readsGoOn: outage.readsGoOn }));
    facts.push(outageTrafficFigures(traffic.answers));
    const acknowledged = acknowledgedCreates(traffic.answers);
    const lost = [...(await storedWriteProblems(db, acknowledged)), ...(await deliveryProblems(receiver, [...acknowledged.values()], app))];
    problems.push(...lost);
    const deliveredAfterMs = Date.now() - back;
    if (lost.length === 0) facts.push(`all ${acknowledged.size} acknowledged creates stored with their events and delivered to the webhook, the last ${deliveredAfterMs} ms after the database came back`);
    if (lost.length === 0 && deliveredAfterMs > DELIVERED_WITHIN_MS) problems.push(`the last delivery came ${deliveredAfterMs} ms after the database came back (at most ${DELIVERED_WITHIN_MS} ms)`);
    const exit = await stopWithin(app, 15_000);
    if (exit?.code !== 0) problems.push(`SIGTERM after the outage: ${exit === undefined ? 'no exit within 15 s' : describeExit(app)}`);
  } catch (error) {
    problems.push(`the scenario could not run: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await killAll(children);
    await receiver?.close();
    await outage?.db.drop().catch((error: unknown) => problems.push(`dropping the scratch database: ${error instanceof Error ? error.message : String(error)}`));
    dir.cleanup();
  }
  const passed = problems.length === 0;
  const log = passed || app === undefined ? [] : [`the server's last log lines:\n${logTail(app)}`];
  return { name, passed, detail: [...problems, ...facts, ...log].join('\n') };
}

async function registerWebhook(app: ServedApp, url: string): Promise<void> {
  const response = await exchange(app.base, {
    method: 'POST',
    path: '/v1/webhooks',
    headers: { authorization: `Bearer ${CHAOS_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events: ['user.created'] }),
  });
  if (response.status !== 201) throw new Error(`registering the webhook answered ${response.status}: ${response.body}`);
}

/** Waits (at most 30 s) for a delivery of each of `ids`; what is missing then. */
async function deliveryProblems(receiver: WebhookReceiver, ids: readonly number[], app: ServedApp): Promise<string[]> {
  const missing = (): number[] => {
    const delivered = receiver.deliveredIds();
    return ids.filter((id) => !delivered.has(id));
  };
  try {
    await waitFor(() => Promise.resolve(missing().length === 0), 'a webhook delivery of every acknowledged create', 30_000, app);
    return [];
  } catch {
    const lost = missing();
    return [`acknowledged creates never delivered to the webhook: ${lost.slice(0, 10).join(', ')} (${lost.length} of ${ids.length})`];
  }
}

async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs: number, app: ServedApp): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited(app)) throw new Error(`the server exited (${describeExit(app)}) while waiting for ${what}`);
    if (await condition().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Sends SIGTERM; how the server exited, or undefined when it had not after `ms`. */
async function stopWithin(app: ServedApp, ms: number): Promise<Exit | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([app.stop(), late]);
  } finally {
    // A pending timer would keep the process (the chaos runner) alive after the last scenario.
    clearTimeout(timer);
  }
}

function exited(app: ServedApp): boolean {
  return app.process.child.exitCode !== null || app.process.child.signalCode !== null;
}

function describeExit(app: ServedApp): string {
  const { exitCode, signalCode } = app.process.child;
  return signalCode === null ? `exit code ${String(exitCode)}` : `signal ${signalCode}`;
}

function logTail(app: ServedApp): string {
  return `${app.process.stdout()}${app.process.stderr()}`.trimEnd().split('\n').slice(-15).join('\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
