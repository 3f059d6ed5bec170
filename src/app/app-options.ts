import type { JwtOptions } from '../auth/authenticator.js';
import { checkOidcOptions, DEFAULT_OIDC_OPTIONS, type OidcOptions } from '../auth/oidc-settings.js';
import type { ListLimits } from '../core/list-query.js';
import type { GraphqlLimits } from '../graphql/query-limits.js';
import type { WebhookOptions } from '../webhooks/webhook-service.js';
import type { MailOptions } from '../mail/create-mailer.js';
import { DEFAULT_FILE_OPTIONS, type FileOptions } from '../files/create-file-storage.js';
import type { CorsOptions } from '../http/cors.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { compatMode, type CompatMode } from '../rest/json-server-compat.js';
import { defaultDatabaseUrl, LEGACY_DATABASE_URL } from './default-database.js';
import type { RateLimitOptions } from './rate-limit-options.js';
import type { LogFormat } from './pretty-log.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Everything {@link buildApp} can be told. Every field is optional; see {@link DEFAULT_OPTIONS}. */
export interface RestgraphOptions {
  /** The schema: a file path (YAML or JSON) or an already compiled model. @default the built-in example */
  schema?: string | SchemaModel;
  /**
   * `sqlite:<file>`, `sqlite::memory:` or `postgres://…`. @default a SQLite file in ./data named
   * after the schema file (`sqlite:./data/my-schema.db`; the example's is `sqlite:./data/example-schema.db`;
   * a compiled model's `sqlite:./data/restgraph.db`): see {@link defaultDatabaseUrl}
   */
  databaseUrl?: string;
  /** Log level of the JSON log. @default 'info' */
  logLevel?: LogLevel;
  /** Where JSON log lines go. @default standard output */
  logDestination?: NodeJS.WritableStream;
  /**
   * `'json'`: JSON lines; `'pretty'`: readable lines and a start banner, for a person at a
   * terminal. @default 'pretty' when the log goes to standard output and that is a terminal, else 'json'
   */
  logFormat?: LogFormat;
  /** Largest request body accepted. @default 1_048_576 (1 MiB) */
  bodyLimitBytes?: number;
  /** Page sizes and filter sizes of list requests. */
  listLimits?: Partial<ListLimits>;
  /** Most related rows embedded per parent by `include`. @default 100 */
  maxEmbedded?: number;
  /**
   * Another server's query language and answers on the REST lists, beside restgraph's own:
   * `'json-server'` (docs/json-server.md). @default none
   */
  compat?: CompatMode | undefined;
  /** CORS; `false` turns it off. @default { origins: '*', maxAgeSeconds: 600 } */
  cors?: CorsOptions | false;
  /** How long an Idempotency-Key replays its response. @default 86_400_000 (24 h) */
  idempotencyTtlMs?: number;
  /**
   * How long the first request with an Idempotency-Key may run before a retry with the key may take
   * it over (as after a crash). The request that lost its claim then commits nothing. @default 60_000 (60 s)
   */
  idempotencyClaimTimeoutMs?: number;
  /** Longest time a client may take to send its whole request (headers and body) before a 408. @default 30_000 (30 s) */
  requestTimeoutMs?: number;
  /**
   * Longest time the server may take to answer a request once it has been received; past it the
   * client gets a 503 `server-timeout` (streams, once started, are not limited). 0: no limit.
   * @default 30_000 (30 s)
   */
  responseTimeoutMs?: number;
  /** Time bounds and durability of the database; see {@link DatabaseOptions}. */
  database?: Partial<DatabaseOptions>;
  /** Largest request line and headers Node.js reads, in bytes; more is a 431. @default 16_384 (16 KiB) */
  maxHeaderBytes?: number;
  /** Longest URL (path and query string) accepted, in bytes; longer is a 414. @default 8_192 (8 KiB) */
  maxUrlLength?: number;
  /** Apply destructive migrations (dropping fields or resources) at start-up. @default false */
  allowDestructiveMigrations?: boolean;
  /** PostgreSQL schema of restgraph's own tables when the schema maps an existing database (created on first start). @default 'restgraph' */
  systemSchema?: string;
  /** Trust X-Forwarded-* headers (behind a proxy or load balancer). @default false */
  trustProxy?: boolean;
  /** A static credential granting `admin` (at least 16 characters). @default none */
  adminToken?: string;
  /** JWT verification (HS256 secret, PEM public keys, or a JWKS URL). @default none: JWTs are refused */
  jwt?: JwtOptions;
  /** How long a verified API key is trusted before the database is asked again (revocation delay). @default 10_000 (10 s) */
  apiKeyCacheMs?: number;
  /** How long the access tokens of accounts live, in seconds (docs/accounts.md). @default 900 (15 min) */
  accessTokenSeconds?: number;
  /** How long a refresh token of an account lives unused, in seconds; each refresh issues a new one. @default 2_592_000 (30 days) */
  refreshTokenSeconds?: number;
  /**
   * The server's public URL (`RESTGRAPH_PUBLIC_URL`, `https://api.example.com`): the base of the
   * links in account emails. @default none: the request's own origin (set it in production: the
   * Host header is the client's to choose)
   */
  publicUrl?: string;
  /**
   * How often the credentials of open streams (GraphQL over WebSocket and SSE, /v1/events) are
   * checked again against the database, not the key cache: a key revoked elsewhere (another
   * instance, `restgraph token revoke`) has its streams ended within this time (one revoked through
   * this server's API, at once). @default 5_000 (5 s)
   */
  streamCredentialCheckMs?: number;
  /** On first start with no API keys and no admin token, create an admin key and log it once. @default true */
  bootstrapAdminKey?: boolean;
  /** GraphQL protection limits and GET caching; see {@link GraphqlOptions}. */
  graphql?: Partial<GraphqlOptions>;
  /** Called with the text of every SQL statement run (instrumentation; tests count round trips). */
  onSqlStatement?: (sql: string) => void;
  /** The event outbox and streams; see {@link EventOptions}. */
  events?: Partial<EventOptions>;
  /** Webhook delivery: retry schedule, timeout, disabling, allowed private targets. */
  webhooks?: Partial<WebhookOptions>;
  /** Rate limits; see {@link RateLimitOptions}. The schema file's `rateLimits` apply where these are not set. */
  rateLimits?: Partial<RateLimitOptions>;
  /** `GET /metrics` (Prometheus) and who may read it; see {@link MetricsOptions}. */
  metrics?: Partial<MetricsOptions>;
  /** Email for accounts (SMTP, From, templates); see {@link MailOptions}. */
  mail?: Partial<MailOptions>;
  /** Where the files of file fields live, and how often orphans are swept (docs/files.md). */
  files?: Partial<FileOptions>;
  /** OpenID Connect sign-in: providers, the redirect URL, the sign-in of a verified identity (docs/oidc.md). */
  oidc?: Partial<OidcOptions>;
}

