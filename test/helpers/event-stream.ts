import { request as httpRequest, type IncomingMessage } from 'node:http';
import { EventSource } from 'eventsource';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app/build-app.js';
import type { RestgraphOptions } from '../../src/app/app-options.js';
import { actAsAdmin, captureLogs, TEST_ADMIN_TOKEN, tempDir } from './test-app.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

/**
 * Tools for the event-stream tests: an app listening on a real socket (restartable on the same
 * SQLite file and port), a raw Server-Sent Events reader over node:http that keeps every byte and
 * frame, and condition waits (never timed assertions).
 */

export type Row = Record<string, unknown> & { id: number };

/** The JSON of an event's `data:` line (docs: the event stream wire format). */
export interface EventBody {
  id: string;
  type: string;
  timestamp: string;
  data: { object: Row; previous?: Record<string, unknown> };
}

/** One SSE event as the stream sent it. */
export interface StreamEvent {
  /** The `id:` field, as a number. */
  id: number;
  /** The `event:` field. */
  type: string;
  body: EventBody;
  /** The frame exactly as sent (lines and the blank line ending it). */
  text: string;
}

export interface ListeningApp {
  app: FastifyInstance;
  port: number;
  /** `http://127.0.0.1:<port>` */
  base: string;
  databaseUrl: string;
  logs: Record<string, unknown>[];
  close: () => Promise<void>;
}

/** A new database of the suite's kind and a temp folder, for apps restarted on the same database. */
export async function tempDatabase(): Promise<{ url: string; db: TestDatabase; dir: string; cleanup: () => Promise<void> }> {
  const dir = tempDir('restgraph-events-');
  const db = await createTestDatabase(dir.path, 'events');
  return {
    url: db.url,
    db,
    dir: dir.path,
    cleanup: async () => {
      await db.drop();
      dir.cleanup();
    },
  };
}

/**
 * Builds the app on the database `databaseUrl` names (admin token TEST_ADMIN_TOKEN, inject acts as admin) and listens on
 * 127.0.0.1 (`port`, or any free one).
 */
export async function listenApp(databaseUrl: string, options: RestgraphOptions = {}, port = 0): Promise<ListeningApp> {
  const { logs, logDestination } = captureLogs();
  const app = actAsAdmin(await buildApp({ databaseUrl, logDestination, adminToken: TEST_ADMIN_TOKEN, ...options }));
  await app.listen({ port, host: '127.0.0.1' });
  const address = app.server.address();
  const actual = typeof address === 'object' && address !== null ? address.port : 0;
  return { app, port: actual, base: `http://127.0.0.1:${actual}`, databaseUrl, logs, close: () => app.close() };
}

export const ADMIN = `Bearer ${TEST_ADMIN_TOKEN}`;

/** A response read whole; `json` parses its body, its type argument stating what the test expects. */
export interface SentResponse {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- a typed parse at the test edge
  json: <T = Row>() => T;
}

/** fetch as admin unless the request names its own authorization ('' sends none). */
export async function send(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<SentResponse> {
  const all = new Headers(headers);
  if (!all.has('authorization')) all.set('authorization', ADMIN);
  else if (all.get('authorization') === '') all.delete('authorization');
  if (body !== undefined) all.set('content-type', 'application/json');
  const response = await fetch(`${base}${path}`, { method, headers: all, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) as never };
}

/** Waits until `check` returns a value other than undefined/false, polling; fails after `timeoutMs`. */
export async function waitUntil<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A raw SSE reader on node:http: keeps the whole text, the comments, the retry field and every event,
 * parsed strictly (each event frame must be exactly `id`, `event`, `data`).
 */
export class SseReader {
  readonly response: IncomingMessage;
  text = '';
  readonly comments: string[] = [];
  readonly events: StreamEvent[] = [];
  retry: number | undefined;
  /** Frames that were neither comments, a retry field nor well-formed events. */
  readonly malformed: string[] = [];
  /** Resolves when the response ends or its connection closes. */
  readonly ended: Promise<void>;
  #ended = false;
  #pending = '';
  readonly #listeners = new Set<() => void>();

  private constructor(response: IncomingMessage) {
    this.response = response;
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      this.text += chunk;
      this.#pending += chunk;
      let at: number;
      while ((at = this.#pending.indexOf('\n\n')) >= 0) {
        this.#frame(this.#pending.slice(0, at + 2));
        this.#pending = this.#pending.slice(at + 2);
      }
      this.#changed();
    });
    this.ended = new Promise((resolve) => {
      const done = (): void => {
        this.#ended = true;
        this.#changed();
        resolve();
      };
      response.once('end', done);
      response.once('close', done);
      response.once('error', done);
    });
  }

  /**
   * Opens GET `url` (admin unless `authorization` is given; '' sends none) and resolves once the
   * response head arrived. A non-200 response is read to its end.
   */
  static async open(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const all: Record<string, string> = { accept: 'text/event-stream', ...headers };
    if (all.authorization === undefined) all.authorization = ADMIN;
    if (all.authorization === '') delete all.authorization;
    return new Promise((resolve, reject) => {
      const request = httpRequest(url, { headers: all, agent: false }, (response) => resolve(new SseReader(response)));
      request.once('error', reject);
      request.end();
    });
  }

  get status(): number {
    return this.response.statusCode ?? 0;
  }

  get isEnded(): boolean {
    return this.#ended;
  }

  get ids(): number[] {
    return this.events.map((e) => e.id);
  }

  /** Waits until `check` holds on this reader; fails when the stream ends first or after `timeoutMs`. */
  async waitFor(check: (reader: SseReader) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    if (check(this)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#listeners.delete(listener);
        reject(new Error(`timed out waiting for ${what}; received:\n${this.text.slice(-2000)}`));
      }, timeoutMs);
      const listener = (): void => {
        if (check(this)) {
          clearTimeout(timer);
          this.#listeners.delete(listener);
          resolve();
        } else if (this.#ended) {
          clearTimeout(timer);
          this.#listeners.delete(listener);
          reject(new Error(`the stream ended before ${what}; received:\n${this.text.slice(-2000)}`));
        }
      };
      this.#listeners.add(listener);
      listener();
    });
  }

  /** Waits for the first event matching `match` and returns the events up to and including it. */
  async until(match: (event: StreamEvent) => boolean, what = 'the awaited event', timeoutMs = 20_000): Promise<StreamEvent[]> {
    await this.waitFor((r) => r.events.some(match), what, timeoutMs);
    return this.events.slice(0, this.events.findIndex(match) + 1);
  }

  /** Closes the connection from the client side. */
  close(): void {
    this.response.destroy();
  }

  #frame(frame: string): void {
    const fields: string[] = [];
    for (const line of frame.slice(0, -2).split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      else if (line.startsWith('retry: ')) this.retry = Number(line.slice('retry: '.length));
      else fields.push(line);
    }
    if (fields.length === 0) return;
    const [id, event, data, ...rest] = fields;
    if (id?.startsWith('id: ') !== true || event?.startsWith('event: ') !== true || data?.startsWith('data: ') !== true || rest.length > 0) {
      this.malformed.push(frame);
      return;
    }
    this.events.push({ id: Number(id.slice(4)), type: event.slice(7), body: JSON.parse(data.slice(6)) as EventBody, text: frame });
  }

  #changed(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}

