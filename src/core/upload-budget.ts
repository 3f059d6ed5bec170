import { RateLimitedError } from '../errors.js';
import type { RateLimitPolicy } from '../schema/rate-limit-policy.js';
import type { RateLimiter, RateLimitResult } from './rate-limits.js';

/**
 * One request's share of its credential's upload byte budget (docs/rate-limits.md#upload-bytes):
 * the bytes of the files it uploads are counted while they stream, against the budget of its
 * credential (an anonymous client's: of its address), in the same counter store as the other
 * quotas. Every upload path (a raw upload, a multipart file part, a GraphQL upload) counts
 * through the upload pipeline, which takes one of these.
 */
export class UploadBudget {
  readonly #limiter: RateLimiter;
  readonly #policy: RateLimitPolicy;
  readonly #partition: string;

  constructor(limiter: RateLimiter, policy: RateLimitPolicy, partition: string) {
    this.#limiter = limiter;
    this.#policy = policy;
    this.#partition = partition;
  }

  /**
   * Refuses an upload before its body is read: when the window's budget is spent, or cannot hold
   * the `declared` length. Counts nothing. @throws RateLimitedError
   */
  async check(declared: number | undefined): Promise<void> {
    const result = await this.#limiter.consume([this.#policy], this.#partition, 0);
    const remaining = result.states[0]?.remaining ?? 0;
    if (remaining > 0 && (declared === undefined || declared <= remaining)) return;
    throw this.#refusal({ ...result, allowed: false, retryAfterSeconds: result.states[0]?.resetSeconds ?? 1 });
  }

  /** Counts `bytes` received. @throws RateLimitedError when they do not fit in what is left (nothing is counted then) */
  charge(bytes: number): Promise<void> | undefined {
    if (bytes === 0) return undefined;
    const result = this.#limiter.consume([this.#policy], this.#partition, bytes);
    if (result instanceof Promise) return result.then((r) => this.#settle(r));
    this.#settle(result);
    return undefined;
  }

  #settle(result: RateLimitResult): void {
    if (!result.allowed) throw this.#refusal(result);
  }

  #refusal(result: RateLimitResult): RateLimitedError {
    const { name, limit, windowSeconds } = this.#policy;
    const remaining = result.states[0]?.remaining ?? 0;
    return new RateLimitedError(`The upload quota "${name}" (${limit} bytes per ${windowSeconds} s) is used up${remaining > 0 ? ` but for ${remaining} bytes` : ''}; try again in ${result.retryAfterSeconds} s.`, {
      headers: {
        'retry-after': String(result.retryAfterSeconds),
        'ratelimit-policy': `"${name}";q=${limit};w=${windowSeconds}`,
        ratelimit: `"${name}";r=${remaining};t=${result.states[0]?.resetSeconds ?? result.retryAfterSeconds}`,
      },
    });
  }
}
