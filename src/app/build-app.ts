import type { FastifyInstance } from 'fastify';
import { apiKeyCredentialId, Authenticator } from '../auth/authenticator.js';
import { StreamCredentials } from '../auth/credential-recheck.js';
import { OidcSignIn } from '../auth/oidc-sign-in.js';
import type { SignInWithIdentity } from '../auth/oidc-settings.js';
import { ConfigError } from '../errors.js';
import { filterLimitsOf } from '../core/list-query.js';
import { EventDispatcher } from '../core/event-dispatcher.js';
import { ADMIN_SCOPE } from '../core/principal.js';
import { RecordValidator } from '../core/record-validator.js';
import { ResourceOperations } from '../core/resource-operations.js';
import { TokenOperations } from '../core/token-operations.js';
import type { AccountEmails } from '../core/accounts/account-emails.js';
import type { AccountOperations } from '../core/accounts/account-operations.js';
import { registerGraphqlRoutes } from '../graphql/graphql-routes.js';
import { graphqlUploads } from '../graphql/graphql-multipart.js';
import { GraphqlService } from '../graphql/graphql-service.js';
import { registerFavicon } from '../http/favicon.js';
import { ADMIN_CONSOLE_BUILD, registerAdminConsoleRoutes } from '../rest/admin-console-routes.js';
import { registerEventStreamRoutes } from '../rest/event-stream-routes.js';
import { registerMetricsRoute } from '../rest/metrics-routes.js';
import { registerOpenApiRoutes } from '../rest/openapi-routes.js';
import { registerAuthRoutes } from '../rest/auth-routes.js';
import { registerOidcRoutes } from '../rest/oidc-routes.js';
import { registerResourceRoutes } from '../rest/resource-routes.js';
import { connectionRateLimiter } from '../rest/rate-limit-hook.js';
import { nativeQueryStyle } from '../rest/query-style.js';
import { jsonServerQueryStyle } from '../rest/json-server-compat.js';
import { registerJsonServerDbRoute } from '../rest/json-server-db-route.js';
import { registerSystemRoutes } from '../rest/system-routes.js';
import { registerTokenRoutes } from '../rest/token-routes.js';
import { registerWebhookRoutes } from '../rest/webhook-routes.js';
import type { WorkerLog } from '../retry-backoff.js';
import { EXAMPLE_SCHEMA_PATH, loadSchemaFile } from '../schema/load-schema.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { resourcesIn } from '../schema/version-view.js';
import { WebhookService } from '../webhooks/webhook-service.js';
import { setUpAccountAdministration, setUpAccountEmails, setUpAccounts, signInWithAccounts } from './account-setup.js';
import { registerAccountRoutes } from '../rest/account-routes.js';
import { registerAccountAdminRoutes } from '../rest/account-admin-routes.js';
import { checkAdminAccess, listeningAddress, tokenCommands } from './admin-access.js';
import { createAppLogging } from './app-logging.js';
import type { StartBanner } from './terminal-text.js';
import { AppMetrics, METRICS_CONTENT_TYPE } from './app-metrics.js';
import { resolveOptions, type ResolvedOptions, type RestgraphOptions } from './app-options.js';
import { startCaptureRelay } from './capture-work.js';
import { startEventWork } from './event-work.js';
import { createHttpServer } from './http-server.js';
import { Lifecycle } from './lifecycle.js';
import { logSchemaChanges } from './schema-change-log.js';
import { openStorage } from './storage.js';
import { caseFoldedFields } from '../schema/identifier-case.js';
import { checkIdentifierCase } from './identifier-case-check.js';
import { setUpFiles } from './file-setup.js';
import type { FileWorkLog } from '../core/file-fields.js';
import { registerFileRoutes } from '../rest/file-routes.js';
import { registerMultipart } from '../http/multipart-bodies.js';

