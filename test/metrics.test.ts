import { afterEach, describe, expect, it } from 'vitest';
import type { RestgraphOptions } from '../src/app/app-options.js';
import { DURATION_BUCKETS_SECONDS, RequestMetrics } from '../src/app/request-metrics.js';
import { openDatabase } from '../src/store/open-database.js';
import type { SqlDatabase } from '../src/store/sql-database.js';
import { ADMIN, listenApp, SseReader, tempDatabase, waitUntil, type ListeningApp } from './helpers/event-stream.js';
import { parsePrometheusText, valueOf, type Family } from './helpers/prometheus-text.js';
import { sseClient, wsClient, type SubscriptionClient } from './helpers/subscription-clients.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { TEST_DIALECT } from './helpers/test-database.js';
import { answer, createWebhook, failing, WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * GET /metrics (Prometheus text format) through HTTP: the exposition parses strictly, request
 * counters and latency histograms move by route pattern, method and status, and the database,
 * outbox, webhook and stream gauges follow what happens; who may read it.
 */

type Families = Map<string, Family>;

const REQUESTS = 'restgraph_http_requests_total';
const DURATION = 'restgraph_http_request_duration_seconds';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

let apps: TestApp[] = [];
let listening: { server: ListeningApp; cleanup: () => Promise<void> }[] = [];
let receivers: WebhookReceiver[] = [];
let clients: SubscriptionClient[] = [];

afterEach(async () => {
  for (const client of clients) await client.dispose();
  for (const receiver of receivers) await receiver.close();
  for (const t of apps) await t.close();
  for (const { server, cleanup } of listening) {
    await server.close();
    await cleanup();
  }
  apps = [];
  listening = [];
  receivers = [];
  clients = [];
});

async function start(options: RestgraphOptions = {}): Promise<TestApp> {
  const t = await startTestApp(options);
  apps.push(t);
  return t;
}

/** Scrapes /metrics as admin and parses it. */
async function scrape(t: { app: TestApp['app'] }): Promise<Families> {
  const response = await t.app.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode, response.body).toBe(200);
  return parsePrometheusText(response.body);
}

const requests = (families: Families, route: string, method: string, status: number): number => valueOf(families, REQUESTS, { route, method, status: String(status) });

