import { createRequire } from 'node:module';
import type { FormattedExecutionResult, GraphQLFormattedError } from 'graphql';
import { createClient as createWsClient } from 'graphql-ws';
import { createClient as createSseClient } from 'graphql-sse';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { RestgraphOptions } from '../../src/index.js';
import { ADMIN, listenApp, send, tempDatabase, waitUntil, type ListeningApp, type Row } from './event-stream.js';

/**
 * Real GraphQL subscription clients for the tests: graphql-ws (graphql-transport-ws over a `ws`
 * WebSocket) and graphql-sse (over fetch), both behind one small interface, and a recorder that
 * keeps everything a subscription received (results, completion, error) for exact assertions;
 * then a graphql-transport-ws subscriber spoken by hand, whose socket a test can stop reading.
 */

/** The parts of a `ws` client WebSocket the tests use (the `ws` package ships no types). */
export interface RawWebSocket {
  readonly readyState: number;
  readonly protocol: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  /**
   * The TCP socket under the WebSocket: pausing it stops reading, so backpressure reaches the
   * server (the WebSocket's own pause() only stops events; ws goes on reading into memory).
   */
  readonly _socket: { pause(): void; resume(): void };
  on(event: 'open', listener: () => void): this;
  on(event: 'message', listener: (data: Buffer) => void): this;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'unexpected-response', listener: (request: unknown, response: { statusCode?: number }) => void): this;
}

export type RawWebSocketClass = new (url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) => RawWebSocket;

const require = createRequire(import.meta.url);
/** The `ws` package's WebSocket client class, as graphql-ws's `webSocketImpl`. */
export const WebSocketImpl = require('ws') as RawWebSocketClass;

/** A `ws` WebSocket class that sends these headers with the upgrade request. */
export function webSocketWithHeaders(headers: Record<string, string>): RawWebSocketClass {
  return class WebSocketWithHeaders extends WebSocketImpl {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  };
}

/** A close of a WebSocket as graphql-ws reports it (a CloseEvent). */
export interface CloseLike {
  code: number;
  reason: string;
}

export function isCloseLike(value: unknown): value is CloseLike {
  return typeof value === 'object' && value !== null && 'code' in value && typeof value.code === 'number' && 'reason' in value;
}

/** Everything one operation received: its results in order, then completion or an error. */
export class Recorder<D = Record<string, unknown>> {
  readonly results: FormattedExecutionResult<D>[] = [];
  completed = false;
  errored = false;
  /** What the sink's error() got: formatted GraphQL errors, a CloseEvent, or an Error. */
  error: unknown = undefined;
  /** Stops the operation from the client side. */
  unsubscribe: () => void = () => undefined;
  readonly #what: string;

  constructor(what: string) {
    this.#what = what;
  }

  readonly sink = {
    next: (value: FormattedExecutionResult<D>): void => {
      this.results.push(value);
    },
    error: (error: unknown): void => {
      this.errored = true;
      this.error = error;
    },
    complete: (): void => {
      this.completed = true;
    },
  };

  get ended(): boolean {
    return this.completed || this.errored;
  }

  /** The data of every result, failing when a result carried errors. */
  get data(): D[] {
    return this.results.map((result) => {
      if (result.errors !== undefined || result.data === undefined || result.data === null) throw new Error(`${this.#what}: a result with errors: ${JSON.stringify(result)}`);
      return result.data;
    });
  }

  /** Waits until at least `count` results arrived; fails if the operation ends first. */
  async waitForResults(count: number, timeoutMs?: number): Promise<FormattedExecutionResult<D>[]> {
    await waitUntil(
      () => {
        if (this.results.length >= count) return true;
        if (this.ended) throw new Error(`${this.#what} ended after ${this.results.length} of ${count} results: ${this.describe()}`);
        return false;
      },
      `${count} results of ${this.#what} (have ${this.results.length})`,
      timeoutMs,
    );
    return this.results;
  }

  /** Waits until a result satisfies `match`; fails if the operation ends first. */
  async waitFor(match: (result: FormattedExecutionResult<D>) => boolean, what: string, timeoutMs?: number): Promise<void> {
    await waitUntil(
      () => {
        if (this.results.some(match)) return true;
        if (this.ended) throw new Error(`${this.#what} ended before ${what}: ${this.describe()}`);
        return false;
      },
      `${what} on ${this.#what}: ${this.describe()}`,
      timeoutMs,
    );
  }

  /** Waits until the operation completed or failed. */
  async waitForEnd(timeoutMs?: number): Promise<this> {
    await waitUntil(() => this.ended, `the end of ${this.#what}: ${this.describe()}`, timeoutMs);
    return this;
  }

  describe(): string {
    const error = isCloseLike(this.error) ? `close ${this.error.code} ${this.error.reason}` : this.error instanceof Error ? this.error.message : JSON.stringify(this.error);
    return `${this.results.length} results ${JSON.stringify(this.results).slice(0, 1500)}, completed ${this.completed}, error ${error}`;
  }
}

export type TransportName = 'graphql-ws' | 'graphql-sse';

