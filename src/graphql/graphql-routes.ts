import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MethodNotAllowedError, NotFoundError } from '../errors.js';
import { entityTag, noneMatch } from '../http/conditional-requests.js';
import { BrowserAssets, packageFile, sendBrowserPage } from '../http/browser-assets.js';
import { FAVICON_LINK } from '../http/favicon.js';
import { logFailedRequest, loggedAfterResponse, toRestgraphError } from '../http/problem-details.js';
import websocket from '@fastify/websocket';
import type { Principal } from '../core/principal.js';
import type { WatchCredential } from '../auth/credential-recheck.js';
import type { GraphqlRequestContext, GraphqlService } from './graphql-service.js';
import { sseTransport } from './sse-transport.js';
import { readGraphqlMultipart, type GraphqlUploads } from './graphql-multipart.js';
import { webSocketTransport, type OpenCount } from './ws-transport.js';

export interface GraphqlRouteOptions {
  /** Turns an Authorization header value into a principal (for WebSocket connection_init). */
  authenticate: (header: string) => Promise<Principal>;
  /** Largest WebSocket message accepted (bytes); a bigger one closes the socket with 1009. */
  maxMessageBytes: number;
  /**
   * Watches a WebSocket or graphql-sse connection's credential: one that no longer authenticates
   * (revoked, expired) has its connection closed.
   */
  watchCredential: WatchCredential;
  /** Most subscriptions one WebSocket connection may run at once. @default 100 */
  maxSubscriptionsPerConnection: number;
  /** max-age of Cache-Control on successful GET query responses (seconds). @default 0 */
  getMaxAgeSeconds: number;
  /** Whether /graphql/schema.graphql serves the SDL (follows the introspection switch). */
  publishSchema: boolean;
  /** Counts a WebSocket connection against the quotas of the credential connection_init names (see WebSocketTransportOptions). */
  countConnection?: ((principal: Principal, clientAddress: string | undefined) => Promise<void>) | undefined;
  /** Count the open graphql-ws connections and graphql-sse streams (metrics gauges). */
  openStreams?: { webSocket: OpenCount; sse: OpenCount };
  /** File uploads (the GraphQL multipart request specification), when the schema has file fields. */
  uploads?: GraphqlUploads | undefined;
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
        const fault = clientFault(error, options.maxMessageBytes);
        if (fault === undefined) {
          app.log.error({ requestId: request.id, err: error }, 'WebSocket handler failed');
          socket.terminate();
          return;
        }
        // The client's doing (a frame over the limit, a broken frame, a connection reset): ws has
        // begun the closing handshake with the status that says so (1009, 1002, …), which a
        // terminate() here could cut before it is sent. Logged as other client errors are.
        app.log.info({ requestId: request.id, code: fault.code, wsError: (error as { code?: string }).code }, fault.message);
      },
    });
    // graphql-http reads the body itself (and answers 415 for what it does not take); multipart
    // bodies, with uploads, are left to @fastify/multipart's parser (registered on the app).
    if (options.uploads === undefined) scope.removeAllContentTypeParsers();
    else scope.removeContentTypeParser(['application/json', 'application/merge-patch+json', 'text/plain']);
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
      const context: GraphqlRequestContext = { operation: { principal: request.principal, requestId: request.id, clientAddress: request.ip, origin: `${request.protocol}://${request.host}` } };
      const multipart = options.uploads !== undefined && request.isMultipart() ? await readGraphqlMultipart(request, reply, service, options.uploads, context.operation) : undefined;
      if (multipart !== undefined) context.multipartParams = multipart.params;
      const [body, init] = await service
        .handle({ method: request.method, url: request.url, headers: request.headers, body: typeof request.body === 'string' ? request.body : null, raw: request, context })
        .finally(() => multipart?.settle());
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
    // An upgrade without a credential counts against the bound on upgrades per address, and its
    // connection against the credential connection_init names (options.countConnection).
    const charged = { graphqlOperation: true };
    const wsHandler = webSocketTransport(service, { ...options, open: options.openStreams?.webSocket });
    scope.route({ method: 'GET', url: '/graphql', wsHandler, handler: handle, config: { ...charged, webSocket: true } });
    scope.route({ method: 'POST', url: '/graphql', handler: handle, config: { ...charged, multipart: options.uploads !== undefined } });
    // Subscriptions (and queries) over Server-Sent Events: the graphql-sse protocol, in its
    // distinct-connections mode (each operation its own request, authenticated like any other).
    const sse = sseTransport(service, options.watchCredential);
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

/**
 * What a WebSocket error says about the client, when it is the client's fault: ws's own errors
 * (`WS_ERR_*`, raised while reading the client's frames) and a connection the client's side
 * broke. Undefined for anything else (a fault of ours).
 */
function clientFault(error: Error & { code?: string }, maxMessageBytes: number): { code: string; message: string } | undefined {
  if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
    return { code: 'message-too-big', message: `WebSocket closed with 1009: the client sent a message over the limit of ${maxMessageBytes} bytes (graphql.maxWebSocketMessageBytes)` };
  }
  if (error.code?.startsWith('WS_ERR_') === true) return { code: 'bad-request', message: `WebSocket closed: the client sent a frame that breaks the protocol (${error.message})` };
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE') return { code: 'connection-reset', message: 'WebSocket closed: the client reset the connection' };
  return undefined;
}
