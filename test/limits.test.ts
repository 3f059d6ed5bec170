import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RestgraphOptions } from '../src/app/app-options.js';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { ConfigError } from '../src/errors.js';
import { finish, freePort, killAll, startCli, waitReady, type Running } from './helpers/cli-process.js';
import { ADMIN, listenApp, tempDatabase, waitUntil, type ListeningApp } from './helpers/event-stream.js';
import { parsePrometheusText, valueOf } from './helpers/prometheus-text.js';
import { codes, refusalOf, WebSocketImpl, wsClient, type SubscriptionClient } from './helpers/subscription-clients.js';
import { json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { ranInSqlitePass } from './helpers/test-database.js';

/**
 * Every configurable limit, exceeded and not: the body, the page size, the URL, the request line
 * and headers, the time to send a request, WebSocket messages and operations per WebSocket. At
 * the limit a request passes; one byte (or one item) more gets its documented error. Then the
 * environment variables: each read, and a bad value refused at start-up naming the variable.
 */

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

interface Problem {
  type: string;
  status: number;
  code: string;
  detail: string;
  instance?: string;
  requestId?: string;
  errors?: { parameter?: string; detail: string }[];
}

let apps: TestApp[] = [];
let servers: { server: ListeningApp; cleanup: () => Promise<void> }[] = [];
let clients: SubscriptionClient[] = [];
let children: Running[] = [];
let dirs: ReturnType<typeof tempDir>[] = [];

afterEach(async () => {
  for (const client of clients) await client.dispose();
  await killAll(children);
  for (const t of apps) await t.close();
  for (const { server, cleanup } of servers) {
    await server.close();
    await cleanup();
  }
  for (const dir of dirs) dir.cleanup();
  apps = [];
  servers = [];
  clients = [];
  children = [];
  dirs = [];
});

async function start(options: RestgraphOptions): Promise<TestApp> {
  const t = await startTestApp(options);
  apps.push(t);
  return t;
}

async function listen(options: RestgraphOptions): Promise<ListeningApp> {
  const db = await tempDatabase();
  const server = await listenApp(db.url, options);
  servers.push({ server, cleanup: db.cleanup });
  return server;
}

function expectProblem(response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string): Problem {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
  const problem = json<Problem>(response);
  expect(problem).toMatchObject({ type: `urn:restgraph:problem:${code}`, status, code });
  return problem;
}

/** Sends `text` on a new TCP connection, in parts `pauseMs` apart; resolves to everything read until the server closes it. */
function rawHttp(port: number, parts: string[], pauseMs = 0): Promise<{ statusLine: string; headers: string; body: string; elapsedMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.once('error', reject);
    socket.once('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...headers] = head.split('\r\n');
      resolve({ statusLine, headers: headers.join('\n').toLowerCase(), body, elapsedMs: Date.now() - started });
    });
    void (async () => {
      for (const [index, part] of parts.entries()) {
        if (index > 0) await new Promise((r) => setTimeout(r, pauseMs));
        if (!socket.destroyed) socket.write(part);
      }
    })();
  });
}

describe('request body', () => {
  it('a body of exactly the limit is read; one byte more is a 413 payload-too-large', async () => {
    const t = await start({ bodyLimitBytes: 1024 });
    const body = (size: number): string => {
      const shell = JSON.stringify({ name: 'Sized', bio: '' });
      return JSON.stringify({ name: 'Sized', bio: 'x'.repeat(size - shell.length) });
    };
    expect(Buffer.byteLength(body(1024))).toBe(1024);
    const at = await t.app.inject({ method: 'POST', url: '/users', headers: { 'content-type': 'application/json' }, payload: body(1024) });
    expect(at.statusCode, at.body).toBe(201);
    const over = await t.app.inject({ method: 'POST', url: '/users', headers: { 'content-type': 'application/json' }, payload: body(1025) });
    expect(expectProblem(over, 413, 'payload-too-large').instance).toBe('/users');
  });
});

