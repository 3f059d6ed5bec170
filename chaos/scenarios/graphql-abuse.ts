import { GRAPHQL_ABUSE_CASES, abuseAnswerProblems, type GraphqlAbuseCase } from '../../test/fixtures/graphql-abuse.js';
import type { Running } from '../../test/helpers/cli-process.js';
import { healthProblems, probeHealth } from '../lib/health-prober.js';
import { exchange } from '../lib/http-exchange.js';
import { postgresProblem, scratchDatabase } from '../lib/scratch-database.js';
import { killAll, scratchDir, serveBuilt, type ServedApp } from '../lib/served-app.js';
import type { ChaosContext, ScenarioResult } from '../scenario.js';

/**
 * GraphQL abuse: every hostile document of test/fixtures/graphql-abuse.ts (exponential fragments on
 * each transport, persisted queries that must not be kept, the fragment pattern compiled executors
 * got wrong, values nested too deep or naming `__proto__`), sent to the built server several times
 * over and all at once, while a prober asks `/healthz` every 20 ms. Passes when each answer is the
 * one the case expects, no answer is a 5xx, and the event loop never stalls: no health probe waits
 * longer than 1 s. The short version runs on SQLite; the full one on PostgreSQL too.
 */
export default async function graphqlAbuse(context: ChaosContext): Promise<ScenarioResult[]> {
  const results = [await abuseOn('sqlite', context)];
  if (!context.short) {
    const unreachable = await postgresProblem();
    results.push(unreachable === undefined ? await abuseOn('postgres', context) : { name: 'GraphQL abuse (postgres)', passed: false, detail: unreachable });
  }
  return results;
}

/** How many times each case is sent, all at once. */
const REPEATS = { short: 3, full: 20 };

async function abuseOn(dialect: 'sqlite' | 'postgres', context: ChaosContext): Promise<ScenarioResult> {
  const name = `GraphQL abuse (${dialect})`;
  const dir = scratchDir('restgraph-chaos-graphql-');
  const children: Running[] = [];
  const db = await scratchDatabase(dialect, dir.path);
  try {
    // The quota an anonymous client has by default would refuse part of this burst; it is not what is tested.
    const app = await serveBuilt(dir.path, { DATABASE_URL: db.url, RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'off' }, children);
    const repeats = context.short ? REPEATS.short : REPEATS.full;
    const cases = GRAPHQL_ABUSE_CASES.flatMap((abuse) => Array.from({ length: repeats }, () => abuse));
    context.log(`${cases.length} requests (${GRAPHQL_ABUSE_CASES.length} cases × ${repeats}) at once, /healthz probed every 20 ms`);
    const prober = probeHealth(app.base);
    const findings = (await Promise.all(cases.map((abuse) => sendCase(app, abuse)))).filter((f) => f !== undefined);
    const probes = await prober.stop();
    const alive = await exchange(app.base, { method: 'GET', path: '/healthz' }).then((r) => r.status === 200, () => false);
    findings.push(...healthProblems(probes));
    if (!alive) findings.push('the server no longer answers /healthz');
    await app.stop();
    const figures = `${cases.length} requests, ${GRAPHQL_ABUSE_CASES.length} cases; slowest health probe meanwhile ${probes.slowestMs.toFixed(0)} ms`;
    return { name, passed: findings.length === 0, detail: findings.length === 0 ? `${figures}; every answer as expected` : [figures, ...[...new Set(findings)]].join('\n') };
  } finally {
    await killAll(children);
    await db.drop();
    dir.cleanup();
  }
}

async function sendCase(app: ServedApp, abuse: GraphqlAbuseCase): Promise<string | undefined> {
  try {
    const response = await exchange(app.base, { method: abuse.method, path: abuse.path, headers: abuse.headers, ...(abuse.body === undefined ? {} : { body: abuse.body }) }, { timeoutMs: 10_000 });
    const problems = abuseAnswerProblems(abuse, response.status, response.body);
    return problems.length === 0 ? undefined : `${abuse.name}: ${problems.join('; ')}`;
  } catch (error) {
    return `${abuse.name}: ${error instanceof Error ? error.message : String(error)}`;
  }
}
