import { AccountThrottle } from '../core/account-throttle.js';
import { hasFileFields } from '../core/file-fields.js';
import { RateLimiter, RateLimits, type RateLimitSettings } from '../core/rate-limits.js';
import { ConfigError } from '../errors.js';
import { BYTE_RATE_LIMIT_FORMAT, parseByteRateLimit, parseRateLimit, RATE_LIMIT_FORMAT, type RateLimitPolicy } from '../schema/rate-limit-policy.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { MemoryCounters, SqlCounters, type CounterStore } from '../store/rate-limit-counters.js';
import type { SqlDatabase } from '../store/sql-database.js';
import { ANONYMOUS_RATE_LIMIT_OFF, DEFAULT_ACCOUNT_RATE_LIMITS, DEFAULT_ANONYMOUS_RATE_LIMIT, DEFAULT_UPLOAD_BYTES_RATE_LIMIT, DEFAULT_WEBSOCKET_CONNECTIONS_RATE_LIMIT, type RateLimitOptions } from './app-options.js';

/**
 * The rate limits in force: the options (from the environment) over the schema file's, counted in
 * the store they name (the built-in anonymous quota alone: in memory). Undefined when no quota is
 * set anywhere and the anonymous one is off: requests then pay nothing for it.
 *
 * @throws ConfigError for a malformed quota or an unreachable Redis.
 */
export async function createRateLimits(options: RateLimitOptions, schema: SchemaModel, db: SqlDatabase): Promise<RateLimits | undefined> {
  const base = fromOption(options.default, 'default') ?? schema.rateLimits.default;
  const settings: RateLimitSettings = {
    default: base,
    anonymous: anonymousPolicy(options.anonymous, schema, base),
    graphql: fromOption(options.graphql, 'graphql') ?? schema.rateLimits.graphql,
    resourceQuotas: [...schema.resources.values()].some((r) => Object.keys(r.rateLimits).length > 0),
    webSocketConnections: webSocketPolicy(options.webSocketConnections),
    uploadBytes: uploadPolicy(options.uploadBytes, schema),
  };
  const anonymousLimited = settings.anonymous !== null && settings.anonymous !== undefined;
  const upgradesLimited = settings.webSocketConnections !== null;
  const uploadsLimited = settings.uploadBytes !== null && settings.uploadBytes !== undefined;
  const configured =
    base !== undefined ||
    settings.graphql !== undefined ||
    settings.resourceQuotas === true ||
    (anonymousLimited && !builtIn(settings.anonymous)) ||
    (upgradesLimited && settings.webSocketConnections !== BUILT_IN_WEBSOCKET_CONNECTIONS) ||
    (uploadsLimited && settings.uploadBytes !== BUILT_IN_UPLOAD_BYTES);
  if (!configured && !anonymousLimited && !upgradesLimited && !uploadsLimited) return undefined;
  // The built-in quotas alone (anonymous requests, WebSocket upgrades, upload bytes) are a safety net: counted in
  // this process unless a store is named, so that they add no database statement to anonymous
  // requests and no failure when the database is away (several instances then each allow them).
  const store = configured || options.store !== undefined || options.redisUrl !== undefined ? await counterStore(options, db) : new MemoryCounters();
  return new RateLimits(new RateLimiter(store), settings);
}

/**
 * The throttles of the account endpoints ({@link DEFAULT_ACCOUNT_RATE_LIMITS} where the options set
 * none), counted in the store the other quotas use (`RESTGRAPH_RATE_LIMIT_STORE`, `REDIS_URL`; by
 * default the database on PostgreSQL, so every instance counts together), with counters of their
 * own. The caller closes it.
 *
 * @throws ConfigError for a malformed quota or an unreachable Redis.
 */
export async function createAccountThrottle(options: RateLimitOptions, db: SqlDatabase, now: () => number = Date.now): Promise<AccountThrottle> {
  const policy = (key: 'signInFailures' | 'accountRequests' | 'accountEmails', env: string): RateLimitPolicy => {
    const text = options[key] ?? DEFAULT_ACCOUNT_RATE_LIMITS[key];
    const parsed = parseRateLimit(text, ACCOUNT_POLICY_NAMES[key]);
    if (parsed === undefined) throw new ConfigError(env, `must be ${RATE_LIMIT_FORMAT}, not "${text}"`);
    return parsed;
  };
  const settings = {
    signInFailures: policy('signInFailures', 'RESTGRAPH_RATE_LIMIT_SIGN_IN_FAILURES'),
    accountRequests: policy('accountRequests', 'RESTGRAPH_RATE_LIMIT_ACCOUNT_REQUESTS'),
    accountEmails: policy('accountEmails', 'RESTGRAPH_RATE_LIMIT_ACCOUNT_EMAILS'),
  };
  return new AccountThrottle(new RateLimiter(await counterStore(options, db), now), settings);
}