describe('the exposition', () => {
  it('is Prometheus text 0.0.4: every family has HELP and TYPE, histograms are cumulative up to +Inf = _count = the request counter', async () => {
    const t = await start();
    for (let i = 0; i < 3; i++) await t.app.inject({ method: 'GET', url: '/healthz' });
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    const families = parsePrometheusText(response.body);

    const expected: [string, Family['type']][] = [
      [REQUESTS, 'counter'], [DURATION, 'histogram'], ['restgraph_http_client_errors_total', 'counter'],
      ['restgraph_db_connections', 'gauge'], ['restgraph_db_connections_max', 'gauge'], ['restgraph_db_waiting', 'gauge'], ['restgraph_db_up', 'gauge'],
      ['restgraph_outbox_lag_events', 'gauge'], ['restgraph_outbox_lag_seconds', 'gauge'], ['restgraph_event_subscribers', 'gauge'], ['restgraph_open_streams', 'gauge'],
      ['restgraph_webhook_delivery_attempts_total', 'counter'], ['restgraph_webhook_endpoints_disabled_total', 'counter'], ['restgraph_webhook_deliveries_pending', 'gauge'],
      // Node.js process metrics (prom-client's defaults).
      ['process_cpu_user_seconds_total', 'counter'], ['nodejs_heap_size_used_bytes', 'gauge'], ['nodejs_eventloop_lag_seconds', 'gauge'],
    ];
    for (const [name, type] of expected) {
      expect(families.get(name)?.type, name).toBe(type);
      expect(families.get(name)?.help, name).not.toBe('');
    }

    const histogram = families.get(DURATION);
    const series = new Map<string, { buckets: [string, number][]; count?: number; sum?: number }>();
    for (const sample of histogram?.samples ?? []) {
      const { le, ...labels } = sample.labels;
      const key = JSON.stringify(labels);
      const entry = series.get(key) ?? { buckets: [] };
      series.set(key, entry);
      if (sample.name.endsWith('_bucket')) entry.buckets.push([le ?? '', sample.value]);
      else if (sample.name.endsWith('_count')) entry.count = sample.value;
      else entry.sum = sample.value;
    }
    expect(series.get(JSON.stringify({ route: '/healthz', method: 'GET', status: '200' }))?.count).toBe(3);
    for (const [key, { buckets, count, sum }] of series) {
      expect(buckets.map(([le]) => le), key).toEqual([...DURATION_BUCKETS_SECONDS.map(String), '+Inf']);
      const values = buckets.map(([, value]) => value);
      expect(values, key).toEqual([...values].sort((a, b) => a - b));
      expect(values.at(-1), key).toBe(count);
      expect(sum, key).toBeGreaterThanOrEqual(0);
      const labels = JSON.parse(key) as Record<string, string>;
      expect(valueOf(families, REQUESTS, labels), key).toBe(count);
    }
  });

  it('puts a duration in the first bucket whose bound is at or above it (le is inclusive), and beyond 10 s only in +Inf', () => {
    const metrics = new RequestMetrics();
    for (const ms of [0.2, 1, 1.01, 2.5, 9999, 10_000, 10_001, 60_000]) metrics.record('/things/:id', 'GET', 200, ms);
    metrics.record(undefined, 'GET', 404, 3);
    metrics.record('/odd"route\\with\nbreaks', 'GET', 200, 3);
    const families = parsePrometheusText(metrics.render());
    const bucket = (le: string): number => valueOf(families, DURATION, { route: '/things/:id', le }, '_bucket');
    expect(bucket('0.001')).toBe(2);
    expect(bucket('0.0025')).toBe(4);
    expect(bucket('5')).toBe(4);
    expect(bucket('10')).toBe(6);
    expect(bucket('+Inf')).toBe(8);
    expect(valueOf(families, DURATION, { route: '/things/:id' }, '_sum')).toBeCloseTo((0.2 + 1 + 1.01 + 2.5 + 9999 + 10_000 + 10_001 + 60_000) / 1000, 9);
    expect(valueOf(families, REQUESTS, { route: 'unmatched', status: '404' })).toBe(1);
    // Label values are escaped, and read back as they were.
    expect(valueOf(families, REQUESTS, { route: '/odd"route\\with\nbreaks' })).toBe(1);
  });
});

