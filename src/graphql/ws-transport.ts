import type { Socket } from 'node:net';
import { GraphQLError } from 'graphql';
import { makeHandler } from 'graphql-ws/use/@fastify/websocket';
import type { WatchCredential } from '../auth/credential-recheck.js';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import { RateLimitedError } from '../errors.js';
import { toRestgraphError } from '../http/problem-details.js';
import type { FastifyRequest } from 'fastify';
import type { GraphqlService } from './graphql-service.js';
import type { MemberSink, PreparedArgs } from './graphql-context.js';
import type { ConnectionQueue } from './queued-bytes.js';

/** A gauge of things open now. */
export interface OpenCount {
  inc(): void;
  dec(): void;
}

export interface WebSocketTransportOptions {
  /** Turns an Authorization header value into a principal (the upgrade's, or connection_init's). */
  authenticate: (header: string) => Promise<Principal>;
  /** Watches an open socket's credential: one that no longer authenticates (revoked, expired) closes the socket with 4403. */
  watchCredential: WatchCredential;
  /** Most operations one connection may run at once. */
  maxSubscriptionsPerConnection: number;
  /** Counts the open sockets (a metrics gauge). */
  open?: OpenCount | undefined;
  /**
   * Counts a connection whose upgrade named no credential against the quotas of the one
   * connection_init names (anonymous: its address's), once it is known. @throws RateLimitedError
   * when a quota is used up (the socket is then closed with 4429)
   */
  countConnection?: ((principal: Principal, clientAddress: string | undefined) => Promise<void>) | undefined;
}

/**
 * graphql-ws (the graphql-transport-ws protocol) on the WebSocket upgrade of /graphql: the
 * handler @fastify/websocket calls with each socket, its open sockets counted.
 */
export function webSocketTransport(service: GraphqlService, options: WebSocketTransportOptions): ReturnType<typeof makeHandler> {
  return countedSockets(withoutOversizeErrors(subscriptionHandler(service, options)), options.open);
}

/** Longest reason a WebSocket close frame carries (RFC 6455, section 5.5: 125 bytes of payload, 2 of them the code); our messages are ASCII. */
const MAX_CLOSE_REASON = 123;

/**
 * The Authorization value given in connection_init's payload (either spelling): undefined when
 * none is, null when one is but is not text (an invalid credential, refused like a wrong one).
 */
function authorizationParam(params: Readonly<Record<string, unknown>> | undefined): string | undefined | null {
  const value = params?.Authorization ?? params?.authorization;
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : null;
}

/**
 * graphql-ws on the WebSocket upgrade of /graphql. The credential is the upgrade request's
 * Authorization header, or `Authorization` in connection_init's payload (browsers cannot set
 * headers on WebSockets); an invalid one closes the socket with 4403. Every operation goes through
 * the same preparation (cache, validation, limits) and error codes as over HTTP.
 */