/** How long the database may take, and how durable SQLite's commits are. */
export interface DatabaseOptions {
  /** PostgreSQL: opening a connection, or waiting for a free one of the pool. @default 5000 (5 s) */
  connectTimeoutMs: number;
  /** PostgreSQL `statement_timeout`: the server cancels a statement running longer. 0: no limit. @default 15_000 (15 s) */
  statementTimeoutMs: number;
  /** PostgreSQL `idle_in_transaction_session_timeout`: a session idle inside a transaction is ended. 0: no limit. @default 15_000 (15 s) */
  idleInTransactionTimeoutMs: number;
  /** PostgreSQL: this process stops waiting for an answer (a server that went silent). 0: no limit. @default 20_000 (20 s) */
  queryTimeoutMs: number;
  /** SQLite: how long a write waits (on timers) for another process's write lock. @default 5000 (5 s) */
  sqliteLockTimeoutMs: number;
  /** SQLite: `FULL` (a commit survives power loss) or `NORMAL` (it survives a process crash only). @default 'FULL' */
  sqliteSynchronous: 'FULL' | 'NORMAL';
}

export * from './rate-limit-options.js';

/** The Prometheus endpoint. Reading it needs a token with the `metrics:read` (or `admin`) scope unless `public`. */
export interface MetricsOptions {
  /** Serve `GET /metrics` and record request metrics (false: a 404, and nothing recorded). @default true */
  enabled: boolean;
  /** Serve it without a credential (for a port only the scraper reaches). @default false */
  public: boolean;
  /** Include the Node.js process metrics (CPU, memory, event loop lag, GC) of prom-client. @default true */
  processMetrics: boolean;
}

