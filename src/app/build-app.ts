import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Authenticator } from '../auth/authenticator.js';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import { ResourceOperations } from '../core/resource-operations.js';
import { TokenOperations } from '../core/token-operations.js';
import { registerTokenRoutes } from '../rest/token-routes.js';
import { registerGraphqlRoutes } from '../graphql/graphql-routes.js';
import { GraphqlService } from '../graphql/graphql-service.js';
import { ApiKeyStore } from '../store/api-key-store.js';
import { RecordValidator } from '../core/record-validator.js';
import { registerBodyParsers } from '../http/content-negotiation.js';
import { corsHeaders, registerCorsPreflight } from '../http/cors.js';
import { answerClientError, answerUnsendable, registerProblemHandlers, sendProblem, toRestgraphError } from '../http/problem-details.js';
import { registerResourceRoutes } from '../rest/resource-routes.js';
import { lingerLimits } from '../http/lingering-close.js';
import { registerSystemRoutes } from '../rest/system-routes.js';
import { registerFavicon } from '../http/favicon.js';
import { registerOpenApiRoutes } from '../rest/openapi-routes.js';
import { EXAMPLE_SCHEMA_PATH, loadSchemaFile } from '../schema/load-schema.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { resourcesIn } from '../schema/version-view.js';
import { IdempotencyStore } from '../store/idempotency-store.js';
import { migrateToSchema } from '../store/migrate.js';
import { openDatabase } from '../store/open-database.js';
import { RecordStore } from '../store/record-store.js';
import { EventStore } from '../store/event-store.js';
import { EventDispatcher } from '../core/event-dispatcher.js';
import { registerEventStreamRoutes } from '../rest/event-stream-routes.js';
import { registerWebhookRoutes } from '../rest/webhook-routes.js';
import { WebhookStore } from '../store/webhook-store.js';
import { WebhookService } from '../webhooks/webhook-service.js';
import { createAppLogging } from './app-logging.js';
import { checkAdminAccess, listeningAddress } from './admin-access.js';
import { requestReporter } from './access-log.js';
import { RequestCompletions } from './request-completions.js';
import { UnusedConnections } from './unused-connections.js';
import { createRateLimits } from './rate-limit-setup.js';
import type { RateLimits } from '../core/rate-limits.js';
import { requestRateLimiter } from '../rest/rate-limit-hook.js';
import { resolveOptions, type ResolvedOptions, type RestgraphOptions } from './app-options.js';
import { AppMetrics, METRICS_CONTENT_TYPE } from './app-metrics.js';
import { registerMetricsRoute } from '../rest/metrics-routes.js';
import { UriTooLongError } from '../errors.js';
import { answerServerTimeout, ResponseDeadlines, TimedResponse } from './response-deadlines.js';
import { warmTickQueue } from './tick-queue-warm-up.js';
import { requestIds } from './request-ids.js';
import type { WorkerLog } from '../retry-backoff.js';
import { ResponseBatches } from './response-batches.js';

/**
 * The most responses held for the end of an event-loop turn (see ResponseBatches). On a simple
 * read, 16 gave 1.7 times the throughput of none, as many as 32 or no limit did; 4 and 8 gave
 * 1.3 and 1.4 times.
 */
const MAX_HELD_RESPONSES = 16;

/** What a built app holds besides its routes: for adapters added later, the CLI and tests. */
export interface RestgraphContext {
  options: Readonly<ResolvedOptions>;
  /** The one event path: outbox reader feeding streams (and later subscriptions and webhooks). */
  events: EventDispatcher;
  graphql: GraphqlService;
  schema: SchemaModel;
  operations: ResourceOperations;
  tokens: TokenOperations;
  authenticator: Authenticator;
  /** Where the data lives, for log lines (no credentials). */
  databaseDescription: string;
  /**
   * Resolves once the server, listening, has made sure the operator can get in (the first admin
   * key, or how to make one: see checkAdminAccess). Started by listen().
   */
  adminAccessChecked: () => Promise<void>;
}

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
    restgraph: RestgraphContext;
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
const IDEMPOTENCY_PRUNE_INTERVAL_MS = 60 * 60 * 1000; // 1 h

/**
 * Builds the whole application (schema, database, migrations, routes) without listening, so tests
 * can use `app.inject()`. Call `listen()` to serve, `close()` to drain and release the database.
 *
 * @throws SchemaError, ConfigError, DestructiveMigrationError, MigrationFailedError at start-up.
 */
