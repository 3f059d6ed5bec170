import { LRUCache } from 'lru-cache';
import type { Principal } from '../core/principal.js';

/**
 * Bytes the cache may hold. Keyed by the whole token: a different signature is a different entry,
 * so a forged token is never answered from here; many valid tokens only evict the least recently
 * used entries.
 */
const TOKEN_CACHE_BYTES = 4 * 1024 * 1024; // 4 MiB
/** What an entry costs besides its token (estimate): the entry, its principal and the decoded claims. */
const TOKEN_ENTRY_OVERHEAD_BYTES = 512;

interface VerifiedToken {
  principal: Principal;
  /** Until when the entry may answer (ms): the token's `exp`, or sooner. */
  validUntil: number;
}

/**
 * Account access tokens verified lately, by the token: a request repeating one skips the EdDSA
 * verification, which costs several times a whole cached-key request. An entry answers until the
 * token expires or `cacheMs` has passed, whichever is first: the same bound as the API-key cache
 * on how late a change is noticed (here: a signing key retired or deleted).
 */
export class VerifiedTokenCache {
  readonly #cacheMs: number;
  readonly #entries = new LRUCache<string, VerifiedToken>({
    maxSize: TOKEN_CACHE_BYTES,
    sizeCalculation: (_entry, token) => 2 * token.length + TOKEN_ENTRY_OVERHEAD_BYTES,
  });

  /** @param cacheMs how long a verified token is trusted without verifying it again; 0: never cached. */
  constructor(cacheMs: number) {
    this.#cacheMs = cacheMs;
  }

  /** The principal of a token verified lately and not expired since, else undefined. */
  get(token: string, now: number): Principal | undefined {
    const entry = this.#entries.get(token);
    if (entry === undefined) return undefined;
    if (entry.validUntil > now) return entry.principal;
    this.#entries.delete(token);
    return undefined;
  }

  /** Forgets every token of account `subject` at once (its sessions were ended on this instance). */
  forgetAccount(subject: string): void {
    const tokens = [...this.#entries.entries()].filter(([, entry]) => entry.principal.account === true && entry.principal.subject === subject).map(([token]) => token);
    for (const token of tokens) this.#entries.delete(token);
  }

  /** Remembers a token just verified; its principal's `exp` claim (seconds) bounds the entry. */
  remember(token: string, principal: Principal, now: number): void {
    const exp = principal.claims?.exp;
    if (this.#cacheMs <= 0 || typeof exp !== 'number') return;
    const validUntil = Math.min(exp * 1000, now + this.#cacheMs);
    if (validUntil > now) this.#entries.set(token, { principal, validUntil });
  }
}