export interface EventOptions {
  /** How long events are kept in the outbox (and can be replayed). @default 7 days */
  retentionMs: number;
  /** Interval of the SSE heartbeat comment. @default 15_000 */
  heartbeatMs: number;
  /** The `retry:` field of each `/v1/events` stream: how long an EventSource waits before it reconnects. @default 3000 */
  reconnectDelayMs: number;
  /** How often the outbox is read without a wake-up. @default 1000 */
  pollIntervalMs: number;
  /** Events a subscriber that stopped reading may fall behind before it is disconnected. @default 10_000 */
  maxLag: number;
  /**
   * How long a subscriber more than maxLag events behind may take nothing before it is
   * disconnected (one that keeps reading through a large burst is not). @default 10_000
   */
  maxPausedMs: number;
  /** Events a subscriber that reads, but too slowly to catch up, may fall behind before it is disconnected. @default 40_000 (4 × maxLag) */
  maxLagReading?: number;
  /**
   * Bytes of messages the GraphQL subscriptions of one connection may hold queued while the
   * connection does not take them (a client that stopped reading, or reads slowly); a subscription
   * whose message would go beyond is ended with slow-consumer. @default 33_554_432 (32 MiB)
   */
  maxQueuedBytesPerConnection: number;
  /**
   * Bytes all subscriptions of the server may hold queued (each message counted once, however many
   * subscriptions share it); beyond, the connections holding most are cut first. @default 268_435_456 (256 MiB)
   */
  maxQueuedBytes: number;
}

export interface GraphqlOptions extends GraphqlLimits {
  /** max-age (seconds) of Cache-Control on successful GET query responses. @default 0 (revalidate with the ETag) */
  getMaxAgeSeconds: number;
  /** Largest graphql-ws message accepted, in bytes; a bigger one closes the socket with 1009. @default 1_048_576 (1 MiB) */
  maxWebSocketMessageBytes: number;
  /** Most operations one graphql-ws connection may run at once. @default 100 */
  maxSubscriptionsPerConnection: number;
  /** Memory the parsed documents kept may take, in bytes (least recently used go first). @default 33_554_432 (32 MiB) */
  documentCacheBytes: number;
  /** Memory the automatic persisted queries kept may take, in bytes (least recently used go first). @default 16_777_216 (16 MiB) */
  persistedQueryCacheBytes: number;
}

export interface ResolvedOptions {
  schema: string | SchemaModel | undefined;
  databaseUrl: string;
  logLevel: LogLevel;
  logDestination: NodeJS.WritableStream | undefined;
  /** Undefined: chosen by where the log goes (pretty-log.ts). */
  logFormat: LogFormat | undefined;
  bodyLimitBytes: number;
  listLimits: ListLimits;
  maxEmbedded: number;
  /** `none` resolves to undefined: restgraph's own query language. */
  compat: Exclude<CompatMode, 'none'> | undefined;
  cors: CorsOptions | false;
  idempotencyTtlMs: number;
  idempotencyClaimTimeoutMs: number;
  requestTimeoutMs: number;
  responseTimeoutMs: number;
  database: DatabaseOptions;
  maxHeaderBytes: number;
  maxUrlLength: number;
  allowDestructiveMigrations: boolean;
  systemSchema: string;
  trustProxy: boolean;
  adminToken: string | undefined;
  jwt: JwtOptions | undefined;
  apiKeyCacheMs: number;
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
  publicUrl: string | undefined;
  streamCredentialCheckMs: number;
  bootstrapAdminKey: boolean;
  graphql: GraphqlOptions;
  onSqlStatement: ((sql: string) => void) | undefined;
  events: EventOptions;
  webhooks: WebhookOptions;
  rateLimits: RateLimitOptions;
  metrics: MetricsOptions;
  mail: MailOptions;
  oidc: OidcOptions;
  files: FileOptions;
}