/** The events stream URL of an app, with query parameters. */
export function eventsUrl(base: string, query: Record<string, string> = {}): string {
  const search = new URLSearchParams(query).toString();
  return `${base}/v1/events${search === '' ? '' : `?${search}`}`;
}

/**
 * Every stored event the admin can replay (Last-Event-ID: `after`), up to and including the first
 * that matches `last`.
 */
export async function replay(base: string, last: (event: StreamEvent) => boolean, after = 0, headers: Record<string, string> = {}): Promise<StreamEvent[]> {
  const reader = await SseReader.open(eventsUrl(base), { 'last-event-id': String(after), ...headers });
  try {
    if (reader.status !== 200) throw new Error(`GET /v1/events answered ${reader.status}`);
    return await reader.until(last, 'the last event of the replay');
  } finally {
    reader.close();
  }
}

/** Matches an event by type and object id. */
export const eventOf =
  (type: string, id: number) =>
  (event: StreamEvent): boolean =>
    event.type === type && event.body.data.object.id === id;

/** Every event type of the example schema. */
export const EXAMPLE_EVENT_TYPES = ['user', 'post', 'product', 'order'].flatMap((r) => [`${r}.created`, `${r}.updated`, `${r}.deleted`]);

/** One event as an EventSource client received it. */
export interface ReceivedEvent {
  /** MessageEvent.lastEventId, as a number. */
  id: number;
  type: string;
  body: EventBody;
  /** Which connection (1 = the first) delivered it. */
  connection: number;
}

/**
 * A WHATWG EventSource (the `eventsource` package) on the events stream, with the admin token (or
 * `authorization`) sent through its fetch. Records each connection attempt's Last-Event-ID header,
 * every event of `types`, opens and errors.
 */
export class EventSourceClient {
  readonly source: EventSource;
  readonly events: ReceivedEvent[] = [];
  /** The Last-Event-ID header of each connection attempt (null when none was sent). */
  readonly attempts: (string | null)[] = [];
  opens = 0;
  errors = 0;
  readonly #listeners = new Set<() => void>();

  constructor(url: string, options: { authorization?: string; lastEventId?: number; types?: readonly string[] } = {}) {
    const authorization = options.authorization ?? ADMIN;
    let first = true;
    this.source = new EventSource(url, {
      fetch: (input, init) => {
        const headers: Record<string, string> = { ...init.headers };
        // The first connection may resume from an id the test knows (as a page reload would).
        if (first && options.lastEventId !== undefined) headers['Last-Event-ID'] = String(options.lastEventId);
        first = false;
        this.attempts.push(headers['Last-Event-ID'] ?? null);
        if (authorization !== '') headers.Authorization = authorization;
        this.#changed();
        return fetch(input, { ...init, headers });
      },
    });
    this.source.addEventListener('open', () => {
      this.opens++;
      this.#changed();
    });
    this.source.addEventListener('error', () => {
      this.errors++;
      this.#changed();
    });
    for (const type of options.types ?? EXAMPLE_EVENT_TYPES) {
      this.source.addEventListener(type, (event: MessageEvent) => {
        this.events.push({ id: Number(event.lastEventId), type: event.type, body: JSON.parse(String(event.data)) as EventBody, connection: this.opens });
        this.#changed();
      });
    }
  }

  get ids(): number[] {
    return this.events.map((e) => e.id);
  }

  get lastId(): number {
    return this.events.at(-1)?.id ?? 0;
  }

  /** Waits until `check` holds; fails after `timeoutMs` (EventSource reconnects after `retry`, 3 s). */
  async waitFor(check: (client: EventSourceClient) => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    if (check(this)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#listeners.delete(listener);
        reject(new Error(`timed out waiting for ${what}; ${this.events.length} events, attempts ${JSON.stringify(this.attempts)}, opens ${this.opens}, errors ${this.errors}`));
      }, timeoutMs);
      const listener = (): void => {
        if (!check(this)) return;
        clearTimeout(timer);
        this.#listeners.delete(listener);
        resolve();
      };
      this.#listeners.add(listener);
    });
  }

  close(): void {
    this.source.close();
  }

  #changed(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}
