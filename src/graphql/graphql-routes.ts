import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MethodNotAllowedError, NotFoundError } from '../errors.js';
import { entityTag, noneMatch } from '../rest/conditional-requests.js';
import { BrowserAssets, packageFile, sendBrowserPage } from '../rest/browser-assets.js';
import { FAVICON_LINK } from '../rest/favicon.js';
import { logFailedRequest, loggedAfterResponse, toRestgraphError } from '../rest/problem-details.js';
import { GraphQLError } from 'graphql';
import websocket from '@fastify/websocket';
import { recheckCredential } from '../auth/credential-recheck.js';
import { makeHandler } from 'graphql-ws/use/@fastify/websocket';
import type { Principal } from '../core/principal.js';
import type { GraphqlRequestContext, GraphqlService, PreparedArgs } from './graphql-service.js';
import { sseTransport } from './sse-transport.js';
import type { MemberSink } from './subscription-groups.js';

export interface GraphqlRouteOptions {
  /** Turns an Authorization header value into a principal (for WebSocket connection_init). */
  authenticate: (header: string) => Promise<Principal>;
  /** Largest WebSocket message accepted (bytes); a bigger one closes the socket with 1009. */
  maxMessageBytes: number;
  /**
   * How often a WebSocket or graphql-sse connection's credential is checked again: one that no
   * longer authenticates (revoked, expired) has its connection closed.
   */
  recheckCredentialMs: number;
  /** Most subscriptions one WebSocket connection may run at once. @default 100 */
  maxSubscriptionsPerConnection: number;
  /** max-age of Cache-Control on successful GET query responses (seconds). @default 0 */
  getMaxAgeSeconds: number;
  /** Whether /graphql/schema.graphql serves the SDL (follows the introspection switch). */
  publishSchema: boolean;
  /** Count the open graphql-ws connections and graphql-sse streams (metrics gauges). */
  openStreams?: { webSocket: OpenCount; sse: OpenCount };
}

/** A gauge of things open now. */
interface OpenCount {
  inc(): void;
  dec(): void;
}

const ALLOW = 'GET, POST, OPTIONS';

/** Codes of the refusals graphql-http answers with a status and no body. */
const CODE_BY_STATUS: Record<number, string> = { 405: 'method-not-allowed', 406: 'not-acceptable', 415: 'unsupported-media-type' };

/**
 * The GraphQL-over-HTTP adapter: `POST /graphql` and `GET /graphql` (queries only), GraphiQL for
 * browsers, the SDL at `/graphql/schema.graphql`, and GraphiQL's assets served from our own
 * dependencies (nothing from a CDN). Errors on these paths are GraphQL responses
 * (`{"errors": [...]}` with `extensions.code`), not problem+json, so GraphQL clients can read them.
 */
