// Many GraphQL subscribers in one process, for the event benchmarks: each a graphql-ws client
// (the graphql-transport-ws protocol over its own `ws` WebSocket), authenticated with
// connectionParams as browsers do, with one subscription. Also the small HTTP helpers and
// statistics the event worker uses.
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'graphql-ws';

const require = createRequire(import.meta.url);
/** The `ws` package's WebSocket client class (as graphql-ws's webSocketImpl). */
const WebSocket = require('ws');

/** Wall-clock time in ms with sub-ms resolution (comparable with the server's ISO timestamps). */
export const wallNow = () => performance.timeOrigin + performance.now();

/**
 * Connects `count` clients to `${url}/graphql`, in batches of `batch`, each subscribed to
 * `query(i)`. `onData(i, data, wallTime)` hears every result's data; results with errors, and
 * subscriptions that end (error, completion, a closed socket), are counted in `problems`.
 * Resolves when every client has its connection acknowledged (fails after `timeoutMs`).
 */
export async function connectSubscribers({ url, token, count, query, onData, batch = 100, timeoutMs = 60_000 }) {
  const wsUrl = `${url.replace(/^http/, 'ws')}/graphql`;
  const clients = [];
  const problems = { errors: 0, completed: 0, closedEarly: 0, samples: [] };
  let disposing = false;
  const note = (kind, detail) => {
    problems[kind]++;
    if (problems.samples.length < 5) problems.samples.push(`${kind}: ${detail}`.slice(0, 300));
  };
  // The credential also on the upgrade request (graphql-ws sends it in connection_init, as
  // browsers must): an anonymous upgrade counts against the anonymous request quota of the
  // address (600 a minute by default), and subscriber 600 would be refused with 429.
  class AuthorizedWebSocket extends WebSocket {
    constructor(address, protocols) {
      super(address, protocols, { headers: { authorization: `Bearer ${token}` } });
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (let start = 0; start < count; start += batch) {
    const acks = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      let acked;
      acks.push(new Promise((resolve, reject) => (acked = { resolve, reject })));
      const client = createClient({
        url: wsUrl,
        webSocketImpl: AuthorizedWebSocket,
        connectionParams: { Authorization: `Bearer ${token}` },
        retryAttempts: 0,
        lazy: true,
        on: {
          connected: () => acked.resolve(),
          closed: (event) => {
            acked.reject(new Error(`subscriber ${i} closed before its connection was acknowledged (${event?.code ?? '?'} ${event?.reason ?? ''})`));
            if (!disposing) note('closedEarly', `subscriber ${i}: ${event?.code ?? '?'} ${event?.reason ?? ''}`);
          },
        },
      });
      client.subscribe(
        { query: query(i) },
        {
          next: (result) => {
            const now = wallNow();
            if (result.errors) note('errors', JSON.stringify(result.errors));
            else onData(i, result.data, now);
          },
          error: (error) => {
            if (!disposing) note('errors', error instanceof Error ? error.message : JSON.stringify(error));
          },
          complete: () => {
            if (!disposing) note('completed', `subscriber ${i}`);
          },
        },
      );
      clients.push(client);
    }
    const left = deadline - Date.now();
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`subscribers not connected within ${timeoutMs} ms`)), Math.max(0, left));
    });
    try {
      await Promise.race([Promise.all(acks), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
  return {
    problems,
    /** Closes every client; resolves once their sockets are gone (or after a few seconds). */
    async dispose() {
      disposing = true;
      await Promise.race([Promise.allSettled(clients.map((c) => c.dispose())), sleep(5000)]);
    },
  };
}

/**
 * JSON requests to the server with the admin token, over keep-alive connections (node:http: far
 * cheaper per request than fetch, so the writers need less of the load CPU); each resolves when
 * the body has arrived, with the wall time its status line and headers came in (`responded`).
 */
export function requester(url, token) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const { hostname, port } = new URL(url);
  return (method, path, body) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers = { authorization: `Bearer ${token}` };
      if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      const req = httpRequest({ hostname, port, path, method, agent, headers, timeout: 30_000 }, (res) => {
        const responded = wallNow();
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode, json, text, responded });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no response within 30 s`)));
      req.on('error', reject);
      req.end(payload);
    });
}

/** Runs `fn(k)` for k = 0..n-1 with at most `concurrency` at a time. */
export async function pool(n, concurrency, fn) {
  let next = 0;
  const lane = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, lane));
}

/** Polls `done()` every 5 ms until true; false once `idleMs` pass without `progress()` changing or at `maxMs`. */
export async function waitFor(done, { progress = () => 0, idleMs = 10_000, maxMs = 120_000 } = {}) {
  const t0 = Date.now();
  let last = progress();
  let lastChange = t0;
  while (!done()) {
    const now = Date.now();
    const p = progress();
    if (p !== last) [last, lastChange] = [p, now];
    if (now - lastChange > idleMs || now - t0 > maxMs) return false;
    await sleep(5);
  }
  return true;
}

/** Server resident memory (VmRSS, bytes) from /proc, the median of `samples` readings `gapMs` apart. */
export async function serverRss(pid, samples = 5, gapMs = 200) {
  const values = [];
  for (let k = 0; k < samples; k++) {
    if (k) await sleep(gapMs);
    try {
      const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
      if (line) values.push(Number(line[1]) * 1024);
    } catch {
      return null;
    }
  }
  return median(values);
}

/** CPU seconds (user + system) a process has used so far, from /proc; null elsewhere. */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in USER_HZ ticks
  } catch {
    return null;
  }
}

/** Messages per second while messages were arriving: counted in 100 ms buckets, empty ones left out. */
export class RateMeter {
  #buckets = new Map();
  add(at) {
    const b = Math.floor(at / 100);
    this.#buckets.set(b, (this.#buckets.get(b) ?? 0) + 1);
  }
  /** Seconds in which messages arrived (100 ms resolution). */
  activeSeconds() {
    return this.#buckets.size / 10;
  }
  rate() {
    let n = 0;
    for (const count of this.#buckets.values()) n += count;
    return this.#buckets.size ? n / (this.#buckets.size / 10) : null;
  }
}

export function quantile(values, q) {
  const v = [...values].sort((a, b) => a - b);
  if (!v.length) return null;
  return v[Math.min(v.length - 1, Math.max(0, Math.ceil(q * v.length) - 1))];
}

export function median(values) {
  const v = values.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}