/** What a built app holds besides its routes: for the CLI, tests and embedding code. */
export interface RestgraphContext {
  options: Readonly<ResolvedOptions>;
  /** The one event path: the outbox reader feeding /v1/events, GraphQL subscriptions and webhooks. */
  events: EventDispatcher;
  graphql: GraphqlService;
  schema: SchemaModel;
  operations: ResourceOperations;
  tokens: TokenOperations;
  /** End-user accounts, when the schema has them (docs/accounts.md): what email and sign-in flows build on. */
  accounts: AccountOperations | undefined;
  /** Email verification and password reset of those accounts (docs/accounts.md). */
  accountEmails: AccountEmails | undefined;
  authenticator: Authenticator;
  /** Where the data lives, for log lines (no credentials). */
  databaseDescription: string;
  /**
   * Resolves once the server, listening, has made sure the operator can get in (the first admin
   * key, or how to make one: see checkAdminAccess). Started by listen().
   */
  adminAccessChecked: () => Promise<void>;
  /**
   * Shows the start banner when the log is for a person at a terminal (RESTGRAPH_LOG_FORMAT,
   * pretty-log.ts); false when it is JSON lines (then the caller logs its own line).
   */
  showStartBanner: (banner: StartBanner) => boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    restgraph: RestgraphContext;
  }
}

/**
 * Builds the whole application (schema, database, migrations, routes) without listening, so tests
 * can use `app.inject()`. Call `listen()` to serve, `close()` to drain and release the database.
 *
 * Composed of units that each start one part and register how to undo it with one Lifecycle: the
 * storage (database, migrations, rate-limit counters), the core operations, the HTTP server, the
 * routes of REST, GraphQL, events, webhooks, metrics and docs, and the background event work.
 * When a part fails to start, what started before it is closed; `close()` closes it all.
 *
 * @throws SchemaError, ConfigError, DestructiveMigrationError, MigrationFailedError at start-up.
 */
export async function buildApp(input: RestgraphOptions = {}): Promise<FastifyInstance> {
  const options = resolveOptions(input);
  const schema = typeof options.schema === 'object' ? options.schema : loadSchemaFile(options.schema ?? EXAMPLE_SCHEMA_PATH);
  const lifecycle = new Lifecycle();
  try {
    const app = await composeApp(options, schema, lifecycle);
    app.addHook('onClose', () => lifecycle.close());
    return app;
  } catch (error) {
    await lifecycle.close().catch(() => undefined);
    throw error;
  }
}

