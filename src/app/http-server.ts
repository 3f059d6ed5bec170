import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Authenticator } from '../auth/authenticator.js';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import type { RateLimits } from '../core/rate-limits.js';
import { UriTooLongError } from '../errors.js';
import { registerBodyParsers } from '../http/content-negotiation.js';
import { corsHeaders, registerCorsPreflight } from '../http/cors.js';
import { lingerLimits } from '../http/lingering-close.js';
import { answerClientError, answerUnsendable, registerProblemHandlers, sendProblem, toRestgraphError } from '../http/problem-details.js';
import { requestRateLimiter } from '../rest/rate-limit-hook.js';
import { requestReporter } from './access-log.js';
import type { AppMetrics } from './app-metrics.js';
import type { ResolvedOptions } from './app-options.js';
import type { AppLogging } from './app-logging.js';
import type { Lifecycle } from './lifecycle.js';
import { ResponseBatches } from './response-batches.js';
import { answerServerTimeout, ResponseDeadlines, TimedResponse } from './response-deadlines.js';
import { UnusedConnections } from './unused-connections.js';

/**
 * The most responses held for the end of an event-loop turn (see ResponseBatches): as many as
 * gave the most throughput when measured (docs/performance.md, response batching).
 */
const MAX_HELD_RESPONSES = 16;

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts for, from its own Authorization header. */
    principal: Principal;
    /**
     * The pattern of the route that answers (`/users/:id`), set by the REST adapter's handlers for
     * the request metrics; undefined elsewhere (Fastify's routeOptions has it too, but builds an
     * object of 12 properties each time it is read).
     */
    routePattern: string | undefined;
  }
  interface FastifyInstance {
    /** Marks the app as shutting down: /readyz answers 503 from now on. */
    startDraining(): void;
    /** Writes buffered log lines out, then calls back. */
    flushLogs(callback: () => void): void;
    /**
     * Logs one line and writes it out before returning, with every line buffered before it (to
     * the standard output, synchronously): for a process about to stop, or in trouble.
     */
    logNow(level: 'error' | 'fatal', details: Record<string, unknown>, message: string): void;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const HEALTH_PROBE = /^\/(?:healthz|readyz)\/?(?:\?|$)/;

/** `/healthz` or `/readyz`, with or without a trailing slash or a query string (as the router matches them). */
function isHealthProbe(url: string): boolean {
  // startsWith first: most requests are not probes, and leave without running the pattern.
  return (url.startsWith('/healthz') || url.startsWith('/readyz')) && HEALTH_PROBE.test(url);
}

/** What the HTTP server needs from the rest of the app. */
export interface HttpServerParts {
  /** The app's logging: Fastify's instance logs and ours go there, and one access line per request. */
  logging: AppLogging;
  authenticator: Authenticator;
  rateLimits: RateLimits | undefined;
  metrics: AppMetrics | undefined;
}

/** The Fastify instance of an app, with what its routes and start-up need from it. */
export interface HttpServer {
  app: FastifyInstance;
  /** Whether the app is shutting down (/readyz answers 503). */
  isDraining: () => boolean;
  /** Ends the connections on which no byte has arrived (at shutdown). */
  closeUnusedConnections: () => void;
}

/**
 * The HTTP side of an app, before any route: Fastify with restgraph's logging, request ids,
 * response deadlines and batching, draining, problem documents, body parsers and CORS, and the one
 * onRequest hook that authenticates each request and counts it against its quotas. Its timers
 * close through `lifecycle`.
 */
export function createHttpServer(options: ResolvedOptions, { logging, authenticator, rateLimits, metrics }: HttpServerParts, lifecycle: Lifecycle): HttpServer {
  const { logger: pinoLogger, writeAccessLine } = logging;
  const logger: FastifyBaseLogger = pinoLogger;

  const app = Fastify({
    // Fastify gets no logger of its own: a child logger factory of ours it would check on every
    // request (7 method lookups). So request.log is Fastify's null logger; everything restgraph
    // logs goes through app.log (ours, below) with the request id written explicitly, and the
    // onResponse hook (below) writes the one access line per request, when the response has gone
    // out. (What Fastify would log per request on its own is off anyway: disableRequestLogging.)
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimitBytes,
    // Node's limit on receiving a request. (How long answering may take is ResponseDeadlines':
    // Fastify's handlerTimeout costs a third of the throughput of a simple read.)
    requestTimeout: options.requestTimeoutMs,
    // Node counts the URL and the header names and values, and refuses (431, answerClientError)
    // once they reach maxHeaderSize: +1 lets exactly maxHeaderBytes through. It checks the request
    // timeout every connectionsCheckingInterval (30 s by default): at most every second.
    http: { maxHeaderSize: options.maxHeaderBytes + 1, connectionsCheckingInterval: Math.min(1000, options.requestTimeoutMs), ServerResponse: TimedResponse },
    trustProxy: options.trustProxy,
    // Draining is answered by our own hook, as problem+json.
    return503OnClosing: false,
    clientErrorHandler: metrics === undefined ? answerClientError : (error, socket) => metrics.clientError(answerClientError(error, socket)),
    // Errors the router raises (a malformed URL, an over-long path segment) become problem+json too.
    frameworkErrors: (error, request, reply) => {
      const started = performance.now();
      reply.header('x-request-id', request.id);
      sendProblem(reply, request, toRestgraphError(error));
      // Fastify tells no log controller of these: they are logged and counted here, as matching no route.
      const elapsedMs = performance.now() - started;
      writeAccessLine(request.id, request.method, request.url, reply.statusCode, elapsedMs);
      metrics?.requests.record(undefined, request.method, reply.statusCode, elapsedMs);
    },
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  });

  // Fastify's instance-level logs (and ours, through app.log) go to our logger too.
  app.log = logger;
  const deadlines = new ResponseDeadlines(options.responseTimeoutMs, (request, reply) => answerServerTimeout(app.log, options.responseTimeoutMs, request, reply));
  const report = requestReporter(writeAccessLine, metrics?.requests);

  let draining = false;
  let closeIdleTimer: NodeJS.Timeout | undefined;
  const unusedConnections = new UnusedConnections(app.server);
  /** Ends the connections no request is using: idle keep-alive ones, and those not used yet. */
  const closeIdleConnections = (): void => {
    app.server.closeIdleConnections();
    unusedConnections.close();
  };
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('routePattern', undefined);
  app.decorate('startDraining', () => {
    draining = true;
    // Keep-alive connections become idle as their last response goes out; close them as they do,
    // so close() ends when the in-flight requests do, at no cost to requests in normal operation.
    closeIdleTimer ??= setInterval(closeIdleConnections, 50);
    closeIdleTimer.unref();
  });
  // close() drains as a SIGTERM does: Fastify closes the connections idle at that moment once, and
  // a keep-alive connection whose response was still going out (the last bytes of a streamed file
  // sent, its end not yet) went idle just after, and held close() for the keep-alive timeout (72 s).
  app.addHook('preClose', (done) => {
    app.startDraining();
    done();
  });
  app.decorate('flushLogs', (callback: () => void) => {
    pinoLogger.flush(() => callback());
  });
  app.decorate('logNow', (level: 'error' | 'fatal', details: Record<string, unknown>, message: string) => {
    pinoLogger[level](details, message);
    // The batched destination writes synchronously when flushed.
    pinoLogger.flush();
  });

  const limitRequest = rateLimits === undefined ? undefined : requestRateLimiter(rateLimits);
  /** Sets the request's principal and counts it against its quotas, then lets it through (or not). */
  const admit = (request: FastifyRequest, reply: FastifyReply, principal: Principal, done: (error?: Error) => void): void => {
    request.principal = principal;
    if (limitRequest === undefined) {
      done();
      return;
    }
    let pending: Promise<void> | undefined;
    try {
      pending = limitRequest(request, reply, principal);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (pending === undefined) done();
    else pending.then(() => done(), (error: unknown) => done(error as Error));
  };
  /**
   * A credential that failed still counts against its address's anonymous quota, so guessing
   * tokens is rate-limited too; the client sees the 401 (or the 429, once the quota is used up).
   */
  const refuse = (request: FastifyRequest, reply: FastifyReply, authError: unknown, done: (error?: Error) => void): void => {
    request.principal = ANONYMOUS;
    if (limitRequest === undefined) {
      done(authError as Error);
      return;
    }
    admit(request, reply, ANONYMOUS, (limitError) => done(limitError ?? (authError as Error)));
  };

  // One onRequest hook for everything every request needs (each hook has a cost of its own):
  // request id, CORS, connection handling while draining, authentication.
  const applyCors = corsHeaders(options.cors);
  const maxUrlLength = options.maxUrlLength;
  app.addHook('onRequest', (request, reply, done) => {
    deadlines.begin(request, reply);
    reply.header('x-request-id', request.id);
    if (request.url.length > maxUrlLength) {
      done(new UriTooLongError(`The URL is ${request.url.length} bytes long; this server accepts at most ${maxUrlLength}.`));
      return;
    }
    if (applyCors !== undefined && request.headers.origin !== undefined) applyCors(request, reply);
    // While draining, requests still arriving on open connections are served, and their
    // connections closed after the response; /readyz already tells load balancers to go elsewhere.
    if (draining) reply.header('connection', 'close');
    // An upgrade request that gets an HTTP answer (refused, or to a path without WebSockets) has
    // its connection closed after it: nothing else would.
    if (request.headers.upgrade !== undefined) reply.raw.once('finish', () => request.raw.socket.destroy());
    const header = request.headers.authorization;
    // Health probes are answered whatever credential they carry (a stale one must not fail them).
    if (header === undefined || isHealthProbe(request.url)) {
      admit(request, reply, ANONYMOUS, done);
      return;
    }
    let known: Principal | undefined;
    try {
      known = authenticator.authenticateCached(header);
    } catch (error) {
      refuse(request, reply, error, done);
      return;
    }
    if (known !== undefined) {
      admit(request, reply, known, done);
      return;
    }
    authenticator.authenticate(header).then(
      (principal) => admit(request, reply, principal, done),
      (error: unknown) => refuse(request, reply, error, done),
    );
  });

  // Once a response has gone out: its request's access line and metrics, timed from the first
  // hook (Fastify starts reply.elapsedTime just before it), and its deadline no longer runs.
  app.addHook('onResponse', (request, reply, done) => {
    deadlines.end(request, reply.raw);
    report(request, reply.statusCode, reply.elapsedTime);
    done();
  });

  // Responses leave together at the end of each event-loop turn (see ResponseBatches).
  const batches = new ResponseBatches(MAX_HELD_RESPONSES, (reply, error) => {
    app.log.error({ requestId: reply.request.id, err: error }, 'response could not be written');
    answerUnsendable(reply);
  });
  app.decorateReply('sendHeld', false);
  app.addHook('onSend', (_request, reply, payload, done) => batches.hold(reply, payload, done));

  registerProblemHandlers(app, lingerLimits(options.requestTimeoutMs));
  registerBodyParsers(app);
  registerCorsPreflight(app, options.cors);

  // Node swaps headersTimeout (60 s) and requestTimeout when the first is larger, which would make
  // the request timeout limit headers only: keep headersTimeout within it, and check every second.
  app.server.headersTimeout = Math.min(options.requestTimeoutMs, 60_000);
  app.server.requestTimeout = options.requestTimeoutMs;
  lifecycle.add(() => {
    deadlines.close();
    clearInterval(closeIdleTimer);
  });
  return { app, isDraining: () => draining, closeUnusedConnections: () => unusedConnections.close() };
}
