import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WatchCredential } from '../auth/credential-recheck.js';
import { createHandler, type OperationArgs, type OperationResult } from 'graphql-sse';
import { type GraphqlContext, type MemberSink } from './graphql-context.js';
import type { ConnectionQueue } from './queued-bytes.js';
import type { SharedMessage } from './shared-message.js';
import type { GraphqlService } from './graphql-service.js';

/**
 * Lets a subscription's events be read only as fast as the client takes them. The writer says
 * when it waits for its next message; the paced iterator pulls an event from the subscription only
 * then. A client that stops reading therefore stops the pulling: its events wait in the
 * subscription's bounded queue, where the dispatcher's backpressure and lag limit apply, as on the
 * other transports (graphql-sse itself would pull them all into an unbounded queue).
 */
class WritePacer {
  #idle = true;
  #waiting: (() => void)[] = [];

  /** The writer is about to wait for its next message. */
  idle(): void {
    this.#idle = true;
    for (const resume of this.#waiting.splice(0)) resume();
  }

  /** The writer is writing a message. */
  busy(): void {
    this.#idle = false;
  }

  /** Resolves once the writer waits for a message. */
  async ready(): Promise<void> {
    if (!this.#idle) await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }
}

/**
 * The operation's results, each pulled from `source` only once the writer is ready for it. A
 * plain iterator, not an async generator: `return()` must end the subscription at once, also while
 * a `next()` waits for the next event (a generator would queue the return behind it).
 */
function paced<T>(source: AsyncIterable<T>, pacer: WritePacer): AsyncGenerator<T, undefined, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  const done = (): IteratorResult<T, undefined> => ({ done: true, value: undefined });
  // next, return and throw: graphql-sse ends only what looks like an async generator.
  const result: AsyncGenerator<T, undefined, undefined> = {
    async next() {
      if (!ended) await pacer.ready();
      return ended ? done() : iterator.next();
    },
    async return() {
      ended = true;
      await iterator.return?.();
      return done();
    },
    async throw(error: unknown) {
      ended = true;
      await iterator.return?.();
      throw error;
    },
    [Symbol.asyncIterator]: () => result,
  };
  return result;
}

/**
 * A subscription's `next` messages on its event stream, as graphql-sse writes them
 * (`event: next`, `data: <result>`), for results whose bytes are made once for many subscribers
 * (SharedMessage). Until the stream has started (its head and first comment written) it counts
 * as congested, and what is written waits for it.
 */
class StreamSink implements MemberSink {
  #out: ServerResponse | undefined;
  #closed = false;
  readonly #early: { message: SharedMessage; flushed: (() => void) | undefined }[] = [];
  /** The stream's queue: one subscription, one connection. */
  readonly queue: ConnectionQueue;

  constructor(queue: ConnectionQueue) {
    this.queue = queue;
  }

  get open(): boolean {
    return this.#out === undefined ? !this.#closed : this.#out.writable;
  }

  get congested(): boolean {
    return this.#out === undefined || this.#out.writableLength > 0;
  }

  write(message: SharedMessage, flushed?: () => void): void {
    if (this.#out === undefined) this.#early.push({ message, flushed });
    else StreamSink.#send(this.#out, message, flushed);
  }

  /** The stream has started: what waited goes out, in order, and the next writes at once. */
  start(out: ServerResponse): void {
    if (this.#out !== undefined) return;
    this.#out = out;
    for (const { message, flushed } of this.#early.splice(0)) StreamSink.#send(out, message, flushed);
  }

  /** The stream ended before it started. */
  close(): void {
    this.#closed = true;
    this.#early.length = 0;
  }

  static #send(out: ServerResponse, message: SharedMessage, flushed: (() => void) | undefined): void {
    const done = flushed === undefined ? undefined : (): void => flushed();
    // One chunk of the response: the event's head, the shared bytes, its end.
    out.cork();
    out.write(EVENT_HEAD);
    out.write(message.bytes);
    out.write(EVENT_END, done);
    out.uncork();
  }
}

const EVENT_HEAD = Buffer.from('event: next\ndata: ', 'utf8');
const EVENT_END = Buffer.from('\n\n', 'utf8');

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * The graphql-sse protocol (distinct connections mode) on Fastify: graphql-sse's handler reads the
 * request and runs the operation; this adapter writes its messages, each once the previous one has
 * gone out, and paces the subscription by the writes (see {@link WritePacer}). The caller has
 * refused stream tokens (single connection mode) before.
 */
export function sseTransport(
  service: GraphqlService,
  watchCredential: WatchCredential,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const handler = createHandler<FastifyRequest, { pacer: WritePacer; sink: StreamSink }, GraphqlContext>({
    schema: service.schema,
    onSubscribe: async (req, params) => {
      const prepared = await service.prepare(params, { principal: req.raw.principal, requestId: req.raw.id, clientAddress: req.raw.ip });
      // `data: null` makes graphql-sse send the errors as the operation's one result.
      if (Array.isArray(prepared)) return { data: null, errors: prepared };
      const args = prepared as OperationArgs<GraphqlContext>;
      // A subscription's shared results are written straight to the stream (see StreamSink).
      args.contextValue.sink = req.context.sink;
      return args;
    },
    onOperation: (_ctx, req, _args, result): OperationResult | undefined =>
      isAsyncIterable(result) ? (paced(result, req.context.pacer) as OperationResult) : undefined,
    subscribe: (args) => service.subscriptions.subscribe(args),
    onNext: (ctx, _req, result) => service.formatResult(result, ctx),
  });

  return async (request, reply) => {
    const pacer = new WritePacer();
    const sink = new StreamSink(service.subscriptions.connection());
    const [body, init] = await handler({
      method: request.method,
      url: request.url,
      headers: {
        get(key: string) {
          const header = reply.getHeader(key) ?? request.headers[key];
          return header === undefined ? undefined : Array.isArray(header) ? header.join('\n') : String(header);
        },
      },
      body: () => (typeof request.body === 'string' ? request.body : null),
      raw: request,
      context: { pacer, sink },
    });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join('\n') : String(value);
    const out = reply.raw;
    out.writeHead(init.status, init.statusText, { ...headers, ...init.headers });
    if (body === null || typeof body === 'string') {
      sink.close();
      await new Promise<void>((resolve) => out.end(body ?? undefined, resolve));
      return;
    }
    const stop = (): void => void body.return(undefined);
    out.once('close', stop);
    // A credential that stops authenticating (revoked, expired) cuts the stream; the client's
    // reconnection is then refused with 401.
    const header = request.headers.authorization;
    const stopRecheck = header === undefined ? undefined : watchCredential(header, request.principal, () => out.destroy());
    try {
      for (;;) {
        pacer.idle();
        const message = await body.next();
        pacer.busy();
        if (message.done === true || !out.writable) break;
        // The callback comes once the message is handed to the connection (or the write failed).
        const failed = await new Promise<boolean>((resolve) => out.write(message.value, (error) => resolve(error !== undefined && error !== null)));
        if (failed) break;
        // The stream's first comment is out: shared results may follow.
        sink.start(out);
      }
    } finally {
      sink.close();
      stopRecheck?.();
      out.off('close', stop);
      pacer.idle();
      await body.return(undefined);
      if (!out.destroyed) await new Promise<void>((resolve) => out.end(resolve));
    }
  };
}
