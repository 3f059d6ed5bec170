import { ConfigError } from '../errors.js';
import { TargetGuard } from '../webhooks/target-guard.js';
import { BYTE_RATE_LIMIT_FORMAT, parseByteRateLimit, parseRateLimit, RATE_LIMIT_FORMAT } from '../schema/rate-limit-policy.js';
import { compatMode } from '../rest/json-server-compat.js';
import { oidcFromEnv } from './oidc-from-env.js';
import { bothStoragesError, type FileOptions } from '../files/create-file-storage.js';
import { s3SettingsFromEnv } from '../files/s3-settings.js';
import { systemSchemaName } from '../store/system-schema.js';
import { ANONYMOUS_RATE_LIMIT_OFF, type LogLevel, type RestgraphOptions } from './app-options.js';
import type { LogFormat } from './pretty-log.js';

/** Where to listen: `PORT` and `HOST`. */
export interface ListenOptions {
  port: number;
  host: string;
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/**
 * Reads configuration from the environment (see the README's configuration table). Bad values
 * fail here, at start-up, with a ConfigError naming the variable.
 */
export function optionsFromEnv(env: Env): RestgraphOptions & { listen: ListenOptions } {
  const options: RestgraphOptions & { listen: ListenOptions } = {
    listen: { port: integer(env, 'PORT', 3000, 0, 65535), host: env.HOST ?? '127.0.0.1' },
  };
  if (env.DATABASE_URL !== undefined && env.DATABASE_URL !== '') options.databaseUrl = env.DATABASE_URL;
  if (env.RESTGRAPH_SCHEMA !== undefined && env.RESTGRAPH_SCHEMA !== '') options.schema = env.RESTGRAPH_SCHEMA;
  if (env.RESTGRAPH_SYSTEM_SCHEMA !== undefined && env.RESTGRAPH_SYSTEM_SCHEMA !== '') options.systemSchema = systemSchemaName(env);
  const level = env.LOG_LEVEL;
  if (level !== undefined && level !== '') {
    if (!LOG_LEVELS.includes(level as LogLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
    options.logLevel = level as LogLevel;
  }
  const format = env.RESTGRAPH_LOG_FORMAT;
  if (format !== undefined && format !== '') {
    if (!LOG_FORMATS.includes(format as LogFormat)) throw new ConfigError('RESTGRAPH_LOG_FORMAT', `must be one of ${LOG_FORMATS.join(', ')}`);
    options.logFormat = format as LogFormat;
  }
  if (env.RESTGRAPH_COMPAT !== undefined && env.RESTGRAPH_COMPAT !== '') options.compat = compatMode('RESTGRAPH_COMPAT', env.RESTGRAPH_COMPAT);
  if (env.RESTGRAPH_BODY_LIMIT !== undefined) options.bodyLimitBytes = integer(env, 'RESTGRAPH_BODY_LIMIT', 1024 * 1024, 1, 1024 * 1024 * 1024);
  if (env.RESTGRAPH_REQUEST_TIMEOUT_MS !== undefined) options.requestTimeoutMs = integer(env, 'RESTGRAPH_REQUEST_TIMEOUT_MS', 30_000, 1, 3_600_000);
  if (env.RESTGRAPH_RESPONSE_TIMEOUT_MS !== undefined) options.responseTimeoutMs = integer(env, 'RESTGRAPH_RESPONSE_TIMEOUT_MS', 30_000, 0, 3_600_000);
  const database = databaseFromEnv(env);
  if (Object.keys(database).length > 0) options.database = database;
  const maxHeaderBytes = integer(env, 'RESTGRAPH_MAX_HEADER_BYTES', 16 * 1024, 1024, 1024 * 1024);
  const maxUrlLength = integer(env, 'RESTGRAPH_MAX_URL_LENGTH', 8 * 1024, 64, 1024 * 1024);
  // Node.js counts the request line (and so the URL) toward the header limit: a longer URL
  // limit could never be reached, and its 414 would be a 431.
  if (maxUrlLength > maxHeaderBytes) {
    throw new ConfigError('RESTGRAPH_MAX_URL_LENGTH', `must not be larger than RESTGRAPH_MAX_HEADER_BYTES (${maxHeaderBytes}): the URL counts toward the header limit`);
  }
  if (env.RESTGRAPH_MAX_HEADER_BYTES !== undefined) options.maxHeaderBytes = maxHeaderBytes;
  if (env.RESTGRAPH_MAX_URL_LENGTH !== undefined) options.maxUrlLength = maxUrlLength;
  const pageLimits: RestgraphOptions['listLimits'] = {};
  if (env.RESTGRAPH_DEFAULT_PAGE_SIZE !== undefined) pageLimits.defaultLimit = integer(env, 'RESTGRAPH_DEFAULT_PAGE_SIZE', 100, 1, 100_000);
  if (env.RESTGRAPH_MAX_PAGE_SIZE !== undefined) pageLimits.maxLimit = integer(env, 'RESTGRAPH_MAX_PAGE_SIZE', 1000, 1, 100_000);
  if (env.RESTGRAPH_MAX_AGGREGATE_GROUPS !== undefined) pageLimits.maxGroups = integer(env, 'RESTGRAPH_MAX_AGGREGATE_GROUPS', 1000, 1, 100_000);
  if (env.RESTGRAPH_FILTER_MAX_CONDITIONS !== undefined) pageLimits.maxFilterConditions = integer(env, 'RESTGRAPH_FILTER_MAX_CONDITIONS', 100, 1, 10_000);
  if (env.RESTGRAPH_FILTER_MAX_DEPTH !== undefined) pageLimits.maxFilterDepth = integer(env, 'RESTGRAPH_FILTER_MAX_DEPTH', 8, 1, 64);
  if (env.RESTGRAPH_FILTER_MAX_HOPS !== undefined) pageLimits.maxFilterHops = integer(env, 'RESTGRAPH_FILTER_MAX_HOPS', 3, 0, 10);
  if (env.RESTGRAPH_FILTER_MAX_LENGTH !== undefined) pageLimits.maxFilterLength = integer(env, 'RESTGRAPH_FILTER_MAX_LENGTH', 4096, 1, 1024 * 1024);
  if (Object.keys(pageLimits).length > 0) options.listLimits = pageLimits;
  if ((pageLimits.defaultLimit ?? 100) > (pageLimits.maxLimit ?? 1000)) {
    throw new ConfigError('RESTGRAPH_DEFAULT_PAGE_SIZE', 'must not be larger than RESTGRAPH_MAX_PAGE_SIZE');
  }
  const cors = env.RESTGRAPH_CORS_ORIGINS;
  if (cors !== undefined) {
    const trimmed = cors.trim();
    if (trimmed === '' || trimmed === 'false' || trimmed === 'off') options.cors = false;
    else if (trimmed === '*') options.cors = { origins: '*', maxAgeSeconds: 600 };
    else {
      const origins = trimmed.split(',').map((o) => o.trim());
      for (const origin of origins) {
        if (!/^https?:\/\/[^/\s]+$/.test(origin)) throw new ConfigError('RESTGRAPH_CORS_ORIGINS', `"${origin}" is not an origin like https://app.example.com`);
      }
      options.cors = { origins, maxAgeSeconds: 600 };
    }
  }
  if (env.RESTGRAPH_TRUST_PROXY !== undefined) options.trustProxy = boolean(env, 'RESTGRAPH_TRUST_PROXY');
  if (nonEmpty(env.RESTGRAPH_ADMIN_TOKEN)) options.adminToken = env.RESTGRAPH_ADMIN_TOKEN;
  if (env.RESTGRAPH_IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS !== undefined) {
    options.idempotencyClaimTimeoutMs = integer(env, 'RESTGRAPH_IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS', 60, 1, 86_400) * 1000;
  }
  if (env.RESTGRAPH_API_KEY_CACHE_SECONDS !== undefined) options.apiKeyCacheMs = integer(env, 'RESTGRAPH_API_KEY_CACHE_SECONDS', 10, 0, 3600) * 1000;
  if (env.RESTGRAPH_ACCESS_TOKEN_SECONDS !== undefined) options.accessTokenSeconds = integer(env, 'RESTGRAPH_ACCESS_TOKEN_SECONDS', 900, 60, 86_400);
  if (nonEmpty(env.RESTGRAPH_PUBLIC_URL)) {
    // An origin, or one with a path where a proxy serves the API below one (https://example.com/api).
    if (!/^https?:\/\/[^/\s?#]+(\/[^\s?#]*)?$/.test(env.RESTGRAPH_PUBLIC_URL.trim())) throw new ConfigError('RESTGRAPH_PUBLIC_URL', 'must be an http:// or https:// URL without query or fragment, such as https://api.example.com');
    options.publicUrl = env.RESTGRAPH_PUBLIC_URL.trim();
  }
  if (env.RESTGRAPH_REFRESH_TOKEN_SECONDS !== undefined) options.refreshTokenSeconds = integer(env, 'RESTGRAPH_REFRESH_TOKEN_SECONDS', 2_592_000, 300, 31_536_000);
  if (env.RESTGRAPH_STREAM_CREDENTIAL_CHECK_SECONDS !== undefined) {
    options.streamCredentialCheckMs = integer(env, 'RESTGRAPH_STREAM_CREDENTIAL_CHECK_SECONDS', 5, 1, 3600) * 1000;
  }
  const jwt: NonNullable<RestgraphOptions['jwt']> = {};
  if (nonEmpty(env.RESTGRAPH_JWT_SECRET)) jwt.secret = env.RESTGRAPH_JWT_SECRET;
  if (nonEmpty(env.RESTGRAPH_JWT_PUBLIC_KEY)) jwt.publicKeys = [env.RESTGRAPH_JWT_PUBLIC_KEY.replace(/\\n/g, '\n')];
  if (nonEmpty(env.RESTGRAPH_JWKS_URL)) jwt.jwksUrl = env.RESTGRAPH_JWKS_URL;
  if (nonEmpty(env.RESTGRAPH_JWT_ISSUER)) jwt.issuer = env.RESTGRAPH_JWT_ISSUER;
  if (nonEmpty(env.RESTGRAPH_JWT_AUDIENCE)) jwt.audience = env.RESTGRAPH_JWT_AUDIENCE.split(',').map((a) => a.trim()).filter((a) => a !== '');
  // Only a deliberate true is an option (false is the default, and needs no key beside it).
  if (nonEmpty(env.RESTGRAPH_JWT_ANY_AUDIENCE) && boolean(env, 'RESTGRAPH_JWT_ANY_AUDIENCE')) jwt.anyAudience = true;
  if (nonEmpty(env.RESTGRAPH_JWT_SCOPES_CLAIM)) jwt.scopesClaim = env.RESTGRAPH_JWT_SCOPES_CLAIM;
  if (Object.keys(jwt).length > 0) {
    if (jwt.secret === undefined && jwt.publicKeys === undefined && jwt.jwksUrl === undefined) {
      throw new ConfigError('RESTGRAPH_JWT_SECRET', 'JWT options are set but no key is: set RESTGRAPH_JWT_SECRET, RESTGRAPH_JWT_PUBLIC_KEY or RESTGRAPH_JWKS_URL');
    }
    options.jwt = jwt;
  }
  const graphql: NonNullable<RestgraphOptions['graphql']> = {};
  const graphqlIntegers = [
    ['RESTGRAPH_GRAPHQL_MAX_DEPTH', 'maxDepth', 10, 1, 1000],
    ['RESTGRAPH_GRAPHQL_MAX_COST', 'maxCost', 50_000, 1, 1_000_000_000],
    ['RESTGRAPH_GRAPHQL_RELATION_PAGE_SIZE', 'relationPageSize', 10, 1, 100_000],
    ['RESTGRAPH_GRAPHQL_MAX_ALIASES', 'maxAliases', 30, 0, 100_000],
    ['RESTGRAPH_GRAPHQL_MAX_DIRECTIVES', 'maxDirectives', 50, 0, 100_000],
    ['RESTGRAPH_GRAPHQL_MAX_SELECTIONS', 'maxSelections', 10_000, 1, 10_000_000],
    ['RESTGRAPH_GRAPHQL_MAX_TOKENS', 'maxTokens', 5_000, 10, 10_000_000],
    ['RESTGRAPH_GRAPHQL_GET_MAX_AGE', 'getMaxAgeSeconds', 0, 0, 31_536_000],
    ['RESTGRAPH_GRAPHQL_MAX_WS_MESSAGE_BYTES', 'maxWebSocketMessageBytes', 1024 * 1024, 1024, 1024 * 1024 * 1024],
    ['RESTGRAPH_GRAPHQL_MAX_WS_OPERATIONS', 'maxSubscriptionsPerConnection', 100, 1, 100_000],
  ] as const;
  for (const [name, key, fallback, min, max] of graphqlIntegers) {
    if (env[name] !== undefined) graphql[key] = integer(env, name, fallback, min, max);
  }
  if (env.RESTGRAPH_GRAPHQL_INTROSPECTION !== undefined && env.RESTGRAPH_GRAPHQL_INTROSPECTION !== '') {
    graphql.introspection = boolean(env, 'RESTGRAPH_GRAPHQL_INTROSPECTION');
  }
  if (Object.keys(graphql).length > 0) options.graphql = graphql;
  const events: NonNullable<RestgraphOptions['events']> = {};
  if (env.RESTGRAPH_EVENT_RETENTION_DAYS !== undefined) events.retentionMs = integer(env, 'RESTGRAPH_EVENT_RETENTION_DAYS', 7, 1, 3650) * 24 * 60 * 60 * 1000;
  if (env.RESTGRAPH_SSE_HEARTBEAT_SECONDS !== undefined) events.heartbeatMs = integer(env, 'RESTGRAPH_SSE_HEARTBEAT_SECONDS', 15, 1, 3600) * 1000;
  if (env.RESTGRAPH_SUBSCRIPTION_QUEUE_BYTES_PER_CONNECTION !== undefined) {
    events.maxQueuedBytesPerConnection = integer(env, 'RESTGRAPH_SUBSCRIPTION_QUEUE_BYTES_PER_CONNECTION', 32 * 1024 * 1024, 64 * 1024, 2 ** 40);
  }
  if (env.RESTGRAPH_SUBSCRIPTION_QUEUE_BYTES !== undefined) events.maxQueuedBytes = integer(env, 'RESTGRAPH_SUBSCRIPTION_QUEUE_BYTES', 256 * 1024 * 1024, 1024 * 1024, 2 ** 40);
  if (Object.keys(events).length > 0) options.events = events;
  const webhooks: NonNullable<RestgraphOptions['webhooks']> = {};
  const schedule = env.RESTGRAPH_WEBHOOK_RETRY_SCHEDULE;
  if (schedule !== undefined && schedule.trim() !== '') {
    const parts = schedule.split(',').map((p) => p.trim());
    if (parts.length > 50 || !parts.every((p) => /^\d{1,7}$/.test(p))) {
      throw new ConfigError('RESTGRAPH_WEBHOOK_RETRY_SCHEDULE', `must be comma-separated whole seconds (at most 50), like 5,300,1800; not "${schedule}"`);
    }
    webhooks.retryScheduleSeconds = parts.map(Number);
  }
  const allow = env.RESTGRAPH_WEBHOOK_ALLOW_HOSTS;
  if (allow !== undefined && allow.trim() !== '') {
    const entries = allow.split(',').map((e) => e.trim()).filter((e) => e !== '');
    for (const entry of entries) {
      const problem = TargetGuard.problemWith(entry);
      if (problem !== undefined) throw new ConfigError('RESTGRAPH_WEBHOOK_ALLOW_HOSTS', problem);
    }
    webhooks.allowHosts = entries;
  }
  if (env.RESTGRAPH_WEBHOOK_TIMEOUT_MS !== undefined) webhooks.timeoutMs = integer(env, 'RESTGRAPH_WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000);
  if (env.RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS !== undefined) webhooks.leaseMarginMs = integer(env, 'RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS', 5000, 100, 600_000);
  if (env.RESTGRAPH_WEBHOOK_DISABLE_AFTER_HOURS !== undefined) {
    webhooks.disableAfterMs = integer(env, 'RESTGRAPH_WEBHOOK_DISABLE_AFTER_HOURS', 120, 1, 8760) * 60 * 60 * 1000;
  }
  if (Object.keys(webhooks).length > 0) options.webhooks = webhooks;
  const rateLimits: NonNullable<RestgraphOptions['rateLimits']> = {};
  const quotas = [
    ['RESTGRAPH_RATE_LIMIT', 'default'],
    ['RESTGRAPH_RATE_LIMIT_ANONYMOUS', 'anonymous'],
    ['RESTGRAPH_GRAPHQL_RATE_LIMIT', 'graphql'],
    ['RESTGRAPH_RATE_LIMIT_WEBSOCKET_CONNECTIONS', 'webSocketConnections'],
  ] as const;
  for (const [name, key] of quotas) {
    const text = env[name];
    if (!nonEmpty(text)) continue;
    // The quotas that apply by default can be turned off.
    const mayBeOff = key === 'anonymous' || key === 'webSocketConnections';
    const off = mayBeOff && text.trim() === ANONYMOUS_RATE_LIMIT_OFF;
    if (!off && parseRateLimit(text, key) === undefined) {
      throw new ConfigError(name, `must be ${RATE_LIMIT_FORMAT}${mayBeOff ? ', or off' : ''}, not "${text}"`);
    }
    rateLimits[key] = off ? ANONYMOUS_RATE_LIMIT_OFF : text;
  }
  const uploadBytes = env.RESTGRAPH_RATE_LIMIT_UPLOAD_BYTES;
  if (nonEmpty(uploadBytes)) {
    const off = uploadBytes.trim() === ANONYMOUS_RATE_LIMIT_OFF;
    if (!off && parseByteRateLimit(uploadBytes, 'uploadBytes') === undefined) throw new ConfigError('RESTGRAPH_RATE_LIMIT_UPLOAD_BYTES', `must be ${BYTE_RATE_LIMIT_FORMAT}, or off, not "${uploadBytes}"`);
    rateLimits.uploadBytes = off ? ANONYMOUS_RATE_LIMIT_OFF : uploadBytes;
  }
  const accountQuotas = [
    ['RESTGRAPH_RATE_LIMIT_SIGN_IN_FAILURES', 'signInFailures'],
    ['RESTGRAPH_RATE_LIMIT_ACCOUNT_REQUESTS', 'accountRequests'],
    ['RESTGRAPH_RATE_LIMIT_ACCOUNT_EMAILS', 'accountEmails'],
  ] as const;
  for (const [name, key] of accountQuotas) {
    const text = env[name];
    if (!nonEmpty(text)) continue;
    if (parseRateLimit(text, key) === undefined) throw new ConfigError(name, `must be ${RATE_LIMIT_FORMAT}, not "${text}"`);
    rateLimits[key] = text;
  }
  const store = env.RESTGRAPH_RATE_LIMIT_STORE;
  if (nonEmpty(store)) {
    if (store !== 'memory' && store !== 'database' && store !== 'redis') throw new ConfigError('RESTGRAPH_RATE_LIMIT_STORE', `must be memory, database or redis, not "${store}"`);
    rateLimits.store = store;
  }
  if (nonEmpty(env.REDIS_URL)) {
    if (!/^rediss?:\/\//.test(env.REDIS_URL)) throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL');
    rateLimits.redisUrl = env.REDIS_URL;
  }
  if (Object.keys(rateLimits).length > 0) options.rateLimits = rateLimits;
  const metrics: NonNullable<RestgraphOptions['metrics']> = {};
  if (nonEmpty(env.RESTGRAPH_METRICS)) metrics.enabled = boolean(env, 'RESTGRAPH_METRICS');
  if (nonEmpty(env.RESTGRAPH_METRICS_PUBLIC)) metrics.public = boolean(env, 'RESTGRAPH_METRICS_PUBLIC');
  if (Object.keys(metrics).length > 0) options.metrics = metrics;
  const mail = mailFromEnv(env);
  if (Object.keys(mail).length > 0) options.mail = mail;
  const oidc = oidcFromEnv(env);
  if (oidc !== undefined) options.oidc = oidc;
  const files = filesFromEnv(env);
  if (Object.keys(files).length > 0) options.files = files;
  return options;
}

/** Where files are stored and how they are downloaded (docs/files.md#storage). */
function filesFromEnv(env: Env): Partial<FileOptions> {
  const files: Partial<FileOptions> = {};
  if (nonEmpty(env.RESTGRAPH_FILES_DIR)) files.dir = env.RESTGRAPH_FILES_DIR;
  if (nonEmpty(env.RESTGRAPH_FILES_URL)) {
    if (files.dir !== undefined) throw bothStoragesError();
    files.url = env.RESTGRAPH_FILES_URL;
    files.s3 = s3SettingsFromEnv(env);
  }
  const downloads = env.RESTGRAPH_FILES_DOWNLOADS;
  if (nonEmpty(downloads)) {
    if (downloads !== 'stream' && downloads !== 'redirect') throw new ConfigError('RESTGRAPH_FILES_DOWNLOADS', `must be stream or redirect, not "${downloads}"`);
    files.downloads = downloads;
  }
  if (env.RESTGRAPH_FILES_URL_TTL_SECONDS !== undefined) files.downloadUrlTtlSeconds = integer(env, 'RESTGRAPH_FILES_URL_TTL_SECONDS', 60, 1, 3600);
  return files;
}

/** The database's time bounds and SQLite's durability (README: Configuration). */
function databaseFromEnv(env: Env): NonNullable<RestgraphOptions['database']> {
  const database: NonNullable<RestgraphOptions['database']> = {};
  const bounds = [
    ['RESTGRAPH_DB_CONNECT_TIMEOUT_MS', 'connectTimeoutMs', 5000, 100],
    ['RESTGRAPH_DB_STATEMENT_TIMEOUT_MS', 'statementTimeoutMs', 15_000, 0],
    ['RESTGRAPH_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 'idleInTransactionTimeoutMs', 15_000, 0],
    ['RESTGRAPH_DB_QUERY_TIMEOUT_MS', 'queryTimeoutMs', 20_000, 0],
    ['RESTGRAPH_SQLITE_LOCK_TIMEOUT_MS', 'sqliteLockTimeoutMs', 5000, 0],
  ] as const;
  for (const [name, key, fallback, min] of bounds) {
    if (env[name] !== undefined) database[key] = integer(env, name, fallback, min, 3_600_000);
  }
  const synchronous = env.RESTGRAPH_SQLITE_SYNCHRONOUS?.trim().toUpperCase();
  if (synchronous !== undefined && synchronous !== '') {
    if (synchronous === 'OFF') {
      throw new ConfigError('RESTGRAPH_SQLITE_SYNCHRONOUS', 'OFF is not offered: an operating system crash or power loss could then corrupt the database; use FULL (the default) or NORMAL');
    }
    if (synchronous !== 'FULL' && synchronous !== 'NORMAL') throw new ConfigError('RESTGRAPH_SQLITE_SYNCHRONOUS', `must be FULL or NORMAL, not "${env.RESTGRAPH_SQLITE_SYNCHRONOUS ?? ''}"`);
    database.sqliteSynchronous = synchronous;
  }
  return database;
}

/** Email for accounts (docs/email.md): the SMTP server, the From address, the templates folder. */
function mailFromEnv(env: Env): NonNullable<RestgraphOptions['mail']> {
  const mail: NonNullable<RestgraphOptions['mail']> = {};
  if (nonEmpty(env.RESTGRAPH_SMTP_URL)) {
    if (!/^smtps?:\/\/[^/\s]/.test(env.RESTGRAPH_SMTP_URL)) throw new ConfigError('RESTGRAPH_SMTP_URL', 'must be an smtp:// or smtps:// URL');
    mail.smtpUrl = env.RESTGRAPH_SMTP_URL;
  }
  if (nonEmpty(env.RESTGRAPH_MAIL_FROM)) mail.from = env.RESTGRAPH_MAIL_FROM.trim();
  if (nonEmpty(env.RESTGRAPH_MAIL_TEMPLATES)) mail.templatesDir = env.RESTGRAPH_MAIL_TEMPLATES;
  if (mail.smtpUrl !== undefined && mail.from === undefined) {
    throw new ConfigError('RESTGRAPH_MAIL_FROM', 'is needed with RESTGRAPH_SMTP_URL: the address messages come from');
  }
  return mail;
}

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new ConfigError(name, `must be an integer from ${min} to ${max}, not "${text}"`);
  return Number(text);
}

function boolean(env: Env, name: string): boolean {
  const text = env[name];
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0' || text === '') return false;
  throw new ConfigError(name, `must be true or false, not "${text ?? ''}"`);
}