async function composeApp(options: ResolvedOptions, schema: SchemaModel, lifecycle: Lifecycle): Promise<FastifyInstance> {
  const storage = await openStorage(options, schema, lifecycle);
  const { db } = storage;

  // The core, over the storage.
  const dispatcher = new EventDispatcher(storage.events, schema, { pollIntervalMs: options.events.pollIntervalMs, maxLag: options.events.maxLag, maxPausedMs: options.events.maxPausedMs, ...(options.events.maxLagReading === undefined ? {} : { maxLagReading: options.events.maxLagReading }) });
  // File work logs through the app's logger, made below with the HTTP server.
  const fileLog: { current?: FileWorkLog } = {};
  const files = await setUpFiles(options, schema, () => fileLog.current ?? { warn: () => undefined, info: () => undefined }, lifecycle);
  const operations = new ResourceOperations({
    schema,
    db,
    store: storage.records,
    validator: new RecordValidator(schema.resources.values(), caseFoldedFields(schema)),
    limits: { maxEmbedded: options.maxEmbedded },
    events: storage.events,
    onEventsCommitted:
      files === undefined
        ? (events) => dispatcher.committed(events)
        : (events) => {
            files.cleanup.committed(events);
            dispatcher.committed(events);
          },
  });
  const tokens = new TokenOperations(storage.apiKeys);
  const accountSetup = await setUpAccounts(schema, storage, options, operations, lifecycle);
  const signInWithIdentity = oidcSignInWithIdentity(options, accountSetup?.accounts);
  const logging = createAppLogging(options.logLevel, options.logDestination, options.logFormat);
  lifecycle.add(logging.stop);
  const accountEmails = accountSetup === undefined ? undefined : setUpAccountEmails(accountSetup, storage, options, logging.logger, lifecycle);
  logSchemaChanges(logging.logger, storage.schemaChanges, storage.description);
  for (const warning of storage.warnings) logging.logger.warn(warning);
  await checkIdentifierCase(schema, db, logging.logger);
  const authenticator = new Authenticator(storage.apiKeys, {
    ...(options.adminToken === undefined ? {} : { adminToken: options.adminToken }),
    ...(options.jwt === undefined ? {} : { jwt: options.jwt }),
    apiKeyCacheMs: options.apiKeyCacheMs,
    onBackgroundError: (error) => logging.logger.warn({ err: error }, 'recording API key use failed'),
    ...(accountSetup === undefined ? {} : { accountTokens: accountSetup.accessTokens }),
  });

  // HTTP.
  const metrics = options.metrics.enabled ? new AppMetrics({ processMetrics: options.metrics.processMetrics }) : undefined;
  const http = createHttpServer(options, { logging, authenticator, rateLimits: storage.rateLimits, metrics }, lifecycle);
  const { app } = http;
  fileLog.current = { warn: (details, message) => app.log.warn(details, message), info: (details, message) => app.log.info(details, message) };
  // Background work that loses the database says so once (and once a minute while it lasts), retries with backoff, and says when it works again.
  const workerLog: WorkerLog = {
    failing: (error, message) => app.log.error({ err: error }, message),
    recovered: (message) => app.log.info(message),
  };
  // The credentials of open streams: a revoked key's streams end at once when it is revoked here,
  // within streamCredentialCheckMs when it is revoked anywhere else.
  const streamCredentials = new StreamCredentials(authenticator, options.streamCredentialCheckMs, (error) => app.log.error({ err: error }, 'checking the credentials of open streams failed'));
  lifecycle.add(() => streamCredentials.close());
  const watchCredential = streamCredentials.watch.bind(streamCredentials);
  const graphql = new GraphqlService(schema, operations, {
    events: dispatcher,
    ...(accountSetup === undefined ? {} : { accounts: accountSetup.accounts }),
    ...(accountEmails === undefined ? {} : { accountEmails }),
    limits: options.graphql,
    listLimits: options.listLimits,
    documentCacheBytes: options.graphql.documentCacheBytes,
    persistedQueryCacheBytes: options.graphql.persistedQueryCacheBytes,
    logUnexpected: (error) => app.log.error({ err: error }, 'GraphQL resolver failed'),
    subscriptionQueue: { perConnection: options.events.maxQueuedBytesPerConnection, total: options.events.maxQueuedBytes },
    ...(storage.rateLimits === undefined ? {} : { rateLimits: storage.rateLimits }),
  });
  const webhooks = new WebhookService(storage.webhooks, dispatcher, schema, options.webhooks, { ...workerLog, notice: (message) => app.log.warn(message) }, metrics?.webhookOutcome);
  metrics?.watch({ db, outbox: storage.events, dispatcher, webhooks: storage.webhooks, subscriptionGroups: graphql.subscriptions });
  app.decorate('restgraph', {
    options,
    events: dispatcher,
    schema,
    operations,
    graphql,
    tokens,
    accounts: accountSetup?.accounts,
    accountEmails,
    authenticator,
    databaseDescription: storage.description,
    adminAccessChecked: () => Promise.resolve(),
    showStartBanner: (banner) => {
      logging.showStartBanner?.(banner);
      return logging.showStartBanner !== undefined;
    },
  });

  // Routes: system, docs and the admin console, REST, tokens and webhooks, the event stream, GraphQL.
  // Before any route: other write routes keep refusing multipart bodies (415).
  if (files !== undefined) await registerMultipart(app);
  registerSystemRoutes(app, schema, db, http.isDraining);
  registerFavicon(app);
  if (metrics !== undefined) registerMetricsRoute(app, { exposition: () => metrics.exposition(), contentType: METRICS_CONTENT_TYPE, public: options.metrics.public });
  registerOpenApiRoutes(app, schema, options);
  // The sign-in page's hint: the command that makes an admin key in this server's database.
  registerAdminConsoleRoutes(app, ADMIN_CONSOLE_BUILD, {
    local: tokenCommands(options, storage.description).create([ADMIN_SCOPE]),
    remote: tokenCommands(options, '<database URL>').create([ADMIN_SCOPE]),
  });
  const queryStyle = options.compat === 'json-server' ? jsonServerQueryStyle(schema, options.listLimits) : nativeQueryStyle(options.listLimits, schema);
  const routeOptions = { operations, idempotency: storage.idempotency, queryStyle, listLimits: options.listLimits, ...(files === undefined ? {} : { files: files.storage, rateLimits: storage.rateLimits }) };
  // Unversioned paths serve the latest version; each version serves the resources it has.
  for (const [prefix, version] of [['', schema.latestVersion], ...schema.versions.map((v) => [`/${v}`, v])] as const) {
    for (const resource of resourcesIn(schema, version)) {
      registerResourceRoutes(app, routeOptions, resource, prefix, version);
      if (files !== undefined) await registerFileRoutes(app, { operations, storage: files.storage, rateLimits: storage.rateLimits, downloads: files.downloads }, resource, prefix, version);
    }
    if (options.compat === 'json-server') registerJsonServerDbRoute(app, operations, options.listLimits, prefix, version);
  }
  // A key revoked here stops working here at once, its open streams included; other instances
  // refuse its requests within the cache time and end its streams at their next stream check.
  registerTokenRoutes(app, tokens, (id) => {
    authenticator.forgetApiKey(id);
    streamCredentials.endCredential(apiKeyCredentialId(id));
  });
  // Likewise an account's sessions ended here: its access tokens and streams, at once here.
  accountSetup?.states.onSessionsEnded((recordId) => {
    authenticator.forgetAccount(String(recordId));
    streamCredentials.endCredential(`account:${recordId}`);
  });
  registerWebhookRoutes(app, webhooks);
  registerAuthRoutes(app, schema, accountSetup?.accounts);
  if (accountSetup !== undefined) {
    registerAccountRoutes(app, accountSetup.accounts, accountSetup.keys, accountEmails);
    registerAccountAdminRoutes(app, setUpAccountAdministration(accountSetup, storage, accountEmails));
  }
  if (signInWithIdentity !== undefined) registerOidcRoutes(app, { signIn: new OidcSignIn(options.oidc), signInWithIdentity, redirectUrl: options.oidc.redirectUrl });
  registerEventStreamRoutes(app, schema, dispatcher, {
    heartbeatMs: options.events.heartbeatMs,
    reconnectDelayMs: options.events.reconnectDelayMs,
    watchCredential,
    openStreams: metrics?.openStreams('event-stream'),
    filterLimits: filterLimitsOf(options.listLimits),
  });
  registerGraphqlRoutes(app, graphql, {
    getMaxAgeSeconds: options.graphql.getMaxAgeSeconds,
    publishSchema: options.graphql.introspection,
    authenticate: (header) => authenticator.authenticate(header),
    maxSubscriptionsPerConnection: options.graphql.maxSubscriptionsPerConnection,
    watchCredential,
    countConnection: storage.rateLimits === undefined ? undefined : connectionRateLimiter(storage.rateLimits),
    maxMessageBytes: options.graphql.maxWebSocketMessageBytes,
    openStreams: metrics === undefined ? undefined : { webSocket: metrics.openStreams('graphql-ws'), sse: metrics.openStreams('graphql-sse') },
    uploads: files === undefined ? undefined : graphqlUploads(schema, files.storage, operations, options.bodyLimitBytes, storage.rateLimits),
  });

  // Once listening (and only then: a server that cannot listen must not have made a key nobody saw).
  let adminAccess: Promise<void> | undefined;
  const adminAccessChecked = (): Promise<void> =>
    (adminAccess ??= checkAdminAccess(listeningAddress(app.server.address()), { apiKeys: storage.apiKeys, schema, options, databaseDescription: storage.description, logger: logging.logger, showFirstKey: logging.showFirstKey }));
  app.restgraph.adminAccessChecked = adminAccessChecked;
  app.addHook('onListen', (done) => {
    adminAccessChecked().catch((error: unknown) => app.log.error({ err: error }, 'checking for an admin API key failed'));
    done();
  });

  files?.startSweeps(storage.records, fileLog.current);
  await startEventWork(app, { options, storage, dispatcher, webhooks, workerLog, closeUnusedConnections: http.closeUnusedConnections }, lifecycle);
  // A mapped database: other programs' writes, as restgraph capture records them, become events too.
  await startCaptureRelay(schema, { options, storage, dispatcher, workerLog }, lifecycle);
  return app;
}

/**
 * What signs in the identities OpenID Connect providers vouch for, when providers are configured
 * (undefined when none is). It must be given: a sign-in with nothing to sign in to is a mistake
 * said at start-up.
 */
function oidcSignInWithIdentity(options: ResolvedOptions, accounts: AccountOperations | undefined): SignInWithIdentity | undefined {
  const [first] = Object.keys(options.oidc.providers);
  if (first === undefined) return undefined;
  if (options.oidc.signInWithIdentity !== undefined) return options.oidc.signInWithIdentity;
  // The schema's accounts: the identity's verified email finds or makes the account.
  if (accounts !== undefined) return signInWithAccounts(accounts);
  throw new ConfigError(`RESTGRAPH_OIDC_${first.toUpperCase()}_ISSUER`, 'OpenID Connect sign-in needs accounts to sign identities in to, and this server has none');
}