/** A GraphQL client on one transport, with one principal. */
export interface SubscriptionClient {
  readonly transport: TransportName;
  /** Starts an operation (subscription, query or mutation) and records what it receives. */
  run<D = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Recorder<D>;
  /** Closes the client (and its connections). */
  dispose(): Promise<void>;
}

export interface WsClientOptions {
  /** `Authorization` in connection_init's payload. */
  connectionParams?: Record<string, unknown>;
  /** Headers of the upgrade request. */
  headers?: Record<string, string>;
  /** Closes seen by the client, in order. */
  closes?: CloseLike[];
  /** Keep one connection open from the start (graphql-ws `lazy: false`). @default true */
  lazy?: boolean;
}

/** A graphql-ws client on `ws://…/graphql` that never retries (a close is what the test sees). */
export function wsClient(base: string, options: WsClientOptions = {}): SubscriptionClient {
  const client = createWsClient({
    url: `${base.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: options.headers === undefined ? WebSocketImpl : webSocketWithHeaders(options.headers),
    retryAttempts: 0,
    lazy: options.lazy ?? true,
    ...(options.connectionParams === undefined ? {} : { connectionParams: options.connectionParams }),
    // Without a listener graphql-ws logs connection errors of non-lazy clients to the console.
    onNonLazyError: () => undefined,
    on: {
      closed: (event) => {
        if (isCloseLike(event)) options.closes?.push({ code: event.code, reason: event.reason });
      },
    },
  });
  return {
    transport: 'graphql-ws',
    run<D>(query: string, variables?: Record<string, unknown>): Recorder<D> {
      const recorder = new Recorder<D>(`graphql-ws ${query.slice(0, 80)}`);
      recorder.unsubscribe = client.subscribe<D>({ query, ...(variables === undefined ? {} : { variables }) }, recorder.sink);
      return recorder;
    },
    dispose: async () => {
      await client.dispose();
    },
  };
}

export interface SseClientOptions {
  headers?: Record<string, string>;
  /** graphql-sse's single connection mode (one event stream, operations POSTed with its token). */
  singleConnection?: boolean;
}

/** A graphql-sse client on `http://…/graphql/stream` that never retries. */
export function sseClient(base: string, options: SseClientOptions = {}): SubscriptionClient {
  const client = createSseClient({
    url: `${base}/graphql/stream`,
    headers: options.headers ?? {},
    retryAttempts: 0,
    singleConnection: options.singleConnection ?? false,
    onNonLazyError: () => undefined,
  });
  return {
    transport: 'graphql-sse',
    run<D>(query: string, variables?: Record<string, unknown>): Recorder<D> {
      const recorder = new Recorder<D>(`graphql-sse ${query.slice(0, 80)}`);
      recorder.unsubscribe = client.subscribe<D>({ query, ...(variables === undefined ? {} : { variables }) }, recorder.sink as never);
      return recorder;
    },
    dispose: () => {
      client.dispose();
      return Promise.resolve();
    },
  };
}

/**
 * The errors of an operation the server refused or failed as a whole, as each transport delivers
 * them: graphql-ws sends an `error` message (the sink's error() gets the list); graphql-sse and
 * execution errors (a refused subscribe) come as one result with `errors` and no data (or data
 * null), then completion.
 */
export function refusalOf<D>(recorder: Recorder<D>): readonly GraphQLFormattedError[] {
  if (recorder.errored) {
    if (!Array.isArray(recorder.error)) throw new Error(`expected GraphQL errors, got ${recorder.describe()}`);
    if (recorder.results.length > 0) throw new Error(`results before the error: ${recorder.describe()}`);
    return recorder.error as GraphQLFormattedError[];
  }
  if (!recorder.completed || recorder.results.length !== 1) throw new Error(`expected one result and completion, got ${recorder.describe()}`);
  const [result] = recorder.results;
  // No data at all (a request error), or data null (the only ExecutionResult graphql-sse's
  // onSubscribe recognises).
  if (result?.errors === undefined || (result.data !== undefined && result.data !== null)) throw new Error(`expected a result with errors and no data, got ${recorder.describe()}`);
  return result.errors;
}

/** The `extensions.code` of each error. */
export const codes = (errors: readonly GraphQLFormattedError[]): unknown[] => errors.map((e) => e.extensions?.code);

export function must<T>(value: T | undefined | null, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`missing ${what}`);
  return value;
}

/** 30 aliases of a post's body: a big message per event, for the backpressure tests. */
export const BODY_ALIASES = Array.from({ length: 30 }, (_, i) => `b${i}: body`).join(' ');

/** A graphql-transport-ws message as the raw subscriber receives it. */
export interface RawMessage {
  id?: string;
  type: string;
  payload?: { data?: { postCreated: { id: string } } | null; errors?: GraphQLFormattedError[] };
}

/** One subscription on a WebSocket spoken by hand, whose TCP socket the test can stop reading. */
export interface RawSubscriber {
  /** The messages of the subscription (id "slow"), in order. */
  readonly messages: RawMessage[];
  /** The payloads of its `next` messages. */
  results(): NonNullable<RawMessage['payload']>[];
  pause(): void;
  resume(): void;
  close(): void;
}

/** Connects as admin, subscribes with `query` and waits until the server runs the subscription. */
export async function rawSubscriber(server: ListeningApp, query: string): Promise<RawSubscriber> {
  const raw = new WebSocketImpl(`${server.base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { headers: { authorization: ADMIN } });
  const all: RawMessage[] = [];
  raw.on('message', (data) => all.push(JSON.parse(data.toString('utf8')) as RawMessage));
  await new Promise<void>((resolve, reject) => {
    raw.on('open', resolve);
    raw.on('error', reject);
  });
  raw.send(JSON.stringify({ type: 'connection_init' }));
  await waitUntil(() => all.some((m) => m.type === 'connection_ack'), 'connection_ack');
  const before = server.app.restgraph.events.subscriberCount;
  raw.send(JSON.stringify({ id: 'slow', type: 'subscribe', payload: { query } }));
  await waitUntil(() => server.app.restgraph.events.subscriberCount === before + 1, 'the raw subscription to start');
  const mine = (): RawMessage[] => all.filter((m) => m.id === 'slow');
  return {
    get messages() {
      return mine();
    },
    results: () => mine().flatMap((m) => (m.type === 'next' && m.payload !== undefined ? [m.payload] : [])),
    // The TCP socket itself: ws's own pause() only stops events and goes on reading into memory.
    pause: () => raw._socket.pause(),
    resume: () => raw._socket.resume(),
    close: () => raw.terminate(),
  };
}

/**
 * Waits until the server runs no subscription of the test: the dispatcher feeds `baseline`
 * consumers (those the test did not start) and no subscription group is left. (A group whose
 * members are all gone but which still listens counts no subscriber: it is seen by the groups.)
 */
export async function subscriptionsEnded(server: ListeningApp, baseline = 0): Promise<void> {
  const subscribers = (): number => server.app.restgraph.events.subscriberCount - baseline;
  const groups = (): number => server.app.restgraph.graphql.subscriptions.size;
  await waitUntil(() => subscribers() === 0 && groups() === 0, `every subscription of the test to end on the server (${subscribers()} subscribers, ${groups()} groups left)`);
}

/** Creates `count` posts of `author` with a 4000-character body (in process); returns their ids. */
export async function writePosts(server: ListeningApp, author: Row, count: number, prefix: string): Promise<string[]> {
  const body = 'x'.repeat(4000);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await server.app.inject({ method: 'POST', url: '/posts', payload: { title: `${prefix} ${i}`, userId: author.id, body } });
    if (response.statusCode !== 201) throw new Error(`write ${i} answered ${response.statusCode}: ${response.body}`);
    ids.push(String((JSON.parse(response.body) as Row).id));
  }
  return ids;
}

/**
 * A raw subscriber of posts with 30 body aliases (~120 kB an event), its socket paused, beside a
 * healthy graphql-ws subscriber of their ids; resolves once both run (`before`: the subscriber
 * count before the healthy one started). The caller closes `slow` and disposes `healthy`.
 */
export async function pausedBesideHealthy(server: ListeningApp) {
  const active = (): number => server.app.restgraph.events.subscriberCount;
  const slow = await rawSubscriber(server, `subscription { postCreated { id ${BODY_ALIASES} } }`);
  const healthy = wsClient(server.base, { connectionParams: { Authorization: ADMIN } });
  try {
    const before = active();
    const onHealthy = healthy.run<{ postCreated: { id: string } }>('subscription { postCreated { id } }');
    await waitUntil(() => active() === before + 1, 'the healthy subscription to start');
    slow.pause();
    return { slow, healthy, onHealthy, before };
  } catch (error) {
    slow.close();
    await healthy.dispose();
    throw error;
  }
}

/**
 * A server whose subscribers are ended once more than `maxLag` events behind and taking nothing
 * for `maxPausedMs` (default: the server's, 10 s), with one author to
 * write posts as, for the files of one describe each (beforeAll/afterEach/afterAll registered here):
 * every subscription of a test must have ended on the server after it.
 */
export function laggingServer(
  maxLag: number,
  maxPausedMs?: number,
  maxLagReading?: number,
  events: NonNullable<RestgraphOptions['events']> = {},
): { readonly server: ListeningApp; readonly author: Row } {
  const state: { server?: ListeningApp; author?: Row; db?: Awaited<ReturnType<typeof tempDatabase>> } = {};
  beforeAll(async () => {
    state.db = await tempDatabase();
    state.server = await listenApp(state.db.url, { events: { ...events, maxLag, ...(maxPausedMs === undefined ? {} : { maxPausedMs }), ...(maxLagReading === undefined ? {} : { maxLagReading }) } });
    state.author = (await send(state.server.base, 'POST', '/users', { name: 'lagging' })).json();
  });
  afterEach(async () => {
    const server = must(state.server, 'server');
    await subscriptionsEnded(server);
  });
  afterAll(async () => {
    await state.server?.close();
    await state.db?.cleanup();
  });
  return {
    get server() {
      return must(state.server, 'server');
    },
    get author() {
      return must(state.author, 'author');
    },
  };
}
