#!/usr/bin/env node
// Chaos scenario: the PostgreSQL database goes away under a running server, then comes back.
//
// `restgraph serve` (dist/, so build first) runs as a child process on a database of its own
// (restgraph_outage_<random>, made through the `postgres` database and dropped afterwards), with a
// webhook endpoint registered and writes flowing. The database then refuses connections
// (ALTER DATABASE … ALLOW_CONNECTIONS false) and every backend of it is terminated
// (pg_terminate_backend), for a few seconds, while writes go on; then it is allowed again.
//
// It passes when: the process stays up; during the outage requests that need the database answer
// 503 problem+json `database-unavailable` with Retry-After (REST) or that code in
// `extensions.code` (GraphQL), /readyz answers 503 and /healthz 200; no request gets any other 5xx;
// /readyz is 200 again by itself; every write answered 201 is stored with its event and reaches
// the webhook receiver; and SIGTERM still stops the server with exit code 0.
//
// Use: `node chaos/database-outage.mjs [--show-log]` (prints the result as JSON, exit code 0 when it passed), or
// import { databaseOutage } and await it: it resolves to { name, passed, detail } and never throws.
// Only the outage database is ever made unreachable: other users of the server are not disturbed.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const ADMIN_TOKEN = 'chaos-admin-token-0123456789';
const NAME = 'database outage (PostgreSQL refuses and drops connections while writes flow)';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the scenario once.
 *
 * @param {object} [options]
 * @param {string} [options.postgresUrl] a URL of the PostgreSQL server (any database on it; the
 *   scenario makes its own). Default: $RESTGRAPH_TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/test
 * @param {number} [options.outageMs] how long the database stays away. Default 4000.
 * @param {number} [options.writers] writes in flight at once. Default 3.
 * @param {boolean} [options.showLog] add the server's log (its last 500,000 characters) to `detail`.
 * @returns {Promise<{ name: string, passed: boolean, detail: string }>}
 */