function subscriptionHandler(service: GraphqlService, options: WebSocketTransportOptions): ReturnType<typeof makeHandler> {
  const max = options.maxSubscriptionsPerConnection;
  /** The execution arguments of a subscribe message, or its errors. */
  const subscribeArgs = async (
    extra: { principal?: Principal; credential?: string | undefined; request: FastifyRequest },
    payload: { query: string; operationName?: string | null; variables?: Record<string, unknown> | null },
  ): Promise<Awaited<ReturnType<GraphqlService['prepare']>>> => {
    // Each operation checks the credential again: a key revoked since the connection opened is
    // refused (within the key cache time), as on a new request.
    if (extra.credential !== undefined) {
      try {
        extra.principal = await options.authenticate(extra.credential);
      } catch (error) {
        return [service.formatError(new GraphQLError((error as Error).message, { originalError: error as Error }))];
      }
    }
    const params = {
      query: payload.query,
      ...(payload.operationName === undefined || payload.operationName === null ? {} : { operationName: payload.operationName }),
      ...(payload.variables === undefined || payload.variables === null ? {} : { variables: payload.variables }),
    };
    return service.prepare(params, { principal: extra.principal ?? extra.request.principal, requestId: extra.request.id, clientAddress: extra.request.ip });
  };
  return makeHandler<Record<string, unknown>, { principal: Principal; credential: string | undefined }>({
    schema: service.schema,
    onConnect: async (ctx) => {
      const { request, socket } = ctx.extra;
      const given = authorizationParam(ctx.connectionParams);
      const header = given ?? request.headers.authorization;
      let principal: Principal | undefined;
      try {
        if (given !== null) principal = header === undefined ? request.principal : await options.authenticate(header);
      } catch {
        // Refused below, after counting: a bad credential counts as anonymous, as over HTTP.
      }
      // The upgrade, without a credential, counted against the bound on upgrades per address: the
      // connection counts against the credential connection_init named now (or the address's
      // anonymous quota), as a request with it would have.
      if (request.headers.authorization === undefined || header !== request.headers.authorization) {
        try {
          await options.countConnection?.(principal ?? ANONYMOUS, request.ip);
        } catch (error) {
          // A used-up quota: 4429, as HTTP's 429 (graphql-ws clients do not retry on it). Shared
          // counters out of reach: 1013 Try Again Later, as HTTP's 503.
          const refused = toRestgraphError(error);
          const code = refused instanceof RateLimitedError ? 4429 : refused.status === 503 ? 1013 : undefined;
          if (code === undefined) throw error;
          socket.close(code, refused.message.slice(0, MAX_CLOSE_REASON));
          return false;
        }
      }
      // false: graphql-ws closes the socket with 4403 Forbidden.
      if (principal === undefined) return false;
      ctx.extra.principal = principal;
      ctx.extra.credential = header;
      if (header !== undefined && socket.readyState !== socket.CLOSED) {
        const stop = options.watchCredential(header, principal, () => socket.close(4403, 'Forbidden'));
        socket.once('close', stop);
      }
      return true;
    },
    onSubscribe: async (ctx, id, payload) => {
      // Counted before anything is awaited: each of several subscribe messages read in one go
      // sees those before it (a count taken after the credential check saw them all at once).
      // An admitted operation counts for as long as graphql-ws runs it: its entry in
      // ctx.subscriptions goes when it ends, and at once when the client's complete message
      // arrives, so a subscribe right behind a complete finds the place free.
      const admitted = admittedOperations(ctx.extra.socket);
      for (const other of admitted) if (!(other in ctx.subscriptions)) admitted.delete(other);
      // (This one's entry is already there: an id completed and reused counts once.)
      admitted.delete(id);
      if (admitted.size >= max) {
        return [
          new GraphQLError(`This connection already runs ${max} operations, the most allowed; complete some first.`, {
            extensions: { code: 'query-too-complex', status: 400, limit: 'maxSubscriptionsPerConnection', max },
          }),
        ];
      }
      admitted.add(id);
      const prepared = await subscribeArgs(ctx.extra, payload);
      // A subscription's shared results are written straight to the socket (see MemberSink).
      if ('contextValue' in prepared && prepared.contextValue !== undefined) prepared.contextValue.sink = socketSink(ctx.extra.socket, frameWriterOf(service, ctx.extra.request), id);
      return prepared;
    },
    // Subscriptions share one execution per event among the subscribers asking the same thing.
    subscribe: (args) => service.subscriptions.subscribe(args as PreparedArgs),
    onNext: (_ctx, _id, _payload, args, result) => service.formatResult(result, args.contextValue),
    onError: (_ctx, _id, _payload, errors) => errors.map((e) => service.formatError(e)),
  });
}

/**
 * A message over the size limit makes ws close the socket with 1009 (Message Too Big) and emit an
 * error, which graphql-ws prints with console.error, outside the JSON log, for any client that
 * sends one. The fault is the client's and the socket is already closed: that error is kept from
 * graphql-ws's listener (every other error still reaches it).
 */
