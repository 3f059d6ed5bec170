import fc from 'fast-check';
import type { Running } from '../../test/helpers/cli-process.js';
import { exchange, keepAliveAgent } from '../lib/http-exchange.js';
import { CHAOS_ADMIN_TOKEN, killAll, scratchDir, serveBuilt, type ServedApp } from '../lib/served-app.js';
import { postgresProblem, scratchDatabase, type ScratchDatabase } from '../lib/scratch-database.js';
import { storedWriteProblems } from '../lib/stored-writes.js';
import type { ChaosContext, ScenarioResult } from '../scenario.js';

/**
 * kill -9 under concurrent writes: the built server takes creates from several clients at once
 * and is killed with SIGKILL at a random moment, then started again on the same database, several
 * times over. After every restart, every create that was acknowledged (201) must be there, with
 * its `user.created` event in the outbox; no row without its event nor event without its row;
 * and a create sent with an Idempotency-Key that got no answer, sent again, exists exactly once.
 * On SQLite (a file) and on PostgreSQL (a database of its own).
 */
export default async function killLoops(context: ChaosContext): Promise<ScenarioResult[]> {
  const results = [await killLoopsOn('sqlite', context)];
  const unreachable = await postgresProblem();
  results.push(unreachable === undefined ? await killLoopsOn('postgres', context) : { name: 'kill -9 loops (postgres)', passed: false, detail: unreachable });
  return results;
}

/** Clients writing at once. */
const WRITERS = 8;

interface Sent {
  name: string;
  /** The Idempotency-Key it was sent with, if any. */
  key: string | undefined;
}

async function killLoopsOn(dialect: 'sqlite' | 'postgres', context: ChaosContext): Promise<ScenarioResult> {
  const name = `kill -9 loops (${dialect})`;
  const loops = context.short ? 2 : 10;
  // When each kill comes, after the writes start (ms): drawn from the seed.
  const delays = fc.sample(fc.integer({ min: 150, max: context.short ? 700 : 1500 }), { seed: context.seed, numRuns: loops });
  const dir = scratchDir('restgraph-chaos-kill-');
  const children: Running[] = [];
  const db = await scratchDatabase(dialect, dir.path);
  // A claim left by a killed request may be taken over after a second.
  const env = { DATABASE_URL: db.url, RESTGRAPH_IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS: '1' };
  const acknowledged = new Map<string, number>();
  let unanswered: Sent[] = [];
  const problems: string[] = [];
  let retried = 0;
  try {
    for (let loop = 0; loop <= loops; loop++) {
      const app = await serveBuilt(dir.path, env, children);
      problems.push(...(await storedWriteProblems(db, acknowledged)));
      const retry = await retryUnanswered(app, unanswered);
      retried += unanswered.filter((s) => s.key !== undefined).length;
      problems.push(...retry.problems);
      for (const [n, id] of retry.acknowledged) acknowledged.set(n, id);
      problems.push(...(await checkOnce(db, unanswered)));
      if (loop === loops) {
        await app.stop();
        break;
      }
      const load = writeUntilKilled(app, loop);
      await sleep(delays[loop] ?? 500);
      await app.kill();
      const outcome = await load;
      for (const [n, id] of outcome.acknowledged) acknowledged.set(n, id);
      unanswered = outcome.unanswered;
      context.log(`${dialect}: loop ${loop + 1}/${loops}: killed after ${delays[loop] ?? 0} ms; ${outcome.acknowledged.size} creates acknowledged, ${outcome.unanswered.length} unanswered`);
      if (problems.length > 0) break;
    }
  } catch (error) {
    problems.push(`the scenario failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await killAll(children);
    await db.drop();
    dir.cleanup();
  }
  const detail =
    problems.length === 0
      ? `${loops} kills; ${acknowledged.size} acknowledged creates all present with their events; ${retried} unanswered keyed creates retried, each stored once`
      : problems.slice(0, 20).join('\n') + (problems.length > 20 ? `\n… and ${problems.length - 20} more` : '');
  return { name, passed: problems.length === 0, detail };
}

/** Creates from {@link WRITERS} clients until the server goes away; which were acknowledged, which got no answer. */
async function writeUntilKilled(app: ServedApp, loop: number): Promise<{ acknowledged: Map<string, number>; unanswered: Sent[] }> {
  const agent = keepAliveAgent(WRITERS);
  const acknowledged = new Map<string, number>();
  const unanswered: Sent[] = [];
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let n = 0; ; n++) {
        const sent: Sent = { name: `kill-${loop}-${writer}-${n}`, key: n % 2 === 0 ? `kill-${loop}-${writer}-${n}` : undefined };
        try {
          const response = await exchange(app.base, createRequest(sent), { agent, timeoutMs: 10_000 });
          if (response.status !== 201) throw new Error(`create answered ${response.status}: ${response.body.slice(0, 200)}`);
          acknowledged.set(sent.name, Number((JSON.parse(response.body) as { id: unknown }).id));
        } catch {
          // The server is gone: this request may or may not have committed.
          unanswered.push(sent);
          return;
        }
      }
    }),
  );
  agent.destroy();
  return { acknowledged, unanswered };
}

function createRequest(sent: Sent): Parameters<typeof exchange>[1] {
  return {
    method: 'POST',
    path: '/users',
    headers: {
      authorization: `Bearer ${CHAOS_ADMIN_TOKEN}`,
      'content-type': 'application/json',
      ...(sent.key === undefined ? {} : { 'idempotency-key': sent.key }),
    },
    body: JSON.stringify({ name: sent.name }),
  };
}

/**
 * Sends the unanswered keyed creates again: each must end in a 201 (a replay if the first had
 * committed), after the killed request's claim times out (409 until then).
 */
async function retryUnanswered(app: ServedApp, unanswered: readonly Sent[]): Promise<{ acknowledged: Map<string, number>; problems: string[] }> {
  const acknowledged = new Map<string, number>();
  const problems: string[] = [];
  for (const sent of unanswered) {
    if (sent.key === undefined) continue;
    for (let attempt = 0; ; attempt++) {
      const response = await exchange(app.base, createRequest(sent));
      if (response.status === 201) {
        acknowledged.set(sent.name, Number((JSON.parse(response.body) as { id: unknown }).id));
        break;
      }
      if (response.status !== 409 || attempt >= 30) {
        problems.push(`retrying ${sent.name} with its Idempotency-Key: ${response.status} ${response.body.slice(0, 200)}`);
        break;
      }
      await sleep(200);
    }
  }
  return { acknowledged, problems };
}

/** Each unanswered create exists at most once; each keyed one (retried) exactly once. */
async function checkOnce(db: ScratchDatabase, unanswered: readonly Sent[]): Promise<string[]> {
  const problems: string[] = [];
  for (const sent of unanswered) {
    const rows = await db.query<{ n: number | string }>('select count(*) as "n" from "users" where "name" = ?', [sent.name]);
    const count = Number(rows[0]?.n);
    if (count > 1 || (sent.key !== undefined && count !== 1)) problems.push(`${sent.name}${sent.key === undefined ? '' : ' (retried with its key)'} is stored ${count} times`);
  }
  return problems;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
