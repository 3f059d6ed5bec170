import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterEach } from 'vitest';
import type { RestgraphOptions } from '../../src/app/app-options.js';
import { json, startTestApp, type TestApp } from './test-app.js';

/**
 * Tools for the webhook tests: a real receiver (node:http on 127.0.0.1) that records every request
 * it gets, answers as each test scripts it and checks every signature with the `standardwebhooks`
 * library at receipt; the webhook API over inject; and condition waits (never timed assertions).
 */

/** A delivery body (README: webhooks). */
export interface DeliveryBody {
  type: string;
  timestamp: string;
  data: { object: Record<string, unknown> & { id: number }; previous?: Record<string, unknown> };
}

/** One request the receiver got. */
export interface ReceivedRequest {
  /** Its place among every request this receiver got, from 0. */
  index: number;
  method: string;
  path: string;
  /** Header names in lower case, values as sent. */
  headers: Record<string, string>;
  /** The raw body, exactly as received. */
  body: string;
  /** Receiver's clock (ms) when the whole body had arrived. */
  receivedAt: number;
  /** Receiver's clock (ms) when the connection of this request closed, or the response finished. */
  closedAt?: number;
  /** The status the receiver answered, once it has. */
  answered?: number;
  /** The secret the signature was checked with, and the outcome (standardwebhooks' verify). */
  checkedWith?: string;
  verified?: DeliveryBody;
  verifyError?: string;
}

/** How the receiver answers one request: `attempt` counts the requests to that path, from 1. */
export type Responder = (res: ServerResponse, attempt: number, request: ReceivedRequest) => void;

/** Answers `status` with a short body and `headers`. */
export function answer(status: number, headers: Record<string, string> = {}): Responder {
  return (res) => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(`answer ${status}`);
  };
}

/** Never answers: the request stays open until the client gives up (or the receiver closes). */
export const hang: Responder = () => undefined;