function withoutOversizeErrors(handler: ReturnType<typeof makeHandler>): ReturnType<typeof makeHandler> {
  return function quiet(this: ThisParameterType<typeof handler>, socket, request) {
    const once = socket.once.bind(socket);
    const filtered = (event: string | symbol, listener: (...args: unknown[]) => void): typeof socket => {
      if (event !== 'error') return once(event, listener);
      return once('error', (error: Error & { code?: string }) => {
        if (error.code !== 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') listener(error);
      });
    };
    socket.once = filtered as typeof socket.once;
    return handler.call(this, socket, request);
  };
}

/** What socketSink uses of a ws WebSocket. */
interface SinkSocket {
  readonly readyState: number;
  readonly OPEN: number;
  /** The extensions negotiated (permessage-deflate, when any). */
  readonly extensions: string;
  send(data: string, done?: (error?: Error) => void): void;
}

/**
 * A subscription's messages on its WebSocket, as graphql-ws writes them
 * (`{"id", "type": "next", "payload"}`), for results whose bytes are made once for many
 * subscribers (SharedMessage): only the frame header and the envelope are per subscriber. Each is
 * written as a WebSocket text frame (RFC 6455 §5.2, unmasked as from a server) straight to the
 * connection, beside the frames ws writes (in order: both write whole frames at once), through the
 * connection's {@link FrameWriter}. With permessage-deflate negotiated, frames go through ws instead.
 * Congested while the network has not taken what was written (a client that reads slowly).
 */
function socketSink(socket: SinkSocket, writer: FrameWriter, id: string): MemberSink {
  const prefix = Buffer.from(`{"id":${JSON.stringify(id)},"type":"next","payload":`, 'utf8');
  const framed = socket.extensions === '';
  return {
    get open() {
      return socket.readyState === socket.OPEN && writer.open;
    },
    get congested() {
      return writer.congested;
    },
    queue: writer.queue,
    write(message, flushed) {
      if (framed) writer.write(prefix, message.bytes, flushed);
      else if (flushed === undefined) socket.send(`${prefix.toString('utf8')}${message.text}}`);
      else socket.send(`${prefix.toString('utf8')}${message.text}}`, () => flushed());
    },
  };
}

/** The end of every `next` message's envelope. */
const ENVELOPE_END = Buffer.from('}', 'utf8');

/** Payloads up to this size are copied into one buffer with their frame header and envelope; larger ones are written as they are, beside them. */
const COPY_BELOW = 2048;

/**
 * Writes text frames to one connection's socket, corked for the rest of the event-loop turn: the
 * messages the connection gets in one turn (its subscriptions', or a burst's) leave in one write
 * to the network instead of one each.
 */
class FrameWriter {
  readonly #socket: Socket;
  /** What its subscriptions hold queued while it is congested. */
  readonly queue: ConnectionQueue;
  /** Bytes written since the socket was corked (this turn): held by the cork, not by the network. */
  #corked = 0;

  /** The connection can take no more (closed, ended or failed): known from its events, not asked of the stream at each write. */
  #gone = false;

  constructor(socket: Socket, queue: ConnectionQueue) {
    this.#socket = socket;
    this.queue = queue;
    const gone = (): void => {
      this.#gone = true;
    };
    socket.once('close', gone);
    socket.once('finish', gone);
    socket.once('error', gone);
  }

  get open(): boolean {
    return !this.#gone && !this.#socket.writableEnded;
  }

  /** Whether the network has not taken something written before this turn. */
  get congested(): boolean {
    return this.#socket.writableLength > this.#corked;
  }

  /** One text frame: `prefix`, `payload`, then the envelope's end. */
  write(prefix: Buffer, payload: Buffer, flushed: (() => void) | undefined): void {
    const length = prefix.length + payload.length + ENVELOPE_END.length;
    const headerLength = length < 126 ? 2 : length < 65_536 ? 4 : 10;
    const small = payload.length < COPY_BELOW;
    const head = Buffer.allocUnsafe(headerLength + prefix.length + (small ? payload.length + ENVELOPE_END.length : 0));
    head[0] = 0x81; // FIN, text
    if (headerLength === 2) head[1] = length;
    else if (headerLength === 4) {
      head[1] = 126;
      head.writeUInt16BE(length, 2);
    } else {
      head[1] = 127;
      head.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
      head.writeUInt32BE(length >>> 0, 6);
    }
    prefix.copy(head, headerLength);
    if (this.#corked === 0) {
      this.#socket.cork();
      corked.add(this);
      if (corked.size === 1) process.nextTick(uncorkAll);
    }
    this.#corked += headerLength + length;
    const done = flushed === undefined ? undefined : (): void => flushed();
    if (small) {
      payload.copy(head, headerLength + prefix.length);
      ENVELOPE_END.copy(head, headerLength + prefix.length + payload.length);
      this.#socket.write(head, done);
    } else {
      this.#socket.write(head);
      this.#socket.write(payload);
      this.#socket.write(ENVELOPE_END, done);
    }
  }

  /** Lets the writes of this turn go (see {@link uncorkAll}). */
  uncork(): void {
    this.#corked = 0;
    this.#socket.uncork();
  }
}

/** The writers corked this turn. */
const corked = new Set<FrameWriter>();

/** At the end of the turn (once, for every writer corked in it), the corked writes go to the network. */
function uncorkAll(): void {
  // Taken out first: a writer corked again meanwhile goes with the next turn.
  const writers = [...corked];
  corked.clear();
  for (const writer of writers) writer.uncork();
}

/** Each connection's frame writer (over its TCP socket, which ws took over at the upgrade). */
const writers = new WeakMap<Socket, FrameWriter>();

function frameWriterOf(service: GraphqlService, request: FastifyRequest): FrameWriter {
  const socket = request.raw.socket;
  let writer = writers.get(socket);
  if (writer === undefined) writers.set(socket, (writer = new FrameWriter(socket, service.subscriptions.connection())));
  return writer;
}

/** The ids of the operations admitted on each socket (see maxSubscriptionsPerConnection). */
const operationsBySocket = new WeakMap<object, Set<string>>();

function admittedOperations(socket: object): Set<string> {
  let admitted = operationsBySocket.get(socket);
  if (admitted === undefined) operationsBySocket.set(socket, (admitted = new Set()));
  return admitted;
}

function countedSockets(handler: ReturnType<typeof makeHandler>, open: OpenCount | undefined): ReturnType<typeof makeHandler> {
  if (open === undefined) return handler;
  return function counted(this: ThisParameterType<typeof handler>, socket, request) {
    open.inc();
    socket.once('close', () => open.dec());
    return handler.call(this, socket, request);
  };
}