export function registerGraphqlRoutes(app: FastifyInstance, service: GraphqlService, options: GraphqlRouteOptions): void {
  void app.register(async (scope) => {
    // WebSockets only here: the plugin's hooks then run for /graphql alone, not for every request.
    // (A refused upgrade elsewhere is closed by the app's own onRequest hook.)
    await scope.register(websocket, {
      options: { maxPayload: options.maxMessageBytes },
      // Its default handler logs through request.log, which is Fastify's null logger here (build-app.ts).
      errorHandler: (error, socket, request) => {
        app.log.error({ requestId: request.id, err: error }, 'WebSocket handler failed');
        socket.terminate();
      },
    });
    // graphql-http reads the body itself (and answers 415 for what it does not take).
    scope.removeAllContentTypeParsers();
    const asText = (_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void): void => done(null, body);
    scope.addContentTypeParser('*', { parseAs: 'string' }, asText);
    // The same, by name for JSON (what nearly every request sends): Fastify remembers a parser
    // found by name, but looks for the catch-all again on every request (parsing the media type).
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, asText);
    scope.setErrorHandler((error, request, reply) => {
      if (loggedAfterResponse(app, request, reply, error)) return;
      const problem = toRestgraphError(error);
      logFailedRequest(app, request, error, problem);
      if (problem.headers !== undefined) reply.headers(problem.headers);
      return sendErrors(reply, problem.status, problem.message, problem.code);
    });

    const handle = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      if (request.method === 'GET' && wantsGraphiql(request)) return sendBrowserPage(reply, GRAPHIQL_HTML);
      const context: GraphqlRequestContext = { operation: { principal: request.principal, requestId: request.id, clientAddress: request.ip } };
      const [body, init] = await service.handle({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: typeof request.body === 'string' ? request.body : null,
        raw: request,
        context,
      });
      reply.code(init.status);
      for (const [name, value] of Object.entries(init.headers ?? {})) reply.header(name, value);
      const { charge } = context;
      if (charge !== undefined) {
        reply.header('ratelimit-policy', `"graphql";q=${charge.limit};w=${charge.windowSeconds}`);
        reply.header('ratelimit', `"graphql";r=${charge.remaining};t=${charge.resetSeconds}`);
      }
      if (init.status === 405) {
        // A mutation over GET (graphql-http writes its own plain body for it).
        reply.header('cache-control', 'no-store');
        return sendErrors(reply, 405, 'Mutations are not allowed over GET; send them with POST.', 'method-not-allowed');
      }
      if (body === null) return sendErrors(reply, init.status, refusal(request, init.status) ?? init.statusText, CODE_BY_STATUS[init.status] ?? 'bad-request');
      if (request.method !== 'GET') return reply.send(body);
      // Errors refused before execution come as {"errors": …}; those of an execution are flagged.
      const hasErrors = context.hadErrors === true || body.startsWith('{"errors":');
      return sendCacheable(request, reply, body, init.status, hasErrors, options.getMaxAgeSeconds);
    };
    // Subscriptions (and queries) over WebSocket on the upgrade of GET /graphql: the
    // graphql-transport-ws protocol (graphql-ws).
    // Operations are charged their cost against the GraphQL budget, when one is set, not counted as requests.
    const charged = { graphqlOperation: true };
    const wsHandler = countedSockets(withoutOversizeErrors(subscriptionHandler(service, options)), options.openStreams?.webSocket);
    scope.route({ method: 'GET', url: '/graphql', wsHandler, handler: handle, config: charged });
    scope.route({ method: 'POST', url: '/graphql', handler: handle, config: charged });
    // Subscriptions (and queries) over Server-Sent Events: the graphql-sse protocol, in its
    // distinct-connections mode (each operation its own request, authenticated like any other).
    const sse = sseTransport(service, { authenticate: options.authenticate, recheckCredentialMs: options.recheckCredentialMs });
    // Open graphql-sse streams are cut on shutdown (clients then reconnect), not completed.
    const sseStreams = new Set<FastifyReply>();
    scope.addHook('preClose', (done) => {
      for (const reply of sseStreams) reply.raw.destroy();
      done();
    });
    scope.route({
      method: ['GET', 'POST'],
      url: '/graphql/stream',
      config: charged,
      handler: async (request, reply) => {
        // Single-connection mode (reserved streams shared by token) is not offered.
        const query = request.query as Record<string, unknown>;
        if (request.headers['x-graphql-event-stream-token'] !== undefined || query.token !== undefined) {
          return sendErrors(reply, 400, 'This server serves graphql-sse in its distinct-connections mode only: send each operation as its own request, without a stream token.', 'bad-request');
        }
        // One stream per connection, closed with it: shutdown need not wait for keep-alive.
        reply.header('connection', 'close');
        sseStreams.add(reply);
        options.openStreams?.sse.inc();
        reply.raw.once('close', () => {
          sseStreams.delete(reply);
          options.openStreams?.sse.dec();
        });
        // graphql-sse writes the response itself (with the headers set so far).
        reply.hijack();
        await sse(request, reply);
        return reply;
      },
    });
    scope.route({
      method: ['PUT', 'DELETE', 'PATCH', 'TRACE'],
      url: '/graphql/stream',
      handler: () => Promise.reject(new MethodNotAllowedError('/graphql/stream takes GET and POST (graphql-sse, distinct connections mode).', { headers: { allow: 'GET, POST' } })),
    });
    scope.route({
      method: 'OPTIONS',
      url: '/graphql',
      handler: async (request, reply) => {
        app.corsPreflight?.(request, reply, ALLOW);
        return reply.code(204).header('allow', ALLOW).send();
      },
    });
    scope.route({
      method: ['PUT', 'PATCH', 'DELETE', 'TRACE'],
      url: '/graphql',
      handler: () => Promise.reject(new MethodNotAllowedError(`/graphql takes ${ALLOW}.`, { headers: { allow: ALLOW } })),
    });
    scope.get('/graphql/schema.graphql', async (_request, reply) => {
      // With introspection off the schema is not published here either (export graphql prints it).
      if (!options.publishSchema) throw new NotFoundError('The schema is not published: introspection is switched off on this server.');
      return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-cache').send(service.sdl);
    });
    scope.get('/graphql/assets/:file', async (request, reply) => {
      return GRAPHIQL_ASSETS.send(request, reply, (request.params as { file: string }).file);
    });
  });
}

