import { RateLimiter, RateLimits, type RateLimitSettings } from '../core/rate-limits.js';
import { ConfigError } from '../errors.js';
import { parseRateLimit, RATE_LIMIT_FORMAT, type RateLimitPolicy } from '../schema/rate-limit-policy.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { MemoryCounters, SqlCounters, type CounterStore } from '../store/rate-limit-counters.js';
import { RedisCounters } from '../store/redis-counters.js';
import type { SqlDatabase } from '../store/sql-database.js';
import type { RateLimitOptions } from './app-options.js';

/**
 * The rate limits in force: the options (from the environment) over the schema file's, counted in
 * the store they name. Undefined when no quota is set anywhere: requests then pay nothing for it.
 *
 * @throws ConfigError for a malformed quota or an unreachable Redis.
 */
export async function createRateLimits(options: RateLimitOptions, schema: SchemaModel, db: SqlDatabase): Promise<RateLimits | undefined> {
  const settings: RateLimitSettings = {
    default: fromOption(options.default, 'default') ?? schema.rateLimits.default,
    anonymous: fromOption(options.anonymous, 'anonymous') ?? schema.rateLimits.anonymous,
    graphql: fromOption(options.graphql, 'graphql') ?? schema.rateLimits.graphql,
  };
  const anyResourceQuota = [...schema.resources.values()].some((r) => Object.keys(r.rateLimits).length > 0);
  if (settings.default === undefined && settings.anonymous === undefined && settings.graphql === undefined && !anyResourceQuota) return undefined;
  return new RateLimits(new RateLimiter(await counterStore(options, db)), settings);
}

function fromOption(text: string | undefined, name: 'default' | 'anonymous' | 'graphql'): RateLimitPolicy | undefined {
  if (text === undefined) return undefined;
  const policy = parseRateLimit(text, name);
  if (policy === undefined) throw new ConfigError(`rateLimits.${name}`, `must be ${RATE_LIMIT_FORMAT}, not "${text}"`);
  return policy;
}

async function counterStore(options: RateLimitOptions, db: SqlDatabase): Promise<CounterStore> {
  const kind = options.store ?? (options.redisUrl !== undefined ? 'redis' : db.dialect === 'postgres' ? 'database' : 'memory');
  if (kind === 'memory') return new MemoryCounters();
  if (kind === 'database') return new SqlCounters(db);
  if (options.redisUrl === undefined) throw new ConfigError('REDIS_URL', 'RESTGRAPH_RATE_LIMIT_STORE=redis needs REDIS_URL');
  try {
    return await RedisCounters.connect(options.redisUrl);
  } catch (error) {
    throw new ConfigError('REDIS_URL', `cannot reach Redis: ${(error as Error).message}`);
  }
}
