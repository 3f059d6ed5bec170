import type { ErrorDetail } from '../errors.js';
import { hasNul, NUL_DETAIL } from './storable-text.js';
import { isPlainObject } from './merge-patch.js';
import type { TokenClaims } from '../store/api-key-store.js';

export type { TokenClaims };

/**
 * An API key's claims (docs/auth.md#rules) as a token request gives them: the values access rules
 * read as `@auth.claims.<name>`, as a JWT's payload gives them for JWTs. Flat: each a string, a
 * number, a boolean, or an array of those (`orgId in @auth.claims.orgs`); bounded in count and size.
 */

/** How many claims one key may carry. */
export const MAX_CLAIMS = 20;
/** Characters of a claim's name: an identifier, as a rule spells it after `@auth.claims.`. */
export const CLAIM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Characters of one string value. */
export const MAX_CLAIM_TEXT = 200;
/** Items of one array value. */
export const MAX_CLAIM_ITEMS = 50;
/** Bytes of all claims together, as JSON: they are cached with the key and read by every rule. */
export const MAX_CLAIMS_BYTES = 4096; // 4 KiB

const NAME_DETAIL = 'is not a claim name: a letter or _ first, then letters, digits or _ (at most 64)';

/** The problem with one scalar claim value, or undefined when it is one. */
function scalarProblem(value: unknown): string | undefined {
  if (typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'must be a finite number';
  if (typeof value === 'string') {
    if (value.length > MAX_CLAIM_TEXT) return `must be at most ${MAX_CLAIM_TEXT} characters`;
    return hasNul(value) ? NUL_DETAIL : undefined;
  }
  return 'must be a string, a number, a boolean, or an array of those';
}

/**
 * Checks a token request's `claims`, adding each problem to `problems` (pointers under
 * `/claims`); resolves to the claims when there is none.
 */
export function readTokenClaims(value: unknown, problems: ErrorDetail[]): TokenClaims | undefined {
  if (!isPlainObject(value)) {
    problems.push({ pointer: '/claims', detail: 'must be a JSON object of claim names to values' });
    return undefined;
  }
  const before = problems.length;
  const entries = Object.entries(value);
  if (entries.length > MAX_CLAIMS) problems.push({ pointer: '/claims', detail: `must hold at most ${MAX_CLAIMS} claims (it holds ${entries.length})` });
  for (const [name, claim] of entries) {
    const pointer = `/claims/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (!CLAIM_NAME.test(name)) problems.push({ pointer, detail: NAME_DETAIL });
    if (Array.isArray(claim)) {
      if (claim.length > MAX_CLAIM_ITEMS) problems.push({ pointer, detail: `must hold at most ${MAX_CLAIM_ITEMS} items` });
      claim.forEach((item: unknown, index) => {
        const problem = Array.isArray(item) ? 'must be a string, a number or a boolean (arrays hold no arrays)' : scalarProblem(item);
        if (problem !== undefined) problems.push({ pointer: `${pointer}/${index}`, detail: problem });
      });
      continue;
    }
    const problem = scalarProblem(claim);
    if (problem !== undefined) problems.push({ pointer, detail: problem });
  }
  if (problems.length > before) return undefined;
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > MAX_CLAIMS_BYTES) {
    problems.push({ pointer: '/claims', detail: `must take at most ${MAX_CLAIMS_BYTES} bytes as JSON (they take ${bytes})` });
    return undefined;
  }
  return value as TokenClaims;
}
