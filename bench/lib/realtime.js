// The clients of the realtime scenario (bench/events.js, run by bench/event-worker.js): many
// graphql-ws subscribers and /v1/events SSE consumers in one process, kept cheap enough that
// 11,000 of them fit on the load CPU, and the probes whose deliveries to every one of them are
// counted and timed.
//
// The WebSocket clients speak the graphql-transport-ws protocol directly on `ws` (no graphql-ws
// client: its per-client machinery, retries and JSON parsing of every message cost more than the
// server's work per delivery here): the upgrade request carries the credential (see below),
// connection_init carries it too in its payload, as browsers send it; wait for
// connection_ack, then one subscribe message per subscription of the socket. A `next` message is
// recognised by a byte search and its probe marker read without parsing the JSON; anything else
// (error, complete, ping) is parsed. The SSE consumers are plain keep-alive-less HTTP GETs of
// /v1/events?types=user.created, read frame by frame.
//
// Listeners are numbered 0..subscribers-1 (WebSocket subscriptions: even = userCreated, odd =
// userUpdated(id) of a watched id, 1 + (i >> 1) % watched, so each watched id has
// subscribers / 2 / watched listeners) and subscribers..subscribers+sse-1 (SSE consumers, which
// like userCreated subscribers hear every create). Probes are creates named `rtc-<seq>` and
// updates setting `bio` to `rtu-<seq>` of one watched id; seq indexes `probes.list`.
import { request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { wallNow } from './subscribers.js';

const require = createRequire(import.meta.url);
const WebSocket = require('ws');

const NEXT = Buffer.from('"type":"next"');
const CREATE_MARK = 'rtc-';
const UPDATE_MARK = 'rtu-';

/** The digits after the first `marker` in a Buffer or string, as a number; -1 when absent. */
function seqAfter(text, marker) {
  const at = text.indexOf(marker);
  if (at < 0) return -1;
  const isString = typeof text === 'string';
  let p = at + marker.length;
  let n = 0;
  for (;;) {
    const c = isString ? text.charCodeAt(p) : text[p];
    if (!(c >= 48 && c <= 57)) break;
    n = n * 10 + c - 48;
    p++;
  }
  return p === at + marker.length ? -1 : n;
}

/** This process's limit of open files (Linux), or null. */
export function openFileLimit() {
  try {
    const m = readFileSync('/proc/self/limits', 'utf8').match(/^Max open files\s+(\d+)/m);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * The probes and what reached whom. `watchOf[i]` is the user id listener i watches (userUpdated),
 * or 0 for a listener of every create (userCreated, SSE).
 */
export class Probes {
  constructor(watchOf) {
    this.watchOf = watchOf;
    this.total = watchOf.length;
    this.list = [];
    /** Deliveries per listener (probes and the load's own updates). */
    this.got = new Uint32Array(this.total);
    /** Messages without a probe marker (the load's updates of watched ids), and their count per listener. */
    this.background = 0;
    /** Marked messages of a probe this process did not make. */
    this.unknown = 0;
    this.messages = 0;
    this.lastAt = 0;
    this.expectedOf = { c: 0, u: new Map() };
    for (const id of watchOf) {
      if (id === 0) this.expectedOf.c++;
      else this.expectedOf.u.set(id, (this.expectedOf.u.get(id) ?? 0) + 1);
    }
  }

  /** A new probe, registered before its request is sent (its events may come before the response). */
  add(kind, phase, id = 0) {
    const probe = {
      seq: this.list.length,
      kind,
      phase,
      id,
      expected: kind === 'c' ? this.expectedOf.c : (this.expectedOf.u.get(id) ?? 0),
      hits: new Uint8Array(this.total),
      count: 0,
      duplicates: 0,
      stray: 0,
      sentAt: NaN,
      respondedAt: NaN,
      stampAt: NaN,
      firstAt: NaN,
      lastAt: NaN,
      cpuAtLast: null,
      error: null,
    };
    this.list.push(probe);
    return probe;
  }

  /** A message for listener i (a Buffer or a string), arrived at `at`. */
  deliver(i, text, at) {
    this.messages++;
    this.got[i]++;
    this.lastAt = at;
    let seq = seqAfter(text, CREATE_MARK);
    if (seq < 0) seq = seqAfter(text, UPDATE_MARK);
    if (seq < 0) {
      this.background++;
      return;
    }
    const probe = this.list[seq];
    if (probe === undefined) {
      this.unknown++;
      return;
    }
    if (probe.kind === 'c' ? this.watchOf[i] !== 0 : this.watchOf[i] !== probe.id) {
      probe.stray++;
      return;
    }
    if (probe.hits[i]++) {
      probe.duplicates++;
      return;
    }
    probe.count++;
    if (probe.count === 1) probe.firstAt = at;
    probe.lastAt = at;
    if (probe.count === probe.expected) probe.cpuAtLast = process.cpuUsage();
  }
}

/**
 * Connects the listeners: `subscribers` graphql-ws subscriptions, `perSocket` to a WebSocket, and
 * `sse` /v1/events consumers, spread round-robin over `urls` (socket k and SSE consumer k to
 * urls[k % urls.length]), `batch` connections at a time. Resolves when every socket has its
 * connection_ack and every SSE stream its first comment (the SSE subscription is registered
 * before that comment is written; a WebSocket subscription is not acknowledged by the protocol:
 * see confirm() in bench/event-worker.js).
 */
export async function connectListeners({ urls, token, subscribers, perSocket, sse, watched, probes, batch = 200, timeoutMs = 120_000 }) {
  const problems = { errors: 0, completed: 0, closedEarly: 0, samples: [] };
  let disposing = false;
  const note = (kind, detail) => {
    if (disposing) return;
    problems[kind]++;
    if (problems.samples.length < 5) problems.samples.push(`${kind}: ${detail}`.slice(0, 300));
  };
  const sockets = [];
  const streams = [];
  const deadline = Date.now() + timeoutMs;
  const init = JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } });
  const query = (i) => (i % 2 === 0 ? 'subscription { userCreated { id name } }' : `subscription { userUpdated(id: "${1 + ((i >> 1) % watched)}") { id bio } }`);

  const openSocket = (k, first, count) =>
    new Promise((resolve, reject) => {
      const url = `${urls[k % urls.length].replace(/^http/, 'ws')}/graphql`;
      // The credential also on the upgrade request (a Node client can set it; browsers cannot):
      // without it the upgrade is anonymous, and 11,000 of them from one address would meet the
      // anonymous request quota (600 a minute per address by default) long before the end.
      const ws = new WebSocket(url, 'graphql-transport-ws', { perMessageDeflate: false, headers: { authorization: `Bearer ${token}` } });
      sockets.push(ws);
      let acked = false;
      ws.on('open', () => ws.send(init));
      ws.on('message', (data) => {
        if (acked && data.indexOf(NEXT) >= 0) {
          // {"id":"<n>","type":"next",...}: the subscription's position on this socket.
          let slot = 0;
          if (count > 1) for (let p = 7; data[p] !== 34; p++) slot = slot * 10 + data[p] - 48;
          probes.deliver(first + slot, data, wallNow());
          return;
        }
        let message;
        try {
          message = JSON.parse(data.toString('utf8'));
        } catch {
          note('errors', `socket ${k}: unparsable message`);
          return;
        }
        if (message.type === 'connection_ack' && !acked) {
          acked = true;
          for (let s = 0; s < count; s++) ws.send(JSON.stringify({ id: String(s), type: 'subscribe', payload: { query: query(first + s) } }));
          resolve();
        } else if (message.type === 'ping') ws.send('{"type":"pong"}');
        else if (message.type === 'error') note('errors', `listener ${first + Number(message.id)}: ${JSON.stringify(message.payload)}`);
        else if (message.type === 'complete') note('completed', `listener ${first + Number(message.id)}`);
        else if (message.type === 'next') note('errors', `socket ${k}: next before connection_ack`);
      });
      ws.on('error', (error) => (acked ? note('errors', `socket ${k}: ${error.message}`) : reject(new Error(`socket ${k}: ${error.message}`))));
      ws.on('close', (code, reason) => {
        if (!acked) reject(new Error(`socket ${k} closed before connection_ack (${code} ${reason})`));
        else note('closedEarly', `socket ${k}: ${code} ${reason}`);
      });
    });

  const openStream = (k) =>
    new Promise((resolve, reject) => {
      const i = subscribers + k;
      const { hostname, port } = new URL(urls[k % urls.length]);
      const req = httpRequest(
        { hostname, port, path: '/v1/events?types=user.created', agent: false, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } },
        (res) => {
          if (res.statusCode !== 200) {
            reject(new Error(`SSE consumer ${k}: GET /v1/events -> ${res.statusCode}`));
            res.resume();
            return;
          }
          res.setEncoding('utf8');
          let carry = '';
          let open = false;
          res.on('data', (chunk) => {
            const at = wallNow();
            if (!open) {
              open = true;
              resolve();
            }
            carry += chunk;
            let end;
            while ((end = carry.indexOf('\n\n')) >= 0) {
              const frame = carry.slice(0, end);
              carry = carry.slice(end + 2);
              if (frame.startsWith('id:')) probes.deliver(i, frame, at);
            }
          });
          res.on('close', () => note('closedEarly', `SSE consumer ${k}`));
        },
      );
      streams.push(req);
      req.on('error', (error) => {
        reject(new Error(`SSE consumer ${k}: ${error.message}`)); // nothing once connected
        note('errors', `SSE consumer ${k}: ${error.message}`);
      });
      req.end();
    });

  const jobs = [];
  for (let first = 0, k = 0; first < subscribers; first += perSocket, k++) {
    const count = Math.min(perSocket, subscribers - first);
    jobs.push(() => openSocket(k, first, count));
  }
  for (let k = 0; k < sse; k++) jobs.push(() => openStream(k));
  for (let start = 0; start < jobs.length; start += batch) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`listeners not connected within ${timeoutMs} ms (${start} of ${jobs.length} connections up)`)), Math.max(0, deadline - Date.now()));
    });
    try {
      await Promise.race([Promise.all(jobs.slice(start, start + batch).map((job) => job())), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
  return {
    problems,
    sockets: sockets.length,
    /** Stops reading every `every`-th WebSocket (its TCP socket paused: the server's writes to it wait); returns how many. */
    pauseSockets(every) {
      let count = 0;
      for (let k = 0; k < sockets.length; k += every, count++) sockets[k]._socket.pause();
      return count;
    },
    /** Reads every WebSocket again. */
    resumeSockets() {
      for (const ws of sockets) ws._socket.resume();
    },
    /** Closes every connection. */
    dispose() {
      disposing = true;
      for (const ws of sockets) ws.terminate();
      for (const req of streams) req.destroy();
    },
  };
}
