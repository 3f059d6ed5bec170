import { Redis } from 'ioredis';
import { TransientStoreError } from './store-errors.js';
import type { Counted, CounterStore } from './rate-limit-counters.js';

/**
 * Adds ARGV[1] to KEYS[1] only while the sum stays within ARGV[2]; the key expires at ARGV[3]
 * (epoch ms). Returns {used, added}. One round trip, atomic on the Redis server.
 */
const ADD_SCRIPT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local units = tonumber(ARGV[1])
if used + units > tonumber(ARGV[2]) then return {used, 0} end
used = redis.call('INCRBY', KEYS[1], units)
if used == units then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return {used, 1}
`;

type RedisWithAdd = Redis & { rgRateLimitAdd(key: string, units: number, limit: number, expiresAt: number): Promise<[number, number]> };

/**
 * Counters in Redis (`REDIS_URL`), shared by every instance. ioredis pipelines the commands of
 * concurrent requests into one write, so busy instances pay about one round trip per batch.
 */
export class RedisCounters implements CounterStore {
  readonly #redis: RedisWithAdd;
  readonly #prefix: string;

  private constructor(redis: RedisWithAdd, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  /** Connects and checks the connection; rejects when Redis does not answer within `timeoutMs`. */
  static async connect(url: string, options: { prefix?: string; timeoutMs?: number } = {}): Promise<RedisCounters> {
    const redis = new Redis(url, {
      enableAutoPipelining: true,
      lazyConnect: true,
      connectTimeout: options.timeoutMs ?? 5000,
      // A request must not wait for Redis to come back: it fails, and the limiter answers 503.
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
    });
    redis.defineCommand('rgRateLimitAdd', { numberOfKeys: 1, lua: ADD_SCRIPT });
    // Connection trouble is reported through the commands that fail; keep it from being unhandled.
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      redis.disconnect();
      throw error;
    }
    return new RedisCounters(redis as RedisWithAdd, options.prefix ?? 'restgraph:rl:');
  }

  async add(key: string, units: number, limit: number, expiresAt: number): Promise<Counted> {
    try {
      const [used, added] = await this.#redis.rgRateLimitAdd(this.#prefix + key, units, limit, expiresAt);
      return { used, added: added === 1 };
    } catch (error) {
      throw new TransientStoreError('Redis (rate-limit counters) failed', { cause: error });
    }
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}