/** The Authorization value given in connection_init's payload, if any (either spelling). */
function authorizationParam(params: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const value = params?.Authorization ?? params?.authorization;
  return typeof value === 'string' ? value : undefined;
}

/**
 * graphql-ws on the WebSocket upgrade of /graphql. The credential is the upgrade request's
 * Authorization header, or `Authorization` in connection_init's payload (browsers cannot set
 * headers on WebSockets); an invalid one closes the socket with 4403. Every operation goes through
 * the same preparation (cache, validation, limits) and error codes as over HTTP.
 */
function subscriptionHandler(service: GraphqlService, options: GraphqlRouteOptions): ReturnType<typeof makeHandler> {
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
      const header = authorizationParam(ctx.connectionParams) ?? ctx.extra.request.headers.authorization;
      try {
        ctx.extra.principal = header === undefined ? ctx.extra.request.principal : await options.authenticate(header);
        ctx.extra.credential = header;
        if (header !== undefined) {
          const { socket } = ctx.extra;
          const stop = recheckCredential(header, options.authenticate, options.recheckCredentialMs, () => socket.close(4403, 'Forbidden'));
          socket.once('close', stop);
        }
        return true;
      } catch {
        return false;
      }
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
      if ('contextValue' in prepared && prepared.contextValue !== undefined) prepared.contextValue.sink = socketSink(ctx.extra.socket, id);
      return prepared;
    },
    // Subscriptions share one execution per event among the subscribers asking the same thing.
    subscribe: (args) => service.subscriptions.subscribe(args as PreparedArgs),
    onNext: (_ctx, _id, _payload, args, result) => service.formatResult(result, args.contextValue),
    onError: (_ctx, _id, _payload, errors) => errors.map((e) => service.formatError(e)),
  });
}

/** The WebSocket handler, counting its sockets from upgrade to close. */
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
  readonly bufferedAmount: number;
  send(data: string, done?: (error?: Error) => void): void;
}

/**
 * A subscription's messages on its WebSocket, as graphql-ws writes them
 * (`{"id", "type": "next", "payload"}`), for results whose JSON text is made once for many
 * subscribers: only the envelope is per subscriber. Congested while ws holds data the network has
 * not taken (a client that reads slowly).
 */