/** One request through `agent` (which may reuse a connection); resolves to the status and the Connection header, rejects on a connection error. */
function agentRequest(agent: Agent, port: number, req: { method: string; path: string; body?: Buffer }): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: ADMIN };
    if (req.body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(req.body.length) });
    const outgoing = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

/** What a client that sends a request with a large body saw: the response bytes, and how the connection ended. */
interface UploadOutcome {
  response: string;
  /** `end`: the server closed gracefully (FIN); else the socket error code (ECONNRESET, EPIPE). */
  ending: string;
  sent: number;
}

/**
 * Sends a POST whose headers announce `announced` bytes, then up to `size` bytes of body as fast as
 * the socket takes them; `readAfterSending`: reads nothing until it has sent them all (as many
 * HTTP clients do), else reads as it goes; `ignoreClose`: keeps its side open and sending when the
 * server closes its own (as a hostile client may), else closes when the server does.
 */
function upload(port: number, announced: number | undefined, size: number, how: { readAfterSending?: boolean; ignoreClose?: boolean; path?: string }): Promise<UploadOutcome> {
  const readAfterSending = how.readAfterSending === true;
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: how.ignoreClose === true });
    let response = '';
    let sent = 0;
    let ending = 'end';
    if (readAfterSending) socket.pause();
    socket.setEncoding('latin1').on('data', (chunk: string) => (response += chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => (ending = error.code ?? 'error'));
    socket.on('close', () => resolve({ response, ending, sent }));
    const length = announced === undefined ? 'transfer-encoding: chunked' : `content-length: ${announced}`;
    socket.write(`POST ${how.path ?? '/users'} HTTP/1.1\r\nhost: x\r\nauthorization: ${ADMIN}\r\ncontent-type: application/json\r\n${length}\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const framed = announced === undefined ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
    const pump = (): void => {
      while (sent < size && !socket.destroyed) {
        sent += chunk.length;
        if (!socket.write(framed)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!socket.destroyed && announced === undefined) socket.write('0\r\n\r\n');
      socket.resume();
      // A client that keeps its side open learns that the server has closed its own only by
      // sending: once it has, the next byte is answered with a reset.
      if (how.ignoreClose === true) {
        const ping = setInterval(() => (socket.destroyed ? clearInterval(ping) : socket.write(' ')), 100);
        socket.once('close', () => clearInterval(ping));
      }
    };
    pump();
  });
}

describe('a body over the limit, on a real socket (lingering close, RFC 9112 section 9.6)', () => {
  const TEN_MB = 10 * 1024 * 1024;
  const expect413 = (outcome: UploadOutcome): void => {
    expect(outcome.response.split('\r\n')[0], JSON.stringify(outcome)).toBe('HTTP/1.1 413 Payload Too Large');
    // The client must learn that this connection ends, or it would send its next request on it.
    expect(outcome.response.toLowerCase()).toContain('\r\nconnection: close\r\n');
    const [, body = ''] = outcome.response.split('\r\n\r\n');
    expect(JSON.parse(body)).toMatchObject({ status: 413, code: 'payload-too-large' });
  };

  it('a client that reads only after sending all of a 10 MB body with Content-Length gets its 413, and a graceful close', async () => {
    const server = await listen({});
    for (let i = 0; i < 3; i++) {
      const outcome = await upload(server.port, TEN_MB, TEN_MB, { readAfterSending: true });
      expect413(outcome);
      expect(outcome.ending).toBe('end');
      expect(outcome.sent).toBe(TEN_MB);
    }
    // The server is none the worse: it answers the next request.
    expect((await rawHttp(server.port, ['GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'])).statusLine).toBe('HTTP/1.1 200 OK');
  });

  it('the same for a chunked body (no Content-Length) that grows past the limit, and on /graphql', async () => {
    const server = await listen({});
    const outcome = await upload(server.port, undefined, 4 * 1024 * 1024, { readAfterSending: true });
    expect413(outcome);
    expect(outcome.ending).toBe('end');
    const graphql = await upload(server.port, TEN_MB, TEN_MB, { readAfterSending: true, path: '/graphql' });
    expect(graphql.response.split('\r\n')[0], JSON.stringify(graphql)).toBe('HTTP/1.1 413 Payload Too Large');
    expect(graphql.ending).toBe('end');
  });

  it('a keep-alive client is told the connection closes after the 413, so its next request goes on a new connection and is answered', async () => {
    const server = await listen({});
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 5; i++) {
        const refused = await agentRequest(agent, server.port, { method: 'POST', path: '/users', body: Buffer.alloc(2 * 1024 * 1024, 0x20) });
        expect(refused.status).toBe(413);
        expect(refused.connection).toBe('close');
        const next = await agentRequest(agent, server.port, { method: 'GET', path: '/healthz' });
        expect(next.status).toBe(200);
      }
    } finally {
      agent.destroy();
    }
  });

  it('the server reads and discards at most 16 MiB after the 413: a client sending 256 MB more is cut off', async () => {
    const server = await listen({});
    const outcome = await upload(server.port, 256 * 1024 * 1024, 256 * 1024 * 1024, { ignoreClose: true });
    expect413(outcome);
    expect(outcome.ending).not.toBe('end');
    // 16 MiB read after the response, plus what the kernel's buffers and one 20 ms measure hold.
    expect(outcome.sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('and lingers at most RESTGRAPH_REQUEST_TIMEOUT_MS (up to 5 s): a client that stops sending is closed', async () => {
    const server = await listen({ requestTimeoutMs: 1000 });
    const started = Date.now();
    // Announces 10 MB, sends 1 MB, then waits with its side of the connection open.
    const outcome = await upload(server.port, TEN_MB, 1024 * 1024, { ignoreClose: true });
    expect413(outcome);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

describe('problems listed in one error', () => {
  it('a 639 KB body with 50,000 unknown fields gets a small 422 listing the first 100 and saying how many were left out', async () => {
    const t = await start({});
    const body = JSON.stringify(Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`x${String(i).padStart(8, '0')}`, 0])));
    expect(Buffer.byteLength(body)).toBeGreaterThan(600_000);
    const response = await t.app.inject({ method: 'POST', url: '/users', headers: { 'content-type': 'application/json' }, payload: body });
    const problem = expectProblem(response, 422, 'validation-failed') as Problem & { errorsOmitted?: number; errors: { pointer: string }[] };
    expect(problem.detail).toBe('50001 fields are invalid.');
    expect(problem.errors).toHaveLength(100);
    expect(problem.errors.slice(0, 2)).toEqual([
      { pointer: '/name', detail: 'is required' },
      { pointer: '/x00000000', detail: 'is not a field of users' },
    ]);
    expect(problem.errorsOmitted).toBe(49_901);
    expect(response.body.length).toBeLessThan(20_000);
  });

  it('so does a query string with more problems than that', async () => {
    const t = await start({ maxUrlLength: 16 * 1024 - 1 });
    const query = Array.from({ length: 150 }, (_, i) => `x${i}=1`).join('&');
    const problem = expectProblem(await t.app.inject({ method: 'GET', url: `/users?${query}` }), 400, 'invalid-query') as Problem & { errorsOmitted?: number };
    expect(problem.errors).toHaveLength(100);
    expect(problem.errorsOmitted).toBe(50);
  });
});

describe('page size', () => {
  it('limit up to the maximum is served; above it is a 400 invalid-query naming limit; no limit gives the default page', async () => {
    const t = await start({ listLimits: { defaultLimit: 3, maxLimit: 5 } });
    for (let i = 0; i < 7; i++) expect((await t.app.inject({ method: 'POST', url: '/users', payload: { name: `U${i}` } })).statusCode).toBe(201);
    expect(json<unknown[]>(await t.app.inject({ method: 'GET', url: '/users?limit=5' }))).toHaveLength(5);
    expect(json<unknown[]>(await t.app.inject({ method: 'GET', url: '/users' }))).toHaveLength(3);
    const problem = expectProblem(await t.app.inject({ method: 'GET', url: '/users?limit=6' }), 400, 'invalid-query');
    expect(problem.errors).toEqual([{ parameter: 'limit', detail: 'must be an integer from 1 to 5' }]);
  });
});

describe('URL length', () => {
  it('a URL of exactly maxUrlLength is served; one byte more is a 414 uri-too-long (problem+json, with the request id)', async () => {
    const t = await start({ maxUrlLength: 64 });
    const url = (length: number): string => `/users?name=${'a'.repeat(length - '/users?name='.length)}`;
    expect(url(64)).toHaveLength(64);
    const at = await t.app.inject({ method: 'GET', url: url(64) });
    expect(at.statusCode, at.body).toBe(200);
    const over = await t.app.inject({ method: 'GET', url: url(65) });
    const problem = expectProblem(over, 414, 'uri-too-long');
    expect(problem.detail).toBe('The URL is 65 bytes long; this server accepts at most 64.');
    expect(problem.requestId).toBe(over.headers['x-request-id']);
    // Refused before authentication: a URL that long is never looked at further.
    expect(expectProblem(await t.app.inject({ method: 'GET', url: url(65), headers: { authorization: 'Bearer rg_unknown' } }), 414, 'uri-too-long').code).toBe('uri-too-long');
  });
});

describe('request line and headers', () => {
  /**
   * A request whose size, as Node.js counts it against maxHeaderSize (the URL, and each header's
   * name and value; not the method, version, separators or line ends), is exactly `size`.
   */
  function requestOfCountedSize(size: number, path = '/healthz'): string {
    const fixed = path.length + 'host'.length + 'x'.length + 'x-pad'.length + 'connection'.length + 'close'.length;
    return `GET ${path} HTTP/1.1\r\nhost: x\r\nx-pad: ${'p'.repeat(size - fixed)}\r\nconnection: close\r\n\r\n`;
  }

  it('up to maxHeaderBytes are read; beyond is a 431 header-fields-too-large (problem+json), counted in the metrics; the URL counts too', async () => {
    const server = await listen({ maxHeaderBytes: 2048 });
    const at = await rawHttp(server.port, [requestOfCountedSize(2048)]);
    expect(at.statusLine).toBe('HTTP/1.1 200 OK');
    const over = await rawHttp(server.port, [requestOfCountedSize(2049)]);
    expect(over.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(over.headers).toContain(`content-type: ${PROBLEM_TYPE}`);
    expect(JSON.parse(over.body)).toEqual({
      type: 'urn:restgraph:problem:header-fields-too-large',
      title: 'Request header fields too large',
      status: 431,
      detail: 'The request headers (or its URL) are larger than this server accepts.',
      code: 'header-fields-too-large',
    });
    // A long URL counts toward the same limit.
    const longUrl = await rawHttp(server.port, [`GET /healthz?q=${'u'.repeat(2100)} HTTP/1.1\r\nhost: x\r\n\r\n`]);
    expect(longUrl.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');

    const metrics = parsePrometheusText((await server.app.inject({ method: 'GET', url: '/metrics' })).body);
    expect(valueOf(metrics, 'restgraph_http_client_errors_total', { status: '431' })).toBe(2);
  });
});

describe('a request that is not valid HTTP', () => {
  it('gets a 400 bad-request problem, and a HEAD request its head alone (a body would be read as the next response)', async () => {
    const server = await listen({});
    const get = await rawHttp(server.port, ['GET /users/\u00e9 HTTP/1.1\r\nhost: x\r\n\r\n']);
    expect(get.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(get.body)).toMatchObject({ code: 'bad-request', status: 400 });
    const head = await rawHttp(server.port, ['HEAD /users/\u00e9 HTTP/1.1\r\nhost: x\r\n\r\n']);
    expect(head.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(head.headers).toContain('content-type: application/problem+json');
    expect(head.body).toBe('');
  });
});

describe('time to send a request', () => {
  it('a client sending its headers within requestTimeoutMs is served; one taking longer gets a 408 request-timeout and its connection closed', async () => {
    const server = await listen({ requestTimeoutMs: 400 });
    const request = 'GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n';
    const slowButInTime = await rawHttp(server.port, [request.slice(0, 20), request.slice(20)], 150);
    expect(slowButInTime.statusLine).toBe('HTTP/1.1 200 OK');

    const stalled = await rawHttp(server.port, [request.slice(0, 20)]);
    expect(stalled.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(stalled.body)).toMatchObject({ code: 'request-timeout', status: 408 });
    // Cut after the timeout, and (checked at most every second) not long after: well before
    // Node.js's own 60 s headers timeout, with room for a busy machine.
    expect(stalled.elapsedMs).toBeGreaterThanOrEqual(390);
    expect(stalled.elapsedMs).toBeLessThan(10_000);
  });
});

/** Opens a graphql-transport-ws socket as admin; resolves with what it receives and how it closed. */
async function socket(server: ListeningApp): Promise<{ send: (text: string) => void; messages: string[]; closed: Promise<number> }> {
  const ws = new WebSocketImpl(`${server.base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { headers: { authorization: ADMIN } });
  const messages: string[] = [];
  ws.on('message', (data) => messages.push(data.toString('utf8')));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.on('open', resolve);
    ws.on('error', reject);
  });
  return { send: (text) => ws.send(text), messages, closed };
}