describe('request metrics', () => {
  it('count each request under its route pattern, method and status; unknown paths share one label; URLs never become labels', async () => {
    const t = await start();
    const before = await scrape(t);
    const created = await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Counted' } });
    expect(created.statusCode).toBe(201);
    const id = json<{ id: number }>(created).id;
    const scenario: [method: 'GET' | 'POST' | 'PATCH' | 'HEAD', url: string, status: number, route: string, body?: unknown][] = [
      ['GET', `/users/${id}`, 200, '/users/:id'],
      ['GET', `/users/${id}?fields=name`, 200, '/users/:id'],
      ['HEAD', `/users/${id}`, 200, '/users/:id'],
      ['GET', '/users/987654', 404, '/users/:id'],
      ['GET', '/users/abc', 404, '/users/:id'],
      ['GET', `/v1/users/${id}`, 200, '/v1/users/:id'],
      ['PATCH', `/users/${id}`, 422, '/users/:id', { name: '' }],
      ['POST', '/users', 415, '/users'],
      ['GET', `/users/${id}/posts`, 200, '/users/:id/posts'],
      ['GET', '/no/such/path/123', 404, 'unmatched'],
      ['GET', '/users/%zz', 400, 'unmatched'],
      ['GET', `/users/${'9'.repeat(300)}`, 414, 'unmatched'],
    ];
    for (const [method, url, status, , body] of scenario) {
      const response = await t.app.inject({ method, url, ...(body === undefined ? {} : { payload: body as Record<string, unknown> }) });
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(status);
    }
    const after = await scrape(t);

    const expected = new Map<string, number>();
    for (const [method, , status, route] of scenario) {
      const key = JSON.stringify({ route, method, status: String(status) });
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    // The scrape before this one, and the create.
    expected.set(JSON.stringify({ route: '/metrics', method: 'GET', status: '200' }), 1);
    expected.set(JSON.stringify({ route: '/users', method: 'POST', status: '201' }), 1);
    for (const [key, count] of expected) {
      const { route, method, status } = JSON.parse(key) as { route: string; method: string; status: string };
      expect(requests(after, route, method, Number(status)) - requests(before, route, method, Number(status)), key).toBe(count);
      expect(valueOf(after, DURATION, { route, method, status }, '_count') - valueOf(before, DURATION, { route, method, status }, '_count'), key).toBe(count);
    }
    // Nothing else moved, and no label holds an id or a query string.
    const moved = (after.get(REQUESTS)?.samples ?? []).filter((s) => s.value !== valueOf(before, REQUESTS, s.labels)).map((s) => JSON.stringify(s.labels));
    expect(new Set(moved)).toEqual(new Set(expected.keys()));
    for (const sample of after.get(REQUESTS)?.samples ?? []) {
      expect(sample.labels.route, JSON.stringify(sample.labels)).toMatch(/^(unmatched|(\/[a-z0-9]+|\/:[a-z]+)*\/?)$/i);
      expect(sample.labels.route).not.toMatch(/\/\d|\?|abc/);
    }
  });

  it('are not recorded, and /metrics is not served, when metrics are switched off', async () => {
    const t = await start({ metrics: { enabled: false } });
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
    expect(json<{ code: string }>(response).code).toBe('not-found');
  });
});

describe('who may read /metrics', () => {
  it('a token with metrics:read or admin; anonymous is 401, an invalid token 401, another scope 403 naming metrics:read', async () => {
    const t = await start();
    const token = async (scopes: string[]): Promise<string> => {
      const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: scopes.join(','), scopes } });
      expect(response.statusCode).toBe(201);
      return `Bearer ${json<{ key: string }>(response).key}`;
    };
    const scraper = await token(['metrics:read']);
    const reader = await token(['users:read']);
    const cases: [who: string, authorization: string, status: number, code?: string, wwwAuthenticate?: RegExp][] = [
      ['anonymous', '', 401, 'authentication-required', /^Bearer realm="restgraph"$/],
      ['an unknown key', 'Bearer rg_not-a-real-key', 401, 'invalid-token', /error="invalid_token"/],
      ['a users:read key', reader, 403, 'forbidden', /^Bearer realm="restgraph", error="insufficient_scope", scope="metrics:read"$/],
      ['a metrics:read key', scraper, 200],
      ['the admin token', ADMIN, 200],
    ];
    for (const [who, authorization, status, code, wwwAuthenticate] of cases) {
      const response = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization } });
      expect(response.statusCode, who).toBe(status);
      if (code === undefined) {
        expect(() => parsePrometheusText(response.body), who).not.toThrow();
        continue;
      }
      expect(response.headers['content-type'], who).toBe(PROBLEM_TYPE);
      expect(json<{ code: string; instance: string }>(response), who).toMatchObject({ code, instance: '/metrics' });
      expect(String(response.headers['www-authenticate']), who).toMatch(wwwAuthenticate ?? /./);
      expect(response.body, who).not.toContain('restgraph_http');
    }
  });

  it("answers the Accept headers Prometheus 2 and 3 send, HEAD, and OPTIONS; refuses an Accept that rules out text", async () => {
    const t = await start();
    const accepts = [
      'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
      'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
      'text/plain',
    ];
    for (const accept of accepts) expect((await t.app.inject({ method: 'GET', url: '/metrics', headers: { accept } })).statusCode, accept).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/metrics', headers: { accept: 'application/json' } })).statusCode).toBe(406);
    const head = await t.app.inject({ method: 'HEAD', url: '/metrics' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    const options = await t.app.inject({ method: 'OPTIONS', url: '/metrics', headers: { authorization: '' } });
    expect(options.statusCode).toBe(204);
    expect(options.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect((await t.app.inject({ method: 'POST', url: '/metrics' })).statusCode).toBe(405);
  });

  it('anyone, with metrics.public (a port only the scraper reaches); a credential sent is still checked', async () => {
    const t = await start({ metrics: { public: true } });
    const anonymous = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: '' } });
    expect(anonymous.statusCode).toBe(200);
    expect(valueOf(parsePrometheusText(anonymous.body), 'restgraph_db_up')).toBe(1);
    expect((await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer rg_not-a-real-key' } })).statusCode).toBe(401);
  });
});