function socketSink(socket: SinkSocket, id: string): MemberSink {
  const start = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
  return {
    get open() {
      return socket.readyState === socket.OPEN;
    },
    get congested() {
      return socket.bufferedAmount > 0;
    },
    write(text, flushed) {
      if (flushed === undefined) socket.send(`${start}${text}}`);
      else socket.send(`${start}${text}}`, () => flushed());
    },
  };
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

/**
 * GET responses of queries are cacheable: a strong ETag (If-None-Match → 304) and Cache-Control,
 * `private` when the request carried a credential (the answer depends on it). Errors are not cached.
 */
function sendCacheable(request: FastifyRequest, reply: FastifyReply, body: string, status: number, hasErrors: boolean, maxAge: number): FastifyReply {
  reply.header('vary', 'Accept, Authorization');
  if (status !== 200 || hasErrors) {
    return reply.header('cache-control', 'no-store').send(body);
  }
  const tag = entityTag(body);
  reply.header('etag', tag);
  reply.header('cache-control', `${request.headers.authorization === undefined ? 'public' : 'private'}, max-age=${maxAge}`);
  if (!noneMatch(request.headers['if-none-match'], tag)) return reply.code(304).send();
  return reply.send(body);
}

/**
 * What to send instead, for the refusals graphql-http answers with a bare status text: the media
 * types it takes (POST: application/json in UTF-8) and gives (Accept), and the other transports.
 */
function refusal(request: FastifyRequest, status: number): string | undefined {
  if (status === 415) {
    const contentType = request.headers['content-type'];
    const received = contentType === undefined ? 'this request has no Content-Type' : `this request has Content-Type: ${contentType.slice(0, 100)}`;
    return (
      `POST /graphql takes a JSON body {"query", "variables"?, "operationName"?, "extensions"?} with Content-Type: application/json (UTF-8, the default charset); ${received}. ` +
      'Queries can also go by GET /graphql?query=…, subscriptions by WebSocket on /graphql or Server-Sent Events on /graphql/stream.'
    );
  }
  if (status === 406) {
    return `/graphql answers with application/graphql-response+json or application/json (UTF-8); the Accept header (${(request.headers.accept ?? '').slice(0, 100)}) rules both out.`;
  }
  return undefined;
}

function sendErrors(reply: FastifyReply, status: number, message: string, code: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ errors: [{ message, extensions: { code, status } }] }));
}

/** A browser navigating to /graphql (HTML first in Accept, and no query in the URL). */
function wantsGraphiql(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  if (!accept.includes('text/html')) return false;
  const query = request.query as Record<string, unknown>;
  return query.query === undefined && query.extensions === undefined;
}

const GRAPHIQL_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>restgraph · GraphiQL</title>
${FAVICON_LINK}
<link rel="stylesheet" href="/graphql/assets/graphiql.min.css">
<style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head>
<body>
<div id="graphiql">Loading GraphiQL…</div>
<script src="/graphql/assets/react.production.min.js"></script>
<script src="/graphql/assets/react-dom.production.min.js"></script>
<script src="/graphql/assets/graphiql.min.js"></script>
<script src="/graphql/assets/start.js"></script>
</body>
</html>
`;

/** Starts GraphiQL against this server; the Headers tab takes `{"Authorization": "Bearer …"}`. */
const GRAPHIQL_START = `'use strict';
(function () {
  var fetcher = GraphiQL.createFetcher({ url: window.location.origin + '/graphql' });
  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultEditorToolsVisibility: true,
    defaultQuery: '# restgraph GraphQL. Reading private resources needs a token: open the Headers tab below\\n' +
      '# and enter {"Authorization": "Bearer <your API key or JWT>"}.\\n{\\n  __typename\\n}\\n'
  }));
})();
`;

const JS = 'text/javascript; charset=utf-8';
const GRAPHIQL_ASSETS = new BrowserAssets(
  {
    'start.js': { text: GRAPHIQL_START, type: JS },
    'graphiql.min.js': { path: packageFile('graphiql', 'graphiql.min.js'), type: JS },
    'graphiql.min.css': { path: packageFile('graphiql', 'graphiql.min.css'), type: 'text/css; charset=utf-8' },
    'react.production.min.js': { path: packageFile('react', 'umd/react.production.min.js'), type: JS },
    'react-dom.production.min.js': { path: packageFile('react-dom', 'umd/react-dom.production.min.js'), type: JS },
  },
  'No such GraphiQL asset.',
);