describe('WebSocket messages', () => {
  const padded = (size: number, message: Record<string, unknown>): string => {
    const shell = JSON.stringify({ ...message, pad: '' });
    return JSON.stringify({ ...message, pad: 'w'.repeat(size - shell.length) });
  };

  it('a message of exactly maxWebSocketMessageBytes is read; one byte more closes the socket with 1009 (message too big), and nothing is printed outside the log', async () => {
    const printed = vi.spyOn(console, 'error');
    const server = await listen({ graphql: { maxWebSocketMessageBytes: 1024 } });
    const ws = await socket(server);
    const init = padded(1024, { type: 'connection_init', payload: {} });
    expect(Buffer.byteLength(init)).toBe(1024);
    ws.send(init);
    await waitUntil(() => ws.messages.includes('{"type":"connection_ack"}'), 'connection_ack');
    ws.send(padded(1025, { type: 'subscribe', id: '1', payload: { query: 'subscription { userCreated { id } }' } }));
    expect(await ws.closed).toBe(1009);
    // graphql-ws would print "Internal error emitted on a WebSocket socket" for the client's oversized message.
    expect(printed).not.toHaveBeenCalled();
    printed.mockRestore();
    // The fault is the client's: logged as client errors are (info), never as a server error.
    await waitUntil(() => server.logs.some((l) => l.wsError === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'), 'the log line of the oversized message');
    expect(server.logs.filter((l) => typeof l.level === 'number' && l.level >= 40).map((l) => l.msg)).toEqual([]);
    expect(server.logs.find((l) => l.code === 'message-too-big')).toMatchObject({ level: 30, msg: expect.stringContaining('over the limit of 1024 bytes') as string });
  });
});

describe('operations per WebSocket connection', () => {
  /** A raw graphql-ws connection, acknowledged; its subscribe messages, refusals and running subscriptions. */
  async function acknowledgedSocket(): Promise<{
    ws: Awaited<ReturnType<typeof socket>>;
    subscribe: (id: string) => string;
    errors: () => { id: string; payload: { extensions: Record<string, unknown> }[] }[];
    running: () => number;
  }> {
    const server = await listen({});
    const before = server.app.restgraph.events.subscriberCount;
    const ws = await socket(server);
    ws.send(JSON.stringify({ type: 'connection_init' }));
    await waitUntil(() => ws.messages.includes('{"type":"connection_ack"}'), 'connection_ack');
    return {
      ws,
      subscribe: (id) => JSON.stringify({ id, type: 'subscribe', payload: { query: 'subscription { userCreated { id } }' } }),
      errors: () => ws.messages.map((m) => JSON.parse(m) as { id: string; type: string; payload: { extensions: Record<string, unknown> }[] }).filter((m) => m.type === 'error'),
      running: () => server.app.restgraph.events.subscriberCount - before,
    };
  }

  it('maxSubscriptionsPerConnection run at once; one more is refused with query-too-complex naming the limit', async () => {
    const server = await listen({ graphql: { maxSubscriptionsPerConnection: 2 } });
    const client = wsClient(server.base, { connectionParams: { Authorization: ADMIN }, lazy: false });
    clients.push(client);
    const query = 'subscription { userCreated { id } }';
    const running = [client.run(query), client.run(query)];
    await waitUntil(() => server.app.restgraph.events.subscriberCount === 2, 'two subscriptions');
    const errors = refusalOf(await client.run(query).waitForEnd());
    expect(codes(errors)).toEqual(['query-too-complex']);
    expect(errors[0]?.extensions).toEqual({ code: 'query-too-complex', status: 400, limit: 'maxSubscriptionsPerConnection', max: 2 });
    expect(running.every((r) => !r.ended)).toBe(true);
  });

  it('101 subscribe messages sent back to back on one connection: exactly the one over the 100 allowed is refused, and a completed one frees its place', async () => {
    const { ws, subscribe, errors, running } = await acknowledgedSocket();
    for (let i = 1; i <= 101; i++) ws.send(subscribe(String(i)));
    await waitUntil(() => running() + errors().length === 101, '101 subscriptions running or refused');
    expect(errors().map((e) => e.payload[0]?.extensions)).toEqual([{ code: 'query-too-complex', status: 400, limit: 'maxSubscriptionsPerConnection', max: 100 }]);
    expect(running()).toBe(100);
    ws.send(JSON.stringify({ id: '1', type: 'complete' }));
    await waitUntil(() => running() === 99, 'the completed subscription to end');
    ws.send(subscribe('102'));
    await waitUntil(() => running() === 100, 'a new subscription in the freed place');
    expect(errors()).toHaveLength(1);
  });

  it('completes and subscribes sent back to back: the places the completes free are free for the subscribes that follow them at once', async () => {
    const { ws, subscribe, errors, running } = await acknowledgedSocket();
    for (let i = 1; i <= 100; i++) ws.send(subscribe(String(i)));
    await waitUntil(() => running() === 100, '100 subscriptions running');
    // 10 completes then 11 subscribes, all in one go: 10 of them take the freed places, one is refused.
    const burst = [...Array.from({ length: 10 }, (_, i) => JSON.stringify({ id: String(i + 1), type: 'complete' })), ...Array.from({ length: 11 }, (_, i) => subscribe(String(101 + i)))];
    for (const message of burst) ws.send(message);
    await waitUntil(() => running() + errors().length === 101, '100 subscriptions running and one refused');
    expect(errors()).toHaveLength(1);
    expect(running()).toBe(100);
  });
});

describe('configuration from the environment', () => {
  const good: [Record<string, string>, (options: ReturnType<typeof optionsFromEnv>) => unknown, unknown][] = [
    [{ RESTGRAPH_BODY_LIMIT: '2048' }, (o) => o.bodyLimitBytes, 2048],
    [{ RESTGRAPH_REQUEST_TIMEOUT_MS: '5000' }, (o) => o.requestTimeoutMs, 5000],
    [{ RESTGRAPH_DEFAULT_PAGE_SIZE: '20', RESTGRAPH_MAX_PAGE_SIZE: '50' }, (o) => o.listLimits, { defaultLimit: 20, maxLimit: 50 }],
    [{ RESTGRAPH_MAX_HEADER_BYTES: '32768' }, (o) => o.maxHeaderBytes, 32_768],
    [{ RESTGRAPH_MAX_URL_LENGTH: '4096' }, (o) => o.maxUrlLength, 4096],
    [{ RESTGRAPH_MAX_HEADER_BYTES: '4096', RESTGRAPH_MAX_URL_LENGTH: '4096' }, (o) => [o.maxHeaderBytes, o.maxUrlLength], [4096, 4096]],
    [{ RESTGRAPH_GRAPHQL_MAX_WS_MESSAGE_BYTES: '65536' }, (o) => o.graphql?.maxWebSocketMessageBytes, 65_536],
    [{ RESTGRAPH_GRAPHQL_MAX_WS_OPERATIONS: '7' }, (o) => o.graphql?.maxSubscriptionsPerConnection, 7],
    [{ RESTGRAPH_GRAPHQL_MAX_SELECTIONS: '2500' }, (o) => o.graphql?.maxSelections, 2500],
    [{ RESTGRAPH_METRICS: 'false' }, (o) => o.metrics, { enabled: false }],
    [{ RESTGRAPH_METRICS_PUBLIC: 'true' }, (o) => o.metrics, { public: true }],
    [{}, (o) => [o.maxHeaderBytes, o.maxUrlLength, o.metrics, o.graphql], [undefined, undefined, undefined, undefined]],
    [{ RESTGRAPH_RESPONSE_TIMEOUT_MS: '5000' }, (o) => o.responseTimeoutMs, 5000],
    [{ RESTGRAPH_RESPONSE_TIMEOUT_MS: '0' }, (o) => o.responseTimeoutMs, 0],
    [
      {
        RESTGRAPH_DB_CONNECT_TIMEOUT_MS: '1000',
        RESTGRAPH_DB_STATEMENT_TIMEOUT_MS: '0',
        RESTGRAPH_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '60000',
        RESTGRAPH_DB_QUERY_TIMEOUT_MS: '90000',
        RESTGRAPH_SQLITE_LOCK_TIMEOUT_MS: '250',
      },
      (o) => o.database,
      { connectTimeoutMs: 1000, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 60_000, queryTimeoutMs: 90_000, sqliteLockTimeoutMs: 250 },
    ],
    [{ RESTGRAPH_SQLITE_SYNCHRONOUS: 'normal' }, (o) => o.database, { sqliteSynchronous: 'NORMAL' }],
    [{ RESTGRAPH_SQLITE_SYNCHRONOUS: 'FULL' }, (o) => o.database, { sqliteSynchronous: 'FULL' }],
    [{}, (o) => [o.responseTimeoutMs, o.database], [undefined, undefined]],
  ];
  for (const [env, read, expected] of good) {
    it(`reads ${JSON.stringify(env)}`, () => {
      expect(read(optionsFromEnv(env))).toEqual(expected);
    });
  }

  const bad: [Record<string, string>, string, string][] = [
    [{ RESTGRAPH_MAX_HEADER_BYTES: 'lots' }, 'RESTGRAPH_MAX_HEADER_BYTES', 'must be an integer from 1024 to 1048576, not "lots"'],
    [{ RESTGRAPH_MAX_HEADER_BYTES: '512' }, 'RESTGRAPH_MAX_HEADER_BYTES', 'must be an integer from 1024 to 1048576, not "512"'],
    [{ RESTGRAPH_MAX_URL_LENGTH: '10' }, 'RESTGRAPH_MAX_URL_LENGTH', 'must be an integer from 64 to 1048576, not "10"'],
    [{ RESTGRAPH_MAX_URL_LENGTH: '20000' }, 'RESTGRAPH_MAX_URL_LENGTH', 'must not be larger than RESTGRAPH_MAX_HEADER_BYTES (16384): the URL counts toward the header limit'],
    [{ RESTGRAPH_MAX_HEADER_BYTES: '2048', RESTGRAPH_MAX_URL_LENGTH: '4096' }, 'RESTGRAPH_MAX_URL_LENGTH', 'must not be larger than RESTGRAPH_MAX_HEADER_BYTES (2048)'],
    [{ RESTGRAPH_GRAPHQL_MAX_WS_MESSAGE_BYTES: '10' }, 'RESTGRAPH_GRAPHQL_MAX_WS_MESSAGE_BYTES', 'must be an integer from 1024 to 1073741824, not "10"'],
    [{ RESTGRAPH_GRAPHQL_MAX_WS_OPERATIONS: '0' }, 'RESTGRAPH_GRAPHQL_MAX_WS_OPERATIONS', 'must be an integer from 1 to 100000, not "0"'],
    [{ RESTGRAPH_GRAPHQL_MAX_SELECTIONS: '0' }, 'RESTGRAPH_GRAPHQL_MAX_SELECTIONS', 'must be an integer from 1 to 10000000, not "0"'],
    [{ RESTGRAPH_METRICS: 'maybe' }, 'RESTGRAPH_METRICS', 'must be true or false, not "maybe"'],
    [{ RESTGRAPH_METRICS_PUBLIC: 'yes' }, 'RESTGRAPH_METRICS_PUBLIC', 'must be true or false, not "yes"'],
    [{ RESTGRAPH_RESPONSE_TIMEOUT_MS: '-1' }, 'RESTGRAPH_RESPONSE_TIMEOUT_MS', 'must be an integer from 0 to 3600000, not "-1"'],
    [{ RESTGRAPH_DB_CONNECT_TIMEOUT_MS: '0' }, 'RESTGRAPH_DB_CONNECT_TIMEOUT_MS', 'must be an integer from 100 to 3600000, not "0"'],
    [{ RESTGRAPH_DB_STATEMENT_TIMEOUT_MS: '15s' }, 'RESTGRAPH_DB_STATEMENT_TIMEOUT_MS', 'must be an integer from 0 to 3600000, not "15s"'],
    [{ RESTGRAPH_SQLITE_SYNCHRONOUS: 'OFF' }, 'RESTGRAPH_SQLITE_SYNCHRONOUS', 'OFF is not offered'],
    [{ RESTGRAPH_SQLITE_SYNCHRONOUS: 'EXTRA' }, 'RESTGRAPH_SQLITE_SYNCHRONOUS', 'must be FULL or NORMAL, not "EXTRA"'],
  ];
  for (const [env, name, reason] of bad) {
    it(`refuses ${JSON.stringify(env)} naming ${name}`, () => {
      let error: unknown;
      try {
        optionsFromEnv(env);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).option).toBe(name);
      expect((error as ConfigError).message).toContain(`Invalid configuration ${name}: ${reason}`);
    });
  }

  // On a SQLite file of its own: the same in both passes, so in the SQLite pass only.
  it.skipIf(ranInSqlitePass)('restgraph serve exits 1 on a bad limit, naming the variable, before it listens', async () => {
    const dir = tempDir('restgraph-limits-');
    dirs.push(dir);
    const env = { DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}`, PORT: String(await freePort()), RESTGRAPH_MAX_URL_LENGTH: '1e3' };
    const result = await finish(startCli(dir.path, ['serve'], env, children));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('restgraph: Invalid configuration RESTGRAPH_MAX_URL_LENGTH: must be an integer from 64 to 1048576, not "1e3" [RG_CONFIG_INVALID]');
    expect(result.stdout).not.toContain('listening');
  });

  // On a SQLite file of its own: the same in both passes, so in the SQLite pass only.
  it.skipIf(ranInSqlitePass)('restgraph serve applies the limits it is given: URL, headers, public metrics', async () => {
    const dir = tempDir('restgraph-limits-');
    dirs.push(dir);
    const port = await freePort();
    const env = {
      DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}`,
      PORT: String(port),
      RESTGRAPH_ADMIN_TOKEN: 'limits-test-admin-token-0123456789',
      RESTGRAPH_MAX_HEADER_BYTES: '1024',
      RESTGRAPH_MAX_URL_LENGTH: '100',
      RESTGRAPH_METRICS_PUBLIC: 'true',
      LOG_LEVEL: 'warn',
    };
    const running = startCli(dir.path, ['serve'], env, children);
    await waitReady(running, port);
    const base = `http://127.0.0.1:${port}`;
    const path = (length: number): string => `/healthz?x=${'a'.repeat(length - '/healthz?x='.length)}`;
    expect((await fetch(`${base}${path(100)}`)).status).toBe(200);
    const over = await fetch(`${base}${path(101)}`);
    expect(over.status).toBe(414);
    expect(((await over.json()) as Problem).code).toBe('uri-too-long');
    const headers = await rawHttp(port, [`GET /healthz HTTP/1.1\r\nhost: x\r\nx-pad: ${'p'.repeat(1100)}\r\n\r\n`]);
    expect(headers.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(valueOf(parsePrometheusText(await metrics.text()), 'restgraph_http_requests_total', { route: '/healthz', status: '414' })).toBe(1);
  });
});
