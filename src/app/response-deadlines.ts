import { ServerResponse, type IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { ServerTimeoutError } from '../errors.js';
import { sendProblem } from '../http/problem-details.js';

/**
 * The server's response object (http.createServer's `ServerResponse` option), linked into the
 * list of responses not yet begun while its request is being answered: the list costs a request
 * two field writes and no allocation. (A Map of open requests, an entry added and deleted for each
 * request, kept the garbage collector busy: docs/performance.md.)
 */
export class TimedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** The reply being made, while in the list. */
  timedReply: FastifyReply | undefined = undefined;
  /** When its time started (performance.now()). */
  timedSince = 0;
  /** Neighbours in the list (newer, older). */
  newerOpen: TimedResponse | undefined = undefined;
  olderOpen: TimedResponse | undefined = undefined;
}

/** Whether a response is the server's own (not app.inject()'s). */
function isTimed(response: ServerResponse): response is TimedResponse {
  return response instanceof TimedResponse;
}

/** A request being answered without a response of ours (app.inject()): its reply, and since when its time runs. */
interface Open {
  reply: FastifyReply;
  since: number;
}

/** Response headers a timed-out answer keeps; whatever else the handler had set is not its. */
const KEPT_HEADERS = /^(x-request-id|access-control-.*|vary|connection)$/;

/**
 * Bounds how long the server takes to answer: a request still unanswered `limitMs` after it was
 * received gets `timedOut(request, reply)` (which answers 503 `server-timeout`). Its handler may
 * still finish; what it sends then is ignored (Fastify, and ResponseBatches, send a reply once).
 *
 * One timer serves every request, sweeping the open ones a few times per limit (at most every
 * second), so a request may get its answer up to a quarter of the limit late. (Fastify's own
 * handlerTimeout arms a timer, an AbortController and a 'close' listener per request: a third of
 * a simple read's throughput.) The clock starts at the first hook, and starts again while the
 * request's body is still arriving (that is the request timeout's to bound). A response that has
 * started (a stream, an upgraded connection, a hijacked reply) is no longer limited.
 */
export class ResponseDeadlines {
  readonly #limitMs: number;
  readonly #timedOut: (request: FastifyRequest, reply: FastifyReply) => void;
  /** The newest open response of the server's own (the list goes on through olderOpen). */
  #newest: TimedResponse | undefined = undefined;
  /** Open requests answered through other responses (app.inject()). */
  readonly #injected = new Map<IncomingMessage, Open>();
  readonly #sweeper: NodeJS.Timeout | undefined;

  /** `limitMs` 0: no limit (nothing is tracked). */
  constructor(limitMs: number, timedOut: (request: FastifyRequest, reply: FastifyReply) => void) {
    this.#limitMs = limitMs;
    this.#timedOut = timedOut;
    if (limitMs > 0) {
      this.#sweeper = setInterval(() => this.sweep(performance.now()), Math.min(1000, Math.max(10, Math.floor(limitMs / 4))));
      this.#sweeper.unref();
    }
  }

  /** A request's first hook ran: its time starts. */
  begin(request: FastifyRequest, reply: FastifyReply): void {
    if (this.#limitMs === 0) return;
    const response = reply.raw;
    if (!isTimed(response)) {
      this.#injected.set(request.raw, { reply, since: performance.now() });
      return;
    }
    if (response.timedReply !== undefined) this.#unlink(response);
    response.timedReply = reply;
    response.timedSince = performance.now();
    response.olderOpen = this.#newest;
    if (this.#newest !== undefined) this.#newest.newerOpen = response;
    this.#newest = response;
  }

  /** A request has been answered. */
  end(request: FastifyRequest, response: ServerResponse): void {
    if (this.#limitMs === 0) return;
    if (isTimed(response)) {
      if (response.timedReply !== undefined) this.#unlink(response);
    } else this.#injected.delete(request.raw);
  }

  #unlink(response: TimedResponse): void {
    const { newerOpen: newer, olderOpen: older } = response;
    if (newer === undefined) this.#newest = older;
    else newer.olderOpen = older;
    if (older !== undefined) older.newerOpen = newer;
    response.newerOpen = undefined;
    response.olderOpen = undefined;
    response.timedReply = undefined;
  }

  /** Answers the requests whose time is up; forgets those whose response has started or whose client has gone. */
  sweep(now: number): void {
    for (let response = this.#newest; response !== undefined; ) {
      const older: TimedResponse | undefined = response.olderOpen;
      const reply = response.timedReply;
      if (reply !== undefined) {
        const open = { reply, since: response.timedSince };
        const outcome = this.#check(open, now);
        if (outcome !== 'wait') this.#unlink(response);
        else response.timedSince = open.since;
        if (outcome === 'late') this.#answerLate(reply);
      }
      response = older;
    }
    for (const [raw, open] of this.#injected) {
      const outcome = this.#check(open, now);
      if (outcome !== 'wait') this.#injected.delete(raw);
      if (outcome === 'late') this.#answerLate(open.reply);
    }
  }

  /** Whether an open request is to be forgotten (`done`), answered (`late`), or waited for; restarts its clock while its body arrives. */
  #check(open: Open, now: number): 'done' | 'late' | 'wait' {
    const { reply } = open;
    const raw = reply.request.raw;
    // The client has gone when the response's socket has. (Not the request's `destroyed`: a
    // request stream is destroyed as soon as its body has been read, while it is being answered.)
    if (reply.sendHeld || reply.sent || reply.raw.headersSent || reply.raw.destroyed || reply.raw.socket?.destroyed === true) return 'done';
    // Still receiving its body: the request timeout bounds that, and the answer's time starts after.
    // (app.inject()'s requests have no `complete`: they arrive whole.)
    if ((raw.complete as boolean | undefined) === false) {
      open.since = now;
      return 'wait';
    }
    return now - open.since < this.#limitMs ? 'wait' : 'late';
  }

  #answerLate(reply: FastifyReply): void {
    for (const name of Object.keys(reply.getHeaders())) if (!KEPT_HEADERS.test(name)) reply.removeHeader(name);
    this.#timedOut(reply.request, reply);
  }

  /** Stops the sweeps (the app closes). */
  close(): void {
    clearInterval(this.#sweeper);
    while (this.#newest !== undefined) this.#unlink(this.#newest);
    this.#injected.clear();
  }
}

/** Answers a request out of time: 503 `server-timeout` with Retry-After, and a warning in the log. */
export function answerServerTimeout(log: FastifyBaseLogger, limitMs: number, request: FastifyRequest, reply: FastifyReply): void {
  log.warn({ requestId: request.id, method: request.method, url: request.url }, 'request timed out: answered 503 server-timeout');
  const detail = `The server did not answer within ${limitMs} ms. The request may still complete: retry a write with the same Idempotency-Key to learn its outcome.`;
  sendProblem(reply, request, new ServerTimeoutError(detail, { headers: { 'retry-after': '5' } }));
}