describe('database connections', () => {
  /** A transaction that holds its connection until `release()`; `running` resolves once its work runs. */
  function hold(db: SqlDatabase): { running: Promise<void>; release: () => void; done: Promise<void> } {
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const done = db.transaction(async () => {
      started();
      await gate;
    });
    return { running, release, done };
  }

  it(`report open, idle and waiting as they change (${TEST_DIALECT}: ${TEST_DIALECT === 'sqlite' ? 'the writer held by a transaction, writers waiting for it' : 'pool connections held, queries waiting for one'})`, async () => {
    const t = await start();
    const { db } = await openDatabase(t.db.url, { poolSize: 2 });
    try {
      const idle = db.connectionStats();
      expect(idle).toMatchObject({ waiting: 0, max: 2 });
      expect(idle.idle).toBe(idle.open);
      const first = hold(db);
      await first.running;
      const second = hold(db);
      if (TEST_DIALECT === 'postgres') await second.running;
      const third = hold(db);
      await waitUntil(() => db.connectionStats().waiting === (TEST_DIALECT === 'sqlite' ? 2 : 1), 'a transaction waiting');
      expect(db.connectionStats()).toEqual({ open: 2, idle: TEST_DIALECT === 'sqlite' ? 1 : 0, waiting: TEST_DIALECT === 'sqlite' ? 2 : 1, max: 2 });
      for (const held of [first, second, third]) {
        held.release();
        await held.running;
      }
      await Promise.all([first.done, second.done, third.done]);
      expect(db.connectionStats()).toMatchObject({ open: 2, idle: 2, waiting: 0 });
    } finally {
      await db.close();
    }

    // The app's own database, as scraped.
    const families = await scrape(t);
    const max = TEST_DIALECT === 'sqlite' ? 2 : 10;
    expect(valueOf(families, 'restgraph_db_connections_max')).toBe(max);
    const open = valueOf(families, 'restgraph_db_connections', { state: 'idle' }) + valueOf(families, 'restgraph_db_connections', { state: 'in_use' });
    expect(open).toBeGreaterThanOrEqual(1);
    expect(open).toBeLessThanOrEqual(max);
    expect(valueOf(families, 'restgraph_db_waiting')).toBe(0);
  });
});