export async function databaseOutage(options = {}) {
  const base = new URL(options.postgresUrl ?? process.env.RESTGRAPH_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  const outageMs = options.outageMs ?? 4000;
  const writers = options.writers ?? 3;
  const database = `restgraph_outage_${randomBytes(6).toString('hex')}`;
  const adminUrl = withDatabase(base, 'postgres');
  const serverUrl = withDatabase(base, database);
  const dir = mkdtempSync(join(tmpdir(), 'restgraph-chaos-'));
  const problems = [];
  const facts = [];
  let server;
  let receiver;
  /** Shared with the write and probe loops: they run until `stop`. */
  const phase = { outage: false, stop: false };
  const loops = [];
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
    await admin.query(`create database "${database}"`);
    receiver = await startReceiver();
    const port = await freePort();
    server = startServer(dir, {
      DATABASE_URL: serverUrl,
      PORT: String(port),
      RESTGRAPH_ADMIN_TOKEN: ADMIN_TOKEN,
      RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      RESTGRAPH_WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1',
      RESTGRAPH_DB_CONNECT_TIMEOUT_MS: '1000',
      LOG_LEVEL: 'warn',
    });
    const api = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await get(api, '/readyz')).status === 200, 'the server to be ready', 20_000, server);
    const webhook = await call(api, 'POST', '/v1/webhooks', { url: `${receiver.url}/hook`, events: ['user.created'] });
    if (webhook.status !== 201) throw new Error(`registering the webhook answered ${webhook.status}: ${webhook.text}`);

    const log = { acknowledged: [], refused: [], other: [], readyz: [], healthz: [], graphql: [] };
    for (let w = 0; w < writers; w++) loops.push(writeLoop(api, w, log, phase));
    loops.push(probeLoop(api, log, phase));

    await sleep(1000);
    phase.outage = true;
    const outageStarted = Date.now();
    await admin.query(`alter database "${database}" allow_connections false`);
    await terminateBackends(admin, database);
    // Connections that were being opened while the first pass ran: terminated too.
    await sleep(300);
    await terminateBackends(admin, database);
    await sleep(Math.max(0, outageMs - (Date.now() - outageStarted)));
    await admin.query(`alter database "${database}" allow_connections true`);
    phase.outage = false;
    const restored = Date.now();
    await waitFor(async () => (await get(api, '/readyz')).status === 200, '/readyz to answer 200 after the database came back', 20_000, server);
    facts.push(`ready again ${Date.now() - restored} ms after the database came back`);
    await sleep(1000);
    phase.stop = true;
    await Promise.all(loops);

    if (server.exit !== undefined) problems.push(`the server exited (${describeExit(server.exit)}) during the scenario; its last output:\n${tail(server)}`);
    const during = (entries) => entries.filter((e) => e.outage);
    const refusedDuring = during(log.refused);
    facts.push(`${log.acknowledged.length} writes acknowledged, ${log.refused.length} refused with 503 (${refusedDuring.length} during the outage)`);
    if (refusedDuring.length === 0) problems.push('no write was refused during the outage');
    const badRefusals = log.refused.filter((r) => r.code !== 'database-unavailable' || r.retryAfter === null || !r.problemJson);
    if (badRefusals.length > 0) problems.push(`refusals without database-unavailable problem+json and Retry-After: ${JSON.stringify(badRefusals.slice(0, 3))}`);
    if (log.other.length > 0) problems.push(`unexpected answers to writes: ${JSON.stringify(log.other.slice(0, 5))}`);
    if (!during(log.readyz).some((r) => r.status === 503)) problems.push(`/readyz never answered 503 during the outage: ${JSON.stringify(during(log.readyz).slice(0, 5))}`);
    const unhealthy = log.healthz.filter((r) => r.status !== 200);
    if (unhealthy.length > 0) problems.push(`/healthz did not answer 200: ${JSON.stringify(unhealthy.slice(0, 5))}`);
    const graphqlDuring = during(log.graphql);
    if (!graphqlDuring.some((r) => r.codes.includes('database-unavailable'))) problems.push(`GraphQL never answered database-unavailable during the outage: ${JSON.stringify(graphqlDuring.slice(0, 3))}`);
    const graphqlOther = log.graphql.filter((r) => r.codes.some((c) => c !== 'database-unavailable') || r.status >= 500);
    if (graphqlOther.length > 0) problems.push(`unexpected GraphQL answers: ${JSON.stringify(graphqlOther.slice(0, 3))}`);
    if (server.exit === undefined) {
      const acknowledged = log.acknowledged;
      const check = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
      await check.connect();
      try {
        const stored = new Set((await check.query('select "id" from "users"')).rows.map((r) => Number(r.id)));
        const evented = new Set((await check.query(`select "recordId" from "_restgraph_events" where "type" = 'user.created'`)).rows.map((r) => Number(r.recordId)));
        const lost = acknowledged.filter((id) => !stored.has(id));
        const eventless = acknowledged.filter((id) => !evented.has(id));
        if (lost.length > 0) problems.push(`acknowledged writes missing: ${lost.slice(0, 10).join(', ')}`);
        if (eventless.length > 0) problems.push(`acknowledged writes without their event: ${eventless.slice(0, 10).join(', ')}`);
      } finally {
        await check.end();
      }
      const delivered = () => new Set(receiver.bodies.map((b) => b.data?.object?.id));
      try {
        await waitFor(() => acknowledged.every((id) => delivered().has(id)), 'a webhook delivery for every acknowledged write', 30_000, server);
      } catch {
        const missing = acknowledged.filter((id) => !delivered().has(id));
        problems.push(`acknowledged writes never delivered to the webhook: ${missing.slice(0, 10).join(', ')} (${missing.length} of ${acknowledged.length})`);
      }
      server.child.kill('SIGTERM');
      const exit = await Promise.race([server.exited, sleep(15_000).then(() => undefined)]);
      if (exit?.code !== 0) problems.push(`SIGTERM after the scenario: ${exit === undefined ? 'no exit within 15 s' : describeExit(exit)}`);
    }
  } catch (error) {
    problems.push(`the scenario could not run: ${error instanceof Error ? error.message : String(error)}${server === undefined ? '' : `\nserver output:\n${tail(server)}`}`);
  } finally {
    phase.stop = true;
    await Promise.all(loops);
    if (server !== undefined && server.exit === undefined) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await receiver?.close();
    await admin.query(`alter database "${database}" allow_connections true`).catch(() => undefined);
    await admin.query(`drop database if exists "${database}" with (force)`).catch((error) => problems.push(`dropping ${database}: ${error.message}`));
    await admin.end().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  const passed = problems.length === 0;
  if (options.showLog === true && server !== undefined) facts.push(`server log:\n${server.output}`);
  return { name: NAME, passed, detail: [...(passed ? [] : problems), ...facts].join('\n') };
}