export const DEFAULT_OPTIONS: Readonly<ResolvedOptions> = Object.freeze({
  schema: undefined,
  /** For a schema file: {@link defaultDatabaseUrl} of it instead. */
  databaseUrl: LEGACY_DATABASE_URL,
  logLevel: 'info',
  logDestination: undefined,
  logFormat: undefined,
  bodyLimitBytes: 1024 * 1024, // 1 MiB
  listLimits: Object.freeze({ defaultLimit: 100, maxLimit: 1000, maxInValues: 100, maxGroups: 1000, maxFilterConditions: 100, maxFilterDepth: 8, maxFilterHops: 3, maxFilterLength: 4096 }),
  maxEmbedded: 100,
  compat: undefined,
  cors: Object.freeze({ origins: '*', maxAgeSeconds: 600 }), // 10 min
  idempotencyTtlMs: 24 * 60 * 60 * 1000, // 24 h
  idempotencyClaimTimeoutMs: 60_000, // 60 s
  requestTimeoutMs: 30_000, // 30 s
  responseTimeoutMs: 30_000, // 30 s
  database: Object.freeze({
    connectTimeoutMs: 5000, // 5 s
    statementTimeoutMs: 15_000, // 15 s
    idleInTransactionTimeoutMs: 15_000, // 15 s
    queryTimeoutMs: 20_000, // 20 s: after the server's statement timeout, for a server gone silent
    sqliteLockTimeoutMs: 5000, // 5 s
    sqliteSynchronous: 'FULL' as const,
  }),
  maxHeaderBytes: 16 * 1024, // 16 KiB, Node.js's own default
  maxUrlLength: 8 * 1024, // 8 KiB
  allowDestructiveMigrations: false,
  systemSchema: 'restgraph',
  trustProxy: false,
  adminToken: undefined,
  jwt: undefined,
  apiKeyCacheMs: 10_000, // 10 s
  accessTokenSeconds: 15 * 60, // 15 min
  refreshTokenSeconds: 30 * 24 * 60 * 60, // 30 days
  publicUrl: undefined,
  // 5 s: a revoked key's streams end within 10 s (SECURITY.md), with room for the check's query.
  streamCredentialCheckMs: 5000,
  bootstrapAdminKey: true,
  graphql: Object.freeze({
    maxDepth: 10,
    maxCost: 50_000,
    relationPageSize: 10,
    maxAliases: 30,
    maxDirectives: 50,
    maxSelections: 10_000,
    maxTokens: 5_000,
    introspection: process.env.NODE_ENV !== 'production',
    getMaxAgeSeconds: 0,
    maxWebSocketMessageBytes: 1024 * 1024, // 1 MiB
    maxSubscriptionsPerConnection: 100,
    documentCacheBytes: 32 * 1024 * 1024, // 32 MiB
    persistedQueryCacheBytes: 16 * 1024 * 1024, // 16 MiB
  }),
  onSqlStatement: undefined,
  events: Object.freeze({ retentionMs: 7 * 24 * 60 * 60 * 1000, heartbeatMs: 15_000, reconnectDelayMs: 3000, pollIntervalMs: 1000, maxLag: 10_000, maxPausedMs: 10_000, maxQueuedBytesPerConnection: 32 * 1024 * 1024, maxQueuedBytes: 256 * 1024 * 1024 }),
  webhooks: Object.freeze({
    // 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after the first attempt.
    retryScheduleSeconds: Object.freeze([5, 300, 1800, 7200, 18000, 36000, 36000]),
    timeoutMs: 10_000,
    leaseMarginMs: 5000, // 5 s
    disableAfterMs: 5 * 24 * 60 * 60 * 1000,
    allowHosts: Object.freeze([]),
    maxResponseBytes: 1024,
    pollIntervalMs: 500,
  }),
  rateLimits: Object.freeze({
    default: undefined,
    anonymous: undefined,
    graphql: undefined,
    webSocketConnections: undefined,
    uploadBytes: undefined,
    store: undefined,
    redisUrl: undefined,
    signInFailures: undefined,
    accountRequests: undefined,
    accountEmails: undefined,
  }),
  metrics: Object.freeze({ enabled: true, public: false, processMetrics: true }),
  // Development without SMTP writes messages (and their links) to the log; production refuses.
  mail: Object.freeze({ smtpUrl: undefined, from: undefined, templatesDir: undefined, logWhenUnconfigured: process.env.NODE_ENV !== 'production' }),
  oidc: DEFAULT_OIDC_OPTIONS,
  files: DEFAULT_FILE_OPTIONS,
});

