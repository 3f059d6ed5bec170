import fc from 'fast-check';
import type { Running } from '../../test/helpers/cli-process.js';
import { exchange, keepAliveAgent, type ChaosRequest, type ChaosResponse } from '../lib/http-exchange.js';
import { operationsOf, valueFor, type KnownData, type Operation } from '../lib/openapi-operations.js';
import { requestArbitrary, type FuzzRequest } from '../lib/request-arbitraries.js';
import { CHAOS_ADMIN_TOKEN, killAll, scratchDir, serveBuilt, type ServedApp } from '../lib/served-app.js';
import { postgresProblem, scratchDatabase } from '../lib/scratch-database.js';
import type { ChaosContext, ScenarioResult } from '../scenario.js';

/**
 * Fuzz from /openapi.json: requests generated from every operation of the documents the server
 * serves (the unversioned one and each version's), valid and mutated (see request-arbitraries.ts),
 * sent by several clients at once. Passes when no answer is a 5xx, every request gets an answer
 * within 10 s, and the server is alive and still creates at the end. The full run sends 10,000
 * requests on SQLite and 10,000 on PostgreSQL; the short one 1,000 on SQLite.
 */
export default async function openapiFuzz(context: ChaosContext): Promise<ScenarioResult[]> {
  const count = context.short ? 1_000 : 10_000;
  const results = [await fuzzOn('sqlite', count, context)];
  if (!context.short) {
    const unreachable = await postgresProblem();
    results.push(unreachable === undefined ? await fuzzOn('postgres', count, context) : { name: 'OpenAPI fuzz (postgres)', passed: false, detail: unreachable });
  }
  return results;
}

/** Clients sending at once. */
const CLIENTS = 8;
/** Requests generated per fast-check sample (bounds the memory their bodies take). */
const CHUNK = 200;
/** A body larger than this is beyond the default limit: its connection may be closed before a 413 arrives. */
const BODY_LIMIT = 1024 * 1024;

interface Finding {
  index: number;
  request: FuzzRequest;
  outcome: string;
  logs: string[];
}

async function fuzzOn(dialect: 'sqlite' | 'postgres', count: number, context: ChaosContext): Promise<ScenarioResult> {
  const name = `OpenAPI fuzz, ${count.toLocaleString('en')} requests (${dialect})`;
  const dir = scratchDir('restgraph-chaos-fuzz-');
  const children: Running[] = [];
  const db = await scratchDatabase(dialect, dir.path);
  const failures: Finding[] = [];
  const resets: Finding[] = [];
  const statuses = new Map<number, number>();
  try {
    const app = await serveBuilt(dir.path, { DATABASE_URL: db.url, RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' }, children);
    const known = await seedData(app);
    const operations = await servedOperations(app);
    context.log(`${dialect}: ${operations.length} operations; seed data ids ${known.ids.join(', ')}; sending ${count} requests`);
    const arbitrary = requestArbitrary(operations, known, CHAOS_ADMIN_TOKEN);
    const agent = keepAliveAgent(CLIENTS);
    for (let start = 0; start < count; start += CHUNK) {
      const requests = fc.sample(arbitrary, { seed: context.seed + start, numRuns: Math.min(CHUNK, count - start) });
      let next = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (next < requests.length) {
            const i = next++;
            const request = requests[i];
            if (request === undefined) break;
            const index = start + i;
            const outcome = await send(app, request, index, agent);
            if (typeof outcome === 'string') {
              const finding = { index, request, outcome, logs: [] };
              if (requestSize(request) > BODY_LIMIT && /ECONNRESET|EPIPE|socket hang up/.test(outcome)) resets.push(finding);
              else failures.push(finding);
              continue;
            }
            statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
            if (outcome.status >= 500) failures.push({ index, request, outcome: `${outcome.status} ${outcome.body.slice(0, 300)}`, logs: [] });
          }
        }),
      );
      if (app.process.child.exitCode !== null || app.process.child.signalCode !== null) {
        failures.push({ index: start, request: requests[0] as FuzzRequest, outcome: `the server exited (${String(app.process.child.exitCode ?? app.process.child.signalCode)})`, logs: app.process.stderr().split('\n').slice(-20) });
        break;
      }
      if ((start / CHUNK) % 10 === 9) context.log(`${dialect}: ${start + CHUNK} sent, ${failures.length} failing`);
    }
    agent.destroy();
    failures.push(...(await stillServing(app)));
    // Stopped, the server has flushed its log: the lines about each finding can be found.
    await app.stop();
    for (const finding of [...failures, ...resets]) if (finding.logs.length === 0) finding.logs = logsOf(app, finding.index);
  } catch (error) {
    failures.push({ index: -1, request: { method: '', path: '', headers: {}, body: undefined, mutations: [] }, outcome: `the scenario failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`, logs: [] });
  } finally {
    await killAll(children);
    await db.drop();
    dir.cleanup();
  }
  const figures = [...statuses.entries()].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(', ');
  const lines = [`answers by status: ${figures}`, `seed ${context.seed} (npm run chaos -- --only openapi-fuzz --seed ${context.seed}${context.short ? ' --short' : ''})`];
  if (resets.length > 0) lines.push(`${resets.length} bodies over the 1 MiB limit got a closed connection instead of their 413, e.g. ${describe(resets[0])}`);
  for (const failure of failures.slice(0, 15)) lines.push(describe(failure));
  if (failures.length > 15) lines.push(`… and ${failures.length - 15} more`);
  return { name, passed: failures.length === 0, detail: lines.join('\n') };
}