function withDatabase(url, database) {
  const copy = new URL(url.href);
  copy.pathname = `/${database}`;
  // The test suite's search_path option names a schema of another database.
  copy.searchParams.delete('options');
  return copy.href;
}

async function terminateBackends(admin, database) {
  await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
}

/** Sequential creates until told to stop; each answer recorded with whether the outage was on when it came. */
async function writeLoop(api, writer, log, phase) {
  for (let i = 0; !phase.stop; i++) {
    const outage = phase.outage;
    let response;
    try {
      response = await call(api, 'POST', '/users', { name: `chaos ${writer}-${i}` });
    } catch (error) {
      log.other.push({ outage, error: error instanceof Error ? error.message : String(error) });
      await sleep(100);
      continue;
    }
    if (response.status === 201) log.acknowledged.push(Number(response.json?.id));
    else if (response.status === 503) {
      log.refused.push({
        outage,
        code: response.json?.code,
        retryAfter: response.headers.get('retry-after'),
        problemJson: (response.headers.get('content-type') ?? '').startsWith('application/problem+json'),
      });
    } else log.other.push({ outage, status: response.status, body: response.text.slice(0, 300) });
    await sleep(response.status === 201 ? 20 : 50);
  }
}

/** /healthz, /readyz and a GraphQL query every 200 ms. */
async function probeLoop(api, log, phase) {
  while (!phase.stop) {
    const outage = phase.outage;
    for (const path of ['/healthz', '/readyz']) {
      const started = Date.now();
      try {
        const response = await get(api, path);
        (path === '/healthz' ? log.healthz : log.readyz).push({ outage, status: response.status, ms: Date.now() - started });
      } catch (error) {
        (path === '/healthz' ? log.healthz : log.readyz).push({ outage, status: 0, error: error instanceof Error ? error.message : String(error) });
      }
    }
    try {
      const response = await call(api, 'POST', '/graphql', { query: '{ users(first: 1) { id } }' });
      const codes = (response.json?.errors ?? []).map((e) => e.extensions?.code);
      log.graphql.push({ outage, status: response.status, codes });
    } catch (error) {
      log.graphql.push({ outage, status: 0, codes: [`no answer: ${error instanceof Error ? error.message : String(error)}`] });
    }
    await sleep(200);
  }
}

async function call(api, method, path, body) {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  let json;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

async function get(api, path) {
  const response = await fetch(`${api}${path}`, { signal: AbortSignal.timeout(5000) });
  await response.arrayBuffer();
  return response;
}

async function waitFor(condition, what, timeoutMs, server) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server?.exit !== undefined) throw new Error(`the server exited (${describeExit(server.exit)}) while waiting for ${what}`);
    try {
      if (await condition()) return;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

function startServer(cwd, env) {
  const clean = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(PORT|HOST|DATABASE_URL|LOG_LEVEL|RESTGRAPH_.*|NODE_OPTIONS)$/.test(key)) clean[key] = value;
  const child = spawn(process.execPath, [CLI, 'serve'], { cwd, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const server = { child, output: '', exit: undefined, exited: undefined };
  const keep = (chunk) => {
    server.output = (server.output + chunk).slice(-500_000);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  server.exited = new Promise((resolve) =>
    child.once('close', (code, signal) => {
      server.exit = { code, signal };
      resolve(server.exit);
    }),
  );
  return server;
}

function tail(server) {
  return server.output.split('\n').slice(-15).join('\n');
}

function describeExit(exit) {
  return exit.signal === null ? `exit code ${exit.code}` : `signal ${exit.signal}`;
}

async function startReceiver() {
  const bodies = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      try {
        bodies.push(JSON.parse(text));
      } catch {
        // not a delivery
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    bodies,
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await databaseOutage({ showLog: process.argv.includes('--show-log') });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  process.exitCode = result.passed ? 0 : 1;
}