/** Merges options over the defaults once; the result is frozen. */
export function resolveOptions(options: RestgraphOptions): Readonly<ResolvedOptions> {
  return Object.freeze({
    schema: options.schema ?? DEFAULT_OPTIONS.schema,
    databaseUrl: options.databaseUrl ?? (typeof options.schema === 'object' ? DEFAULT_OPTIONS.databaseUrl : defaultDatabaseUrl(options.schema)),
    logLevel: options.logLevel ?? DEFAULT_OPTIONS.logLevel,
    logDestination: options.logDestination,
    logFormat: options.logFormat,
    bodyLimitBytes: options.bodyLimitBytes ?? DEFAULT_OPTIONS.bodyLimitBytes,
    listLimits: Object.freeze({ ...DEFAULT_OPTIONS.listLimits, ...options.listLimits }),
    maxEmbedded: options.maxEmbedded ?? DEFAULT_OPTIONS.maxEmbedded,
    compat: resolvedCompat(options.compat),
    cors: options.cors ?? DEFAULT_OPTIONS.cors,
    idempotencyTtlMs: options.idempotencyTtlMs ?? DEFAULT_OPTIONS.idempotencyTtlMs,
    idempotencyClaimTimeoutMs: options.idempotencyClaimTimeoutMs ?? DEFAULT_OPTIONS.idempotencyClaimTimeoutMs,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_OPTIONS.requestTimeoutMs,
    responseTimeoutMs: options.responseTimeoutMs ?? DEFAULT_OPTIONS.responseTimeoutMs,
    database: Object.freeze({ ...DEFAULT_OPTIONS.database, ...options.database }),
    maxHeaderBytes: options.maxHeaderBytes ?? DEFAULT_OPTIONS.maxHeaderBytes,
    maxUrlLength: options.maxUrlLength ?? DEFAULT_OPTIONS.maxUrlLength,
    allowDestructiveMigrations: options.allowDestructiveMigrations ?? DEFAULT_OPTIONS.allowDestructiveMigrations,
    systemSchema: options.systemSchema ?? DEFAULT_OPTIONS.systemSchema,
    trustProxy: options.trustProxy ?? DEFAULT_OPTIONS.trustProxy,
    adminToken: options.adminToken,
    jwt: options.jwt,
    apiKeyCacheMs: options.apiKeyCacheMs ?? DEFAULT_OPTIONS.apiKeyCacheMs,
    accessTokenSeconds: options.accessTokenSeconds ?? DEFAULT_OPTIONS.accessTokenSeconds,
    refreshTokenSeconds: options.refreshTokenSeconds ?? DEFAULT_OPTIONS.refreshTokenSeconds,
    publicUrl: options.publicUrl ?? DEFAULT_OPTIONS.publicUrl,
    streamCredentialCheckMs: options.streamCredentialCheckMs ?? DEFAULT_OPTIONS.streamCredentialCheckMs,
    bootstrapAdminKey: options.bootstrapAdminKey ?? DEFAULT_OPTIONS.bootstrapAdminKey,
    graphql: Object.freeze({ ...DEFAULT_OPTIONS.graphql, ...options.graphql }),
    onSqlStatement: options.onSqlStatement,
    events: Object.freeze({ ...DEFAULT_OPTIONS.events, ...options.events }),
    webhooks: Object.freeze({ ...DEFAULT_OPTIONS.webhooks, ...options.webhooks }),
    rateLimits: Object.freeze({ ...DEFAULT_OPTIONS.rateLimits, ...options.rateLimits }),
    metrics: Object.freeze({ ...DEFAULT_OPTIONS.metrics, ...options.metrics }),
    mail: Object.freeze({ ...DEFAULT_OPTIONS.mail, ...options.mail }),
    oidc: resolvedOidc(options.oidc),
    files: Object.freeze({ ...DEFAULT_OPTIONS.files, ...options.files }),
  });
}

/** OpenID Connect options over the defaults, checked (ConfigError at start-up). */
function resolvedOidc(options: Partial<OidcOptions> | undefined): OidcOptions {
  const oidc: OidcOptions = Object.freeze({ ...DEFAULT_OIDC_OPTIONS, ...options });
  checkOidcOptions(oidc);
  return oidc;
}

/** The compatibility mode asked for, checked; `none` (or none given) is restgraph's own. */
function resolvedCompat(mode: string | undefined): Exclude<CompatMode, 'none'> | undefined {
  if (mode === undefined) return undefined;
  const checked = compatMode('compat', mode);
  return checked === 'none' ? undefined : checked;
}