/** Answers with `first(attempt)` for the first `count` requests, then with `then`. */
export function failing(count: number, first: Responder, then: Responder = answer(200)): Responder {
  return (res, attempt, request) => (attempt <= count ? first(res, attempt, request) : then(res, attempt, request));
}

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  readonly #server: Server;
  readonly #responders = new Map<string, Responder>();
  readonly #secrets = new Map<string, string>();
  readonly #counts = new Map<string, number>();
  readonly #inFlight = new Map<string, number>();
  /** The most requests to one path that were ever open at the same time. */
  readonly maxInFlight = new Map<string, number>();

  private constructor(server: Server) {
    this.#server = server;
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.#handle(req, res));
  }

  /** Listens on 127.0.0.1 (`port`, or any free one). */
  static async start(port = 0): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return new WebhookReceiver(server);
  }

  get port(): number {
    const address = this.#server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** How `path` answers from now on (default: 200). */
  respond(path: string, responder: Responder): void {
    this.#responders.set(path, responder);
    this.#counts.set(path, 0);
  }

  /** The secret the signatures of requests to `path` are checked with from now on. */
  verifyWith(path: string, secret: string): void {
    this.#secrets.set(path, secret);
  }

  /** The requests to `path`, in arrival order. */
  to(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Waits until `condition` holds (checked every 20 ms); fails after `timeoutMs` saying what it waited for. */
  async waitFor(condition: (receiver: this) => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    await waitUntil(() => condition(this), () => `${what} (received: ${JSON.stringify(this.requests.map((r) => `${r.path} ${r.headers['webhook-id'] ?? ''} → ${r.answered ?? '…'}`))})`, timeoutMs);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      const path = (req.url ?? '').split('?')[0] ?? '';
      const request: ReceivedRequest = { index: this.requests.length, method: req.method ?? '', path, headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() };
      const secret = this.#secrets.get(path);
      if (secret !== undefined) {
        request.checkedWith = secret;
        try {
          request.verified = new Webhook(secret).verify(request.body, headers) as DeliveryBody;
        } catch (error) {
          request.verifyError = error instanceof Error ? error.message : String(error);
        }
      }
      this.requests.push(request);
      const open = (this.#inFlight.get(path) ?? 0) + 1;
      this.#inFlight.set(path, open);
      this.maxInFlight.set(path, Math.max(open, this.maxInFlight.get(path) ?? 0));
      let ended = false;
      const end = (): void => {
        request.closedAt ??= Date.now();
        if (ended) return;
        ended = true;
        this.#inFlight.set(path, (this.#inFlight.get(path) ?? 1) - 1);
      };
      res.on('close', end);
      res.on('finish', () => {
        request.answered = res.statusCode;
        end();
      });
      const attempt = (this.#counts.get(path) ?? 0) + 1;
      this.#counts.set(path, attempt);
      (this.#responders.get(path) ?? answer(200))(res, attempt, request);
    });
  }
}

/**
 * For a test file whose tests run one after another: receivers and apps started through it are
 * closed when each test ends.
 */
export function closedAfterEachTest(): { receiver: () => Promise<WebhookReceiver>; app: (options?: RestgraphOptions) => Promise<TestApp> } {
  let receivers: WebhookReceiver[] = [];
  let apps: TestApp[] = [];
  afterEach(async () => {
    for (const receiver of receivers) await receiver.close();
    for (const t of apps) await t.close();
    receivers = [];
    apps = [];
  });
  return {
    receiver: async () => {
      const receiver = await WebhookReceiver.start();
      receivers.push(receiver);
      return receiver;
    },
    app: async (options) => {
      const t = await startTestApp(options);
      apps.push(t);
      return t;
    },
  };
}

/** The payload of a request whose signature verified; fails the test naming the problem otherwise. */
export function signed(request: ReceivedRequest): DeliveryBody {
  if (request.verified === undefined) throw new Error(`request ${request.index} to ${request.path} did not verify: ${request.verifyError ?? 'no secret to check it with'}`);
  return request.verified;
}

/** The delivery id in a `webhook-id` header (`msg_<id>`). */
export function deliveryIdOf(request: ReceivedRequest): number {
  const match = /^msg_(\d+)$/.exec(request.headers['webhook-id'] ?? '');
  if (match?.[1] === undefined) throw new Error(`webhook-id "${request.headers['webhook-id'] ?? ''}" is not msg_<delivery id>`);
  return Number(match[1]);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every 20 ms until it is true; fails after `timeoutMs` naming what it waited for. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string | (() => string), timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(20);
  }
}

// ------------------------------------------------------------------ the webhooks API

/** An endpoint as /v1/webhooks shows it (`secret` only on create and rotate-secret). */
export interface WebhookBody {
  id: number;
  url: string;
  events: string[];
  description: string | null;
  status: 'active' | 'paused' | 'disabled';
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
  secret?: string;
}

/** A delivery as /v1/webhooks/{id}/deliveries shows it. */
export interface DeliveryView {
  id: number;
  webhookId: number;
  eventId: number;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  nextAttemptAt: string;
  lastAttemptAt: string | null;
  responseStatus: number | null;
  lastError: string | null;
  createdAt: string;
  attemptLog: { id: number; attemptedAt: string; durationMs: number; responseStatus: number | null; error: string | null }[];
}

/** Registers a webhook (as admin) and returns it with its secret; fails unless 201. */
export async function createWebhook(app: FastifyInstance, body: Record<string, unknown>): Promise<WebhookBody & { secret: string }> {
  const response = await app.inject({ method: 'POST', url: '/v1/webhooks', payload: body });
  if (response.statusCode !== 201) throw new Error(`POST /v1/webhooks → ${response.statusCode} ${response.body}`);
  const created = json<WebhookBody>(response);
  if (created.secret === undefined) throw new Error('POST /v1/webhooks returned no secret');
  return { ...created, secret: created.secret };
}

export async function getWebhook(app: FastifyInstance, id: number): Promise<WebhookBody> {
  const response = await app.inject({ method: 'GET', url: `/v1/webhooks/${id}` });
  if (response.statusCode !== 200) throw new Error(`GET /v1/webhooks/${id} → ${response.statusCode} ${response.body}`);
  return json<WebhookBody>(response);
}

/** The deliveries of a webhook, newest first. */
export async function deliveriesOf(app: FastifyInstance, id: number): Promise<DeliveryView[]> {
  const response = await app.inject({ method: 'GET', url: `/v1/webhooks/${id}/deliveries` });
  if (response.statusCode !== 200) throw new Error(`GET /v1/webhooks/${id}/deliveries → ${response.statusCode} ${response.body}`);
  return json<DeliveryView[]>(response);
}

/** Waits until the webhook's deliveries satisfy `condition`; resolves to them. */
export async function waitForDeliveries(app: FastifyInstance, id: number, condition: (deliveries: DeliveryView[]) => boolean, what: string, timeoutMs = 15_000): Promise<DeliveryView[]> {
  let last: DeliveryView[] = [];
  await waitUntil(
    async () => condition((last = await deliveriesOf(app, id))),
    () => `${what} (last seen: ${JSON.stringify(last.map((d) => ({ id: d.id, status: d.status, attempts: d.attempts, log: d.attemptLog.map((a) => a.responseStatus ?? a.error) })))})`,
    timeoutMs,
  );
  return last;
}
