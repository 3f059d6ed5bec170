import { parseByteSize } from './file-field.js';

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

/**
 * Parses a byte budget `<size>/<window>`: `10GB/1h`, `500MB/1m`, `1048576/30s` (a number of bytes,
 * or a size as a file field's maxSize: B, KB, MB, GB, TB, powers of 1024). Undefined for anything else.
 */
export function parseByteRateLimit(text: string, name: string): RateLimitPolicy | undefined {
  const slash = text.lastIndexOf('/');
  if (slash < 0) return undefined;
  const size = text.slice(0, slash).trim();
  const bytes = /^[1-9][0-9]{0,14}$/.test(size) ? Number(size) : parseByteSize(size);
  const window = parseRateLimit(`1/${text.slice(slash + 1)}`, name);
  if (bytes === undefined || window === undefined) return undefined;
  return Object.freeze({ name, limit: bytes, windowSeconds: window.windowSeconds });
}

export const BYTE_RATE_LIMIT_FORMAT = '"<size>/<window>", like 10GB/1h or 500MB/1m (sizes in B, KB, MB, GB, TB; window units s, m, h, d; at most 31 days)';