describe('outbox lag', () => {
  it('counts events committed (by another process) but not yet dispatched here, and the age of the oldest; back to 0 once read', async () => {
    // No polling: the outbox is read only when told (another process's commit sends no signal here).
    const t = await start({ events: { pollIntervalMs: 3_600_000 } });
    expect(valueOf(await scrape(t), 'restgraph_outbox_lag_events')).toBe(0);
    // Events written here are dispatched as they commit, without polling (it is off): the lag, if
    // any, is gone at once. (On PostgreSQL the handover may follow the response by a moment.)
    expect((await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Here' } })).statusCode).toBe(201);
    await waitUntil(async () => valueOf(await scrape(t), 'restgraph_outbox_lag_events') === 0, 'the event written here to be dispatched', 2_000);

    const occurredAt = new Date(Date.now() - 30_000).toISOString();
    const insert = 'insert into "_restgraph_events" ("type", "resource", "recordId", "data", "occurredAt") values (?, ?, ?, ?, ?)';
    for (const recordId of [101, 102]) {
      await t.db.run(insert, ['user.created', 'users', recordId, JSON.stringify({ object: { id: recordId, name: 'elsewhere' } }), occurredAt]);
    }
    const lagging = await scrape(t);
    expect(valueOf(lagging, 'restgraph_outbox_lag_events')).toBe(2);
    expect(valueOf(lagging, 'restgraph_outbox_lag_seconds')).toBeGreaterThanOrEqual(29);
    expect(valueOf(lagging, 'restgraph_outbox_lag_seconds')).toBeLessThan(120);

    t.app.restgraph.events.notify();
    await waitUntil(async () => valueOf(await scrape(t), 'restgraph_outbox_lag_events') === 0, 'the dispatcher to read the outbox');
    expect(valueOf(await scrape(t), 'restgraph_outbox_lag_seconds')).toBe(0);
  });
});

describe('webhook deliveries', () => {
  async function setup(): Promise<{ t: TestApp; receiver: WebhookReceiver }> {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    // One retry 50 ms after a failure; an endpoint failing for 10 ms is disabled.
    const t = await start({ webhooks: { allowHosts: ['127.0.0.1'], pollIntervalMs: 20, retryScheduleSeconds: [0.05], disableAfterMs: 10 } });
    return { t, receiver };
  }

  it('count attempts by outcome (succeeded, retry_scheduled, failed) and disabled endpoints', async () => {
    const { t, receiver } = await setup();
    receiver.respond('/flaky', failing(1, answer(500)));
    receiver.respond('/down', answer(500));
    for (const path of ['/flaky', '/down']) receiver.verifyWith(path, (await createWebhook(t.app, { url: receiver.url(path), events: ['user.created'] })).secret);
    const attempts = (families: Families, outcome: string): number => valueOf(families, 'restgraph_webhook_delivery_attempts_total', { outcome });
    const before = await scrape(t);
    expect(['succeeded', 'retry_scheduled', 'failed'].map((o) => attempts(before, o))).toEqual([0, 0, 0]);

    expect((await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Hooked' } })).statusCode).toBe(201);
    // /flaky: 500 (retry scheduled), then 200. /down: 500 (retry scheduled), 500 (failed, no retry left; failing ≥ 10 ms: disabled).
    const after = await waitUntil(async () => {
      const families = await scrape(t);
      return valueOf(families, 'restgraph_webhook_endpoints_disabled_total') === 1 && attempts(families, 'succeeded') === 1 ? families : undefined;
    }, 'both endpoints to finish');
    expect({ succeeded: attempts(after, 'succeeded'), retry_scheduled: attempts(after, 'retry_scheduled'), failed: attempts(after, 'failed') }).toEqual({ succeeded: 1, retry_scheduled: 2, failed: 1 });
    expect(receiver.requests.map((r) => `${r.path} ${r.answered ?? '?'}`).sort()).toEqual(['/down 500', '/down 500', '/flaky 200', '/flaky 500']);
    // From a scrape of its own: a scrape counts the pending deliveries in the database before it
    // reads the counters, so the one that saw the last attempt counted may have counted its
    // delivery pending while that attempt was being recorded.
    expect(valueOf(await scrape(t), 'restgraph_webhook_deliveries_pending')).toBe(0);
  });

  it('report the deliveries waiting for an attempt (here for a paused endpoint), back to 0 once delivered', async () => {
    const { t, receiver } = await setup();
    const webhook = await createWebhook(t.app, { url: receiver.url('/later'), events: ['user.created'] });
    receiver.verifyWith('/later', webhook.secret);
    expect((await t.app.inject({ method: 'POST', url: `/v1/webhooks/${webhook.id}/pause` })).statusCode).toBe(200);
    for (const name of ['One', 'Two']) expect((await t.app.inject({ method: 'POST', url: '/users', payload: { name } })).statusCode).toBe(201);
    await waitUntil(async () => valueOf(await scrape(t), 'restgraph_webhook_deliveries_pending') === 2, 'two pending deliveries');
    expect(receiver.requests).toEqual([]);

    expect((await t.app.inject({ method: 'POST', url: `/v1/webhooks/${webhook.id}/resume` })).statusCode).toBe(200);
    await waitUntil(async () => valueOf(await scrape(t), 'restgraph_webhook_deliveries_pending') === 0, 'the deliveries to go out');
    expect(receiver.requests.map((r) => r.answered)).toEqual([200, 200]);
    expect(valueOf(await scrape(t), 'restgraph_webhook_delivery_attempts_total', { outcome: 'succeeded' })).toBe(2);
  });
});

describe('open streams and subscriptions', () => {
  it('count /v1/events streams, graphql-sse streams and graphql-ws connections, and the subscribers the dispatcher feeds; back to 0 when they close', async () => {
    const db = await tempDatabase();
    const server = await listenApp(db.url);
    listening.push({ server, cleanup: db.cleanup });
    const streams = (families: Families, transport: string): number => valueOf(families, 'restgraph_open_streams', { transport });
    const snapshot = async (): Promise<Record<string, number>> => {
      const families = await scrape(server);
      return {
        'event-stream': streams(families, 'event-stream'),
        'graphql-sse': streams(families, 'graphql-sse'),
        'graphql-ws': streams(families, 'graphql-ws'),
        subscribers: valueOf(families, 'restgraph_event_subscribers'),
      };
    };
    const waitFor = (expected: Record<string, number>, what: string): Promise<unknown> =>
      waitUntil(async () => JSON.stringify(await snapshot()) === JSON.stringify(expected), `${what}: ${JSON.stringify(expected)}`);
    expect(await snapshot()).toEqual({ 'event-stream': 0, 'graphql-sse': 0, 'graphql-ws': 0, subscribers: 0 });

    const stream = await SseReader.open(`${server.base}/v1/events`);
    expect(stream.status).toBe(200);
    await waitFor({ 'event-stream': 1, 'graphql-sse': 0, 'graphql-ws': 0, subscribers: 1 }, 'an event stream');

    const ws = wsClient(server.base, { connectionParams: { Authorization: ADMIN }, lazy: false });
    clients.push(ws);
    await waitFor({ 'event-stream': 1, 'graphql-sse': 0, 'graphql-ws': 1, subscribers: 1 }, 'a WebSocket connection');
    const onWs = [ws.run('subscription { userCreated { id } }'), ws.run('subscription { postCreated { id } }')];
    await waitFor({ 'event-stream': 1, 'graphql-sse': 0, 'graphql-ws': 1, subscribers: 3 }, 'two subscriptions on it');

    const sse = sseClient(server.base, { headers: { authorization: ADMIN } });
    clients.push(sse);
    const onSse = sse.run('subscription { userDeleted { id } }');
    await waitFor({ 'event-stream': 1, 'graphql-sse': 1, 'graphql-ws': 1, subscribers: 4 }, 'a graphql-sse subscription');

    for (const recorder of [...onWs, onSse]) recorder.unsubscribe();
    await waitFor({ 'event-stream': 1, 'graphql-sse': 0, 'graphql-ws': 1, subscribers: 1 }, 'the subscriptions to end');
    await ws.dispose();
    stream.response.destroy();
    await waitFor({ 'event-stream': 0, 'graphql-sse': 0, 'graphql-ws': 0, subscribers: 0 }, 'everything closed');
  });
});
