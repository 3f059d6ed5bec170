import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Told of every answered request: its response, status and how long it took from its first hook to the end of the response. */
export type CompletionListener = (request: FastifyRequest, response: ServerResponse, statusCode: number, elapsedMs: number) => void;

/**
 * Node's response object (the server is made with it: http.createServer's `ServerResponse`
 * option), with declared room for the request it answers and when that began.
 */
export class TrackedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** The request being answered, from its first hook until it is reported. */
  answering: FastifyRequest | undefined = undefined;
  /** performance.now() when its first hook ran. */
  startedAt = 0;
}

/** What Node publishes on `http.server.response.finish` (documented in node:diagnostics_channel). */
interface ResponseFinished {
  response: ServerResponse;
  server: Server;
}

const RESPONSE_FINISHED = 'http.server.response.finish';

/**
 * Reports each request once its response has gone out, for the access log line and the request
 * metrics, without a listener per response: Node publishes every finished response of a server
 * on a diagnostics channel, and the response object itself carries the request (TrackedResponse).
 * That replaces Fastify's own mechanism, a 'finish' and an 'error' listener added and removed per
 * response (docs/performance.md has what that cost). Responses of other origins (`app.inject()`)
 * fall back to a 'finish' listener.
 */
export class RequestCompletions {
  readonly #server: Server;
  readonly #onCompleted: CompletionListener;
  readonly #onFinished = (message: unknown): void => {
    const { response, server } = message as ResponseFinished;
    if (server !== this.#server || !(response instanceof TrackedResponse)) return;
    const request = response.answering;
    if (request === undefined) return; // never reached a hook (a malformed URL): reported where it was answered
    response.answering = undefined;
    this.#onCompleted(request, response, response.statusCode, performance.now() - response.startedAt);
  };

  constructor(server: Server, onCompleted: CompletionListener) {
    this.#server = server;
    this.#onCompleted = onCompleted;
    subscribe(RESPONSE_FINISHED, this.#onFinished);
  }

  /** Starts the clock of a request: the first thing its first hook does. */
  begin(request: FastifyRequest, reply: FastifyReply): void {
    const response = reply.raw;
    if (response instanceof TrackedResponse) {
      response.answering = request;
      response.startedAt = performance.now();
      return;
    }
    const startedAt = performance.now();
    response.once('finish', () => this.#onCompleted(request, response, response.statusCode, performance.now() - startedAt));
  }

  /** Stops listening (when the app closes). */
  close(): void {
    unsubscribe(RESPONSE_FINISHED, this.#onFinished);
  }
}