export async function buildApp(input: RestgraphOptions = {}): Promise<FastifyInstance> {
  const options = resolveOptions(input);
  // Before start-up allocates: see tick-queue-warm-up.ts (13 % of a simple read's throughput).
  await warmTickQueue();
  const schema = typeof options.schema === 'object' ? options.schema : loadSchemaFile(options.schema ?? EXAMPLE_SCHEMA_PATH);
  const bounds = options.database;
  const { db, rules, description } = await openDatabase(options.databaseUrl, {
    ...(options.onSqlStatement === undefined ? {} : { onStatement: options.onSqlStatement }),
    postgres: { connectMs: bounds.connectTimeoutMs, statementMs: bounds.statementTimeoutMs, idleInTransactionMs: bounds.idleInTransactionTimeoutMs, queryMs: bounds.queryTimeoutMs },
    sqlite: { lockTimeoutMs: bounds.sqliteLockTimeoutMs, synchronous: bounds.sqliteSynchronous },
  });
  try {
    await migrateToSchema(db, rules, schema, { allowDestructive: options.allowDestructiveMigrations });
  } catch (error) {
    await db.close();
    throw error;
  }

  let rateLimits: RateLimits | undefined;
  try {
    rateLimits = await createRateLimits(options.rateLimits, schema, db);
  } catch (error) {
    await db.close();
    throw error;
  }

  const store = new RecordStore(db, rules);
  const eventStore = new EventStore(db);
  const dispatcher = new EventDispatcher(eventStore, schema, { pollIntervalMs: options.events.pollIntervalMs, maxLag: options.events.maxLag, maxPausedMs: options.events.maxPausedMs });
  const operations = new ResourceOperations({
    schema,
    db,
    store,
    validator: new RecordValidator(schema.resources.values()),
    limits: { maxEmbedded: options.maxEmbedded },
    events: eventStore,
    onEventsCommitted: (events) => dispatcher.committed(events),
  });
  const idempotency = new IdempotencyStore(db, { ttlMs: options.idempotencyTtlMs, abandonAfterMs: options.idempotencyClaimTimeoutMs });
  const apiKeys = new ApiKeyStore(db);
  const tokens = new TokenOperations(apiKeys);
  let authenticator: Authenticator;
  try {
    authenticator = new Authenticator(apiKeys, {
      ...(options.adminToken === undefined ? {} : { adminToken: options.adminToken }),
      ...(options.jwt === undefined ? {} : { jwt: options.jwt }),
      apiKeyCacheMs: options.apiKeyCacheMs,
      onBackgroundError: (error) => app.log.warn({ err: error }, 'recording API key use failed'),
    });
  } catch (error) {
    await rateLimits?.limiter.close();
    await db.close();
    throw error;
  }

  const { logger: pinoLogger, writeAccessLine, stop: stopLogFlushes } = createAppLogging(options.logLevel, options.logDestination);
  const logger: FastifyBaseLogger = pinoLogger;

  const newRequestId = requestIds();
  const metrics = options.metrics.enabled ? new AppMetrics({ processMetrics: options.metrics.processMetrics }) : undefined;
  const app = Fastify({
    // Fastify gets no logger of its own: with one it adds and removes two listeners per response
    // to time it, and a child logger factory of ours it checks on every request (7 method lookups).
    // So request.log is Fastify's null logger; everything restgraph logs goes through app.log
    // (ours, below) with the request id written explicitly, and RequestCompletions writes the
    // one access line per request, when the response has gone out. (What Fastify would log per
    // request on its own is off anyway: disableRequestLogging.)
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
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newRequestId();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  });

  // Fastify's instance-level logs (and ours, through app.log) go to our logger too.
  app.log = logger;
  const deadlines = new ResponseDeadlines(options.responseTimeoutMs, (request, reply) => answerServerTimeout(app.log, options.responseTimeoutMs, request, reply));
  const report = requestReporter(writeAccessLine, metrics?.requests);
  const completions = new RequestCompletions(app.server, (request, response, statusCode, elapsedMs) => {
    deadlines.end(request, response);
    report(request, response, statusCode, elapsedMs);
  });

  let draining = false;
  let closeIdleTimer: NodeJS.Timeout | undefined;
  const unusedConnections = new UnusedConnections(app.server);
  /** Ends the connections no request is using: idle keep-alive ones, and those not used yet. */
  const closeIdleConnections = (): void => {
    app.server.closeIdleConnections();
    unusedConnections.close();
  };
  const graphql = new GraphqlService(schema, operations, {
    events: dispatcher,
    limits: options.graphql,
    listLimits: options.listLimits,
    documentCacheBytes: options.graphql.documentCacheBytes,
    persistedQueryCacheBytes: options.graphql.persistedQueryCacheBytes,
    logUnexpected: (error) => app.log.error({ err: error }, 'GraphQL resolver failed'),
    ...(rateLimits === undefined ? {} : { rateLimits }),
  });
  app.decorate('restgraph', {
    options,
    events: dispatcher,
    schema,
    operations,
    graphql,
    tokens,
    authenticator,
    databaseDescription: description,
    adminAccessChecked: () => Promise.resolve(),
  });
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('routePattern', undefined);
  app.decorate('startDraining', () => {
    draining = true;
    // Keep-alive connections become idle as their last response goes out; close them as they do,
    // so close() ends when the in-flight requests do, at no cost to requests in normal operation.
    closeIdleTimer ??= setInterval(closeIdleConnections, 50);
    closeIdleTimer.unref();
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
    completions.begin(request, reply);
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
  registerSystemRoutes(app, schema, db, () => draining);
  registerFavicon(app);
  if (metrics !== undefined) registerMetricsRoute(app, { exposition: () => metrics.exposition(), contentType: METRICS_CONTENT_TYPE, public: options.metrics.public });
  registerOpenApiRoutes(app, schema, options);
  const routeOptions = { operations, idempotency, listLimits: options.listLimits };
  // Unversioned paths serve the latest version; each version serves the resources it has.
  for (const [prefix, version] of [['', schema.latestVersion], ...schema.versions.map((v) => [`/${v}`, v])] as const) {
    for (const resource of resourcesIn(schema, version)) registerResourceRoutes(app, routeOptions, resource, prefix, version);
  }
  // A key revoked here stops working here at once; other instances within the cache time.
  registerTokenRoutes(app, tokens, (id) => authenticator.forgetApiKey(id));
  // Background work that loses the database says so once (and once a minute while it lasts), retries with backoff, and says when it works again.
  const workerLog: WorkerLog = {
    failing: (error, message) => app.log.error({ err: error }, message),
    recovered: (message) => app.log.info(message),
  };
  const webhookStore = new WebhookStore(db);
  const webhooks = new WebhookService(
    webhookStore,
    dispatcher,
    schema,
    options.webhooks,
    { ...workerLog, notice: (message) => app.log.warn(message) },
    metrics?.webhookOutcome,
  );
  metrics?.watch({ db, outbox: eventStore, dispatcher, webhooks: webhookStore });
  registerWebhookRoutes(app, webhooks);
  registerEventStreamRoutes(app, schema, dispatcher, {
    heartbeatMs: options.events.heartbeatMs,
    reconnectDelayMs: options.events.reconnectDelayMs,
    reauthenticate: (header) => authenticator.authenticate(header),
    openStreams: metrics?.openStreams('event-stream'),
  });
  registerGraphqlRoutes(app, graphql, {
    getMaxAgeSeconds: options.graphql.getMaxAgeSeconds,
    publishSchema: options.graphql.introspection,
    authenticate: (header) => authenticator.authenticate(header),
    maxSubscriptionsPerConnection: options.graphql.maxSubscriptionsPerConnection,
    // Subscriptions re-check their credential as often as /v1/events streams do.
    recheckCredentialMs: options.events.heartbeatMs,
    maxMessageBytes: options.graphql.maxWebSocketMessageBytes,
    openStreams: metrics === undefined ? undefined : { webSocket: metrics.openStreams('graphql-ws'), sse: metrics.openStreams('graphql-sse') },
  });

  // Once listening (and only then: a server that cannot listen must not have made a key nobody saw).
  let adminAccess: Promise<void> | undefined;
  const adminAccessChecked = (): Promise<void> =>
    (adminAccess ??= checkAdminAccess(listeningAddress(app.server.address()), { apiKeys, schema, options, databaseDescription: description, logger: pinoLogger }));
  app.restgraph.adminAccessChecked = adminAccessChecked;
  app.addHook('onListen', (done) => {
    adminAccessChecked().catch((error: unknown) => app.log.error({ err: error }, 'checking for an admin API key failed'));
    done();
  });

  const prune = async (): Promise<void> => {
    const before = new Date(Date.now() - options.events.retentionMs).toISOString();
    await Promise.all([
      idempotency.prune().catch((error: unknown) => app.log.warn({ err: error }, 'pruning idempotency keys failed')),
      eventStore.prune(before).catch((error: unknown) => app.log.warn({ err: error }, 'pruning events failed')),
      // Finished webhook deliveries (and their attempt logs) are kept as long as events.
      webhookStore.pruneFinished(before).catch((error: unknown) => app.log.warn({ err: error }, 'pruning webhook deliveries failed')),
    ]);
  };
  const pruneTimer = setInterval(() => void prune(), IDEMPOTENCY_PRUNE_INTERVAL_MS);
  pruneTimer.unref();
  // What is past its retention is gone before the first request is served.
  app.addHook('onReady', prune);
  // Node swaps headersTimeout (60 s) and requestTimeout when the first is larger, which would make
  // the request timeout limit headers only: keep headersTimeout within it, and check every second.
  app.server.headersTimeout = Math.min(options.requestTimeoutMs, 60_000);
  app.server.requestTimeout = options.requestTimeoutMs;

  await dispatcher.start(workerLog);
  await webhooks.start();
  // Event streams never end by themselves: end them first, so close() can finish. In a scope of
  // its own, registered last: Fastify runs a scope's preClose hooks after those of the scopes
  // registered before it, so the GraphQL transports close their connections first (clients see
  // the server go away and reconnect, rather than a completed subscription).
  void app.register((scope, _options, done) => {
    scope.addHook('preClose', async () => {
      await webhooks.stop();
      dispatcher.stop();
      // Fastify closes the idle keep-alive connections next; connections not used yet are ours to end.
      unusedConnections.close();
    });
    done();
  });
  app.addHook('onClose', async () => {
    completions.close();
    deadlines.close();
    clearInterval(pruneTimer);
    stopLogFlushes();
    clearInterval(closeIdleTimer);
    await rateLimits?.limiter.close();
    await db.close();
  });
  return app;
}
