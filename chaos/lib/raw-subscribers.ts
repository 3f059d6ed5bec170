import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { RawWebSocket, RawWebSocketClass } from '../../test/helpers/subscription-clients.js';
import { exchange } from './http-exchange.js';
import { CHAOS_ADMIN_TOKEN, type ServedApp } from './served-app.js';

const require = createRequire(import.meta.url);
const WebSocketImpl = require('ws') as RawWebSocketClass;

/** A graphql-transport-ws connection spoken by hand, whose TCP socket can stop reading. */
export interface RawConnection {
  /** Messages of type next received, by subscription id. */
  readonly nexts: Map<string, number>;
  /** Subscription ids that got a slow-consumer error. */
  readonly slowConsumers: Set<string>;
  subscribe(id: string, query: string): void;
  /** Stops reading (the server's writes to it then wait, as for a client on a slow network). */
  pause(): void;
  resume(): void;
  terminate(): void;
}

/** Opens a connection as admin and waits for connection_ack. */
export async function rawConnection(app: ServedApp): Promise<RawConnection> {
  const ws: RawWebSocket = new WebSocketImpl(`${app.base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { headers: { authorization: `Bearer ${CHAOS_ADMIN_TOKEN}` } });
  const nexts = new Map<string, number>();
  const slowConsumers = new Set<string>();
  let acked: () => void = () => undefined;
  const ack = new Promise<void>((resolve) => (acked = resolve));
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString('utf8')) as { id?: string; type: string; payload?: { errors?: { extensions?: { code?: string } }[] } };
    if (message.type === 'connection_ack') acked();
    else if (message.type === 'next' && message.id !== undefined) {
      nexts.set(message.id, (nexts.get(message.id) ?? 0) + 1);
      if (message.payload?.errors?.some((e) => e.extensions?.code === 'slow-consumer') === true) slowConsumers.add(message.id);
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.on('open', resolve);
    ws.on('error', reject);
  });
  ws.send(JSON.stringify({ type: 'connection_init' }));
  await withTimeout(ack, 10_000, 'connection_ack');
  return {
    nexts,
    slowConsumers,
    subscribe: (id, query) => ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query } })),
    pause: () => ws._socket.pause(),
    resume: () => ws._socket.resume(),
    terminate: () => ws.terminate(),
  };
}

/** A gauge of the server's /metrics (without labels). */
export async function gauge(app: ServedApp, name: string): Promise<number> {
  const response = await exchange(app.base, { method: 'GET', path: '/metrics', headers: { authorization: `Bearer ${CHAOS_ADMIN_TOKEN}` } });
  const line = response.body.split('\n').find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`/metrics has no ${name}`);
  return Number(line.slice(name.length + 1));
}

/** Polls `probe` every 100 ms until it holds; false after `ms`. */
export async function eventually(probe: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Has a server started with `--inspect=127.0.0.1:<port>` collect all its garbage now (the
 * inspector's HeapProfiler.collectGarbage: a full collection, as the heap profilers take before a
 * snapshot), so that what it holds can be measured without waiting for the collector's own time.
 */
export async function collectGarbage(inspectorPort: number): Promise<void> {
  const response = await exchange(`http://127.0.0.1:${inspectorPort}`, { method: 'GET', path: '/json/list' });
  const [target] = JSON.parse(response.body) as { webSocketDebuggerUrl: string }[];
  if (target === undefined) throw new Error('the inspector lists no target');
  const ws: RawWebSocket = new WebSocketImpl(target.webSocketDebuggerUrl);
  try {
    await new Promise<void>((resolve, reject) => {
      ws.on('open', resolve);
      ws.on('error', reject);
    });
    const done = new Promise<void>((resolve) => ws.on('message', (data) => (JSON.parse(data.toString('utf8')) as { id?: number }).id === 1 && resolve()));
    ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    await withTimeout(done, 30_000, 'garbage collection');
  } finally {
    ws.close();
  }
}

/** Resident memory of a process (VmRSS, bytes). */
export function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
