import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { ServerTimeoutError } from '../errors.js';
import { sendProblem } from '../rest/problem-details.js';

/** A request being answered: its reply, and since when its time runs (performance.now()). */
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
  readonly #open = new Map<IncomingMessage, Open>();
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
    if (this.#limitMs > 0) this.#open.set(request.raw, { reply, since: performance.now() });
  }

  /** A request has been answered. */
  end(request: FastifyRequest): void {
    if (this.#limitMs > 0) this.#open.delete(request.raw);
  }

  /** Answers the requests whose time is up; forgets those whose response has started or whose client has gone. */
  sweep(now: number): void {
    for (const [raw, open] of this.#open) {
      const { reply } = open;
      if (reply.sendHeld || reply.sent || reply.raw.headersSent || raw.destroyed) {
        this.#open.delete(raw);
        continue;
      }
      // Still receiving its body: the request timeout bounds that, and the answer's time starts after.
      // (app.inject()'s requests have no `complete`: they arrive whole.)
      if ((raw.complete as boolean | undefined) === false) {
        open.since = now;
        continue;
      }
      if (now - open.since < this.#limitMs) continue;
      this.#open.delete(raw);
      for (const name of Object.keys(reply.getHeaders())) if (!KEPT_HEADERS.test(name)) reply.removeHeader(name);
      this.#timedOut(reply.request, reply);
    }
  }

  /** Stops the sweeps (the app closes). */
  close(): void {
    clearInterval(this.#sweeper);
    this.#open.clear();
  }
}

/** Answers a request out of time: 503 `server-timeout` with Retry-After, and a warning in the log. */
export function answerServerTimeout(log: FastifyBaseLogger, limitMs: number, request: FastifyRequest, reply: FastifyReply): void {
  log.warn({ requestId: request.id, method: request.method, url: request.url }, 'request timed out: answered 503 server-timeout');
  const detail = `The server did not answer within ${limitMs} ms. The request may still complete: retry a write with the same Idempotency-Key to learn its outcome.`;
  sendProblem(reply, request, new ServerTimeoutError(detail, { headers: { 'retry-after': '5' } }));
}