/** The names the account policies have in refusals and counter keys (apart from every other quota's). */
const ACCOUNT_POLICY_NAMES = Object.freeze({ signInFailures: 'account-sign-in-failures', accountRequests: 'account-requests', accountEmails: 'account-emails' });

const BUILT_IN_ANONYMOUS = parseRateLimit(DEFAULT_ANONYMOUS_RATE_LIMIT, 'anonymous');
const BUILT_IN_WEBSOCKET_CONNECTIONS = parseRateLimit(DEFAULT_WEBSOCKET_CONNECTIONS_RATE_LIMIT, 'webSocketConnections');
const BUILT_IN_UPLOAD_BYTES = parseByteRateLimit(DEFAULT_UPLOAD_BYTES_RATE_LIMIT, 'uploadBytes');

/** The upload byte budget: none without file fields; `off` means none; else the option, else the built-in one. */
function uploadPolicy(option: string | undefined, schema: SchemaModel): RateLimitPolicy | null | undefined {
  if (!hasFileFields(schema) || option === ANONYMOUS_RATE_LIMIT_OFF) return null;
  if (option === undefined) return BUILT_IN_UPLOAD_BYTES;
  const policy = parseByteRateLimit(option, 'uploadBytes');
  if (policy === undefined) throw new ConfigError('rateLimits.uploadBytes', `must be ${BYTE_RATE_LIMIT_FORMAT}, or off, not "${option}"`);
  return policy;
}

/** The bound on WebSocket upgrades without a credential: `off` means none; else the option, else the built-in one. */
function webSocketPolicy(option: string | undefined): RateLimitPolicy | null | undefined {
  if (option === ANONYMOUS_RATE_LIMIT_OFF) return null;
  return fromOption(option, 'webSocketConnections') ?? BUILT_IN_WEBSOCKET_CONNECTIONS;
}

function builtIn(policy: RateLimitPolicy | null | undefined): boolean {
  return policy === BUILT_IN_ANONYMOUS;
}

/**
 * The quota of anonymous clients: `off` means none; else the option, the schema's, or (when no
 * default quota covers them either) the built-in {@link DEFAULT_ANONYMOUS_RATE_LIMIT}, so that a
 * fresh server is no open amplifier. Undefined: they count against `default`.
 */
function anonymousPolicy(option: string | undefined, schema: SchemaModel, base: RateLimitPolicy | undefined): RateLimitPolicy | null | undefined {
  if (option === ANONYMOUS_RATE_LIMIT_OFF) return null;
  const configured = fromOption(option, 'anonymous') ?? schema.rateLimits.anonymous;
  if (configured !== undefined || base !== undefined) return configured;
  return BUILT_IN_ANONYMOUS;
}

function fromOption(text: string | undefined, name: 'default' | 'anonymous' | 'graphql' | 'webSocketConnections'): RateLimitPolicy | undefined {
  if (text === undefined) return undefined;
  const policy = parseRateLimit(text, name);
  if (policy === undefined) throw new ConfigError(`rateLimits.${name}`, `must be ${RATE_LIMIT_FORMAT}, not "${text}"`);
  return policy;
}

async function counterStore(options: RateLimitOptions, db: SqlDatabase): Promise<CounterStore> {
  const kind = options.store ?? (options.redisUrl !== undefined ? 'redis' : db.networked ? 'database' : 'memory');
  if (kind === 'memory') return new MemoryCounters();
  if (kind === 'database') return new SqlCounters(db);
  if (options.redisUrl === undefined) throw new ConfigError('REDIS_URL', 'RESTGRAPH_RATE_LIMIT_STORE=redis needs REDIS_URL');
  try {
    // Loaded only here: most servers have no Redis, and ioredis is a large module tree to load at start-up.
    const { RedisCounters } = await import('../store/redis-counters.js');
    return await RedisCounters.connect(options.redisUrl);
  } catch (error) {
    throw new ConfigError('REDIS_URL', `cannot reach Redis: ${(error as Error).message}`);
  }
}