/** Sends one fuzz request; its response, or why there was none. */
async function send(app: ServedApp, request: FuzzRequest, index: number, agent: ReturnType<typeof keepAliveAgent>): Promise<ChaosResponse | string> {
  const req: ChaosRequest = { method: request.method, path: request.path, headers: { ...request.headers, 'x-request-id': `fuzz-${index}` }, ...(request.body === undefined ? {} : { body: request.body }) };
  try {
    return await exchange(app.base, req, { agent, timeoutMs: 10_000 });
  } catch (error) {
    return `no answer: ${error instanceof Error ? `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}` : String(error)}`;
  }
}

function requestSize(request: FuzzRequest): number {
  return request.body === undefined ? 0 : Buffer.byteLength(request.body);
}

/** The server's log lines about request `index` (a 5xx is logged in full, with its stack). */
function logsOf(app: ServedApp, index: number): string[] {
  return app.process
    .stdout()
    .split('\n')
    .filter((line) => line.includes(`"fuzz-${index}"`))
    .map((line) => line.slice(0, 1500));
}

function describe(finding: Finding | undefined): string {
  if (finding === undefined) return '';
  const { request } = finding;
  const body = request.body === undefined ? '' : ` body(${Buffer.byteLength(request.body)} bytes)=${JSON.stringify(request.body.toString().slice(0, 200))}`;
  const headers = Object.entries(request.headers)
    .filter(([name]) => name !== 'authorization' || !request.headers.authorization?.includes(CHAOS_ADMIN_TOKEN))
    .map(([k, v]) => `${k}: ${v.slice(0, 80)}`)
    .join('; ');
  return [
    `#${finding.index} ${request.method} ${request.path.slice(0, 300)} [${request.mutations.join(', ') || 'valid'}]`,
    `   headers: ${headers}${body}`,
    `   -> ${finding.outcome}`,
    ...finding.logs.map((line) => `   log: ${line}`),
  ].join('\n');
}

/** The operations of /openapi.json and of each version's document. */
async function servedOperations(app: ServedApp): Promise<Operation[]> {
  const get = async (path: string): Promise<unknown> => JSON.parse((await exchange(app.base, { method: 'GET', path })).body) as unknown;
  const index = (await get('/')) as { versions?: string[] };
  const documents = [await get('/openapi.json'), ...(await Promise.all((index.versions ?? []).map((v) => get(`/${v}/openapi.json`))))];
  return documents.flatMap(operationsOf);
}

/**
 * A few rows of every resource (valid bodies drawn from the document until three of each are
 * created), a webhook to a loopback port where nothing listens, and an API key: so that valid
 * requests reach real rows.
 */
async function seedData(app: ServedApp): Promise<KnownData> {
  const known: KnownData = { ids: [1, 2, 3], webhookUrl: 'http://127.0.0.1:9/hook' };
  const operations = await servedOperations(app);
  const creates = operations.filter((op) => op.method === 'POST' && /^\/[a-z][a-zA-Z0-9]*$/.test(op.path) && op.body !== undefined);
  // Referenced resources first: a create naming ids that do not exist yet is refused.
  creates.sort((a, b) => referenceCount(a) - referenceCount(b));
  for (const op of creates) {
    let made = 0;
    const bodies = fc.sample(valueFor(op.body?.schema ?? {}, known), { seed: 1, numRuns: 200 });
    for (const body of bodies) {
      if (made >= 3) break;
      const response = await exchange(app.base, { method: 'POST', path: op.path, headers: { authorization: `Bearer ${CHAOS_ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (response.status === 201) made++;
    }
  }
  const admin = { authorization: `Bearer ${CHAOS_ADMIN_TOKEN}`, 'content-type': 'application/json' };
  await exchange(app.base, { method: 'POST', path: '/v1/webhooks', headers: admin, body: JSON.stringify({ url: known.webhookUrl, events: ['*'] }) });
  await exchange(app.base, { method: 'POST', path: '/v1/tokens', headers: admin, body: JSON.stringify({ name: 'fuzz', scopes: ['users:read'] }) });
  return known;
}

function referenceCount(op: Operation): number {
  return Object.keys(op.body?.schema.properties ?? {}).filter((key) => /Id$/.test(key)).length;
}

/** After the fuzz: the process is alive, answers /healthz and still creates. */
async function stillServing(app: ServedApp): Promise<Finding[]> {
  const empty: FuzzRequest = { method: 'GET', path: '/healthz', headers: {}, body: undefined, mutations: [] };
  try {
    const health = await exchange(app.base, { method: 'GET', path: '/healthz' });
    const created = await exchange(app.base, { method: 'POST', path: '/users', headers: { authorization: `Bearer ${CHAOS_ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{"name":"after the fuzz"}' });
    if (health.status === 200 && created.status === 201) return [];
    return [{ index: -1, request: empty, outcome: `at the end: /healthz ${health.status}, a create ${created.status} ${created.body.slice(0, 200)}`, logs: [] }];
  } catch (error) {
    return [{ index: -1, request: empty, outcome: `at the end the server does not answer: ${String(error)}`, logs: app.process.stderr().split('\n').slice(-20) }];
  }
}
