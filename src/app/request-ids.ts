import { randomBytes } from 'node:crypto';

/** The counter's share of an id: 48 bits, 12 hex digits. */
const COUNTER_LIMIT = 2 ** 48;

/**
 * Makes the ids of requests that bring none: UUIDs of version 8 (RFC 9562, section 5.8), whose
 * first 74 bits are random once per process and whose last 48 count requests. They look like any
 * UUID, never repeat within a process (for 2^48 requests) and, with 74 random bits, not across
 * processes and restarts either. An id is one concatenation and a table lookup, not a random UUID
 * per request (docs/performance.md, request ids).
 *
 * @example requestIds()() // "3f1c9a7e-4b2d-8a61-9c3e-000000000001"
 */
export function requestIds(): () => string {
  const hex = randomBytes(10).toString('hex');
  // xxxxxxxx-xxxx-8xxx-[89ab]xxx-: 32 + 16 + 12 + 14 random bits, the version 8 and the variant 10.
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  const prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(12, 15)}-${variant}${hex.slice(17, 20)}-`;
  let count = 0;
  // The counter's first 9 hex digits change every 4,096 ids; the last 3 come from a table.
  let block = -1;
  let blockPrefix = '';
  return () => {
    count = count + 1 === COUNTER_LIMIT ? 0 : count + 1;
    const high = Math.floor(count / 4096);
    if (high !== block) {
      block = high;
      blockPrefix = prefix + high.toString(16).padStart(9, '0');
    }
    return blockPrefix + (LAST_DIGITS[count % 4096] ?? '');
  };
}

/** 000 … fff. */
const LAST_DIGITS: readonly string[] = Array.from({ length: 4096 }, (_, i) => i.toString(16).padStart(3, '0'));
