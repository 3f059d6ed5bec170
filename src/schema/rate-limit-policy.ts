/** A quota: `limit` units (requests, or GraphQL cost points) per window, per partition. */
export interface RateLimitPolicy {
  /** Shown to clients in `RateLimit-Policy` and `RateLimit`: `default`, `anonymous`, `users.create`, `graphql`. */
  readonly name: string;
  readonly limit: number;
  readonly windowSeconds: number;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
const SPEC = /^\s*([1-9]\d{0,9})\s*\/\s*([1-9]\d{0,6})?\s*([smhd])\s*$/;

/**
 * Parses `<count>/<window>`: `100/1m`, `100/m`, `5000/1h`, `10/30s`. Returns undefined for anything
 * else; callers say where the text came from.
 */
export function parseRateLimit(text: string, name: string): RateLimitPolicy | undefined {
  const match = SPEC.exec(text);
  if (match === null) return undefined;
  const [, count = '', amount = '1', unit = 's'] = match;
  const windowSeconds = Number(amount) * (UNITS[unit] ?? 1);
  if (windowSeconds > 31 * 86_400) return undefined;
  return Object.freeze({ name, limit: Number(count), windowSeconds });
}

export const RATE_LIMIT_FORMAT = '"<count>/<window>", like 100/1m, 1000/1h or 10/30s (window units s, m, h, d; at most 31 days)';
