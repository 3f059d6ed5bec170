import { createHash } from 'node:crypto';
import { RateLimitedError } from '../errors.js';
import type { RateLimitPolicy } from '../schema/rate-limit-policy.js';
import { clientNetwork, type RateLimiter, type RateLimitResult } from './rate-limits.js';

/**
 * Throttling of the account endpoints (sign-up, sign-in, verification, password reset), apart from
 * the general request quotas: its own policies and counters, in the same counter store (so shared
 * by every instance that shares the store: PostgreSQL or Redis). OWASP's Authentication cheat
 * sheet: limit failed sign-ins per account, and requests per client, without locking accounts out
 * for good (the counts are of fixed windows, and end with them).
 */

/** The policies (`<count>/<window>`, parsed). */
export interface AccountThrottleSettings {
  /** Failed sign-ins per identifier (an email address, case-insensitive) per window. @default 10 per 15 min */
  readonly signInFailures: RateLimitPolicy;
  /** Account requests per client address (IPv6: per /64) per window. @default 100 per minute */
  readonly accountRequests: RateLimitPolicy;
  /** Emails (verification, reset) per identifier per window: no one's mailbox is flooded through us. @default 5 per hour */
  readonly accountEmails: RateLimitPolicy;
}

/** Whether an act may go ahead, and if not, in how many seconds its window ends. */
export interface ThrottleDecision {
  readonly allowed: boolean;
  /** 0 when allowed. */
  readonly retryAfterSeconds: number;
}

/**
 * The calls the account endpoints make. Identifiers are counted by a hash of their folded form, so
 * the counter store (a shared table, Redis) holds no email addresses; an identifier no account has
 * is counted like any other, so the answers tell nothing of which accounts exist.
 */
export class AccountThrottle {
  readonly #limiter: RateLimiter;
  readonly #settings: AccountThrottleSettings;

  constructor(limiter: RateLimiter, settings: AccountThrottleSettings) {
    this.#limiter = limiter;
    this.#settings = settings;
  }

  get settings(): AccountThrottleSettings {
    return this.#settings;
  }

  /**
   * Counts one account request from `address` (the request's client address), first thing in every
   * account endpoint.
   *
   * @throws RateLimitedError (429 with Retry-After) when the address has used up its requests.
   */
  async checkAccountRequest(address: string | undefined): Promise<void> {
    const result = await this.#limiter.consume([this.#settings.accountRequests], `ip:${clientNetwork(address)}`);
    if (!result.allowed) throw refusal(result, 'Too many account requests from this address');
  }

  /**
   * Whether `identifier` may try to sign in: false once its failed sign-ins fill the window. Asked
   * before the password is checked, so a throttled identifier costs no password hashing. Counts
   * nothing.
   */
  async signInAllowed(identifier: string): Promise<ThrottleDecision> {
    const result = await this.#limiter.consume([this.#settings.signInFailures], identifierPartition(identifier), 0);
    const state = result.states[0];
    if (state === undefined || state.remaining > 0) return { allowed: true, retryAfterSeconds: 0 };
    return { allowed: false, retryAfterSeconds: state.resetSeconds };
  }

  /** {@link signInAllowed}, as a refusal. @throws RateLimitedError (429 with Retry-After). */
  async assertSignInAllowed(identifier: string): Promise<void> {
    const decision = await this.signInAllowed(identifier);
    if (!decision.allowed) {
      throw new RateLimitedError(`Too many failed sign-ins for this identifier; try again in ${decision.retryAfterSeconds} s.`, {
        headers: { 'retry-after': String(decision.retryAfterSeconds) },
      });
    }
  }

  /**
   * Takes one of `identifier`'s sign-in attempts before its password is checked, atomically in the
   * counter store, so that concurrent attempts (on every instance sharing the store) never check
   * more passwords than the quota of failures: a burst of 1,000 hashes at most 10. The attempt
   * counts as a failure unless {@link releaseSignIn} gives it back (the password was right).
   *
   * @throws RateLimitedError (429 with Retry-After) when the window's attempts are used up: no hashing.
   */
  async reserveSignIn(identifier: string): Promise<void> {
    const result = await this.#limiter.consume([this.#settings.signInFailures], identifierPartition(identifier));
    if (!result.allowed) throw refusal(result, 'Too many failed sign-ins for this identifier');
  }

  /**
   * Gives back the attempt {@link reserveSignIn} took: the sign-in succeeded, so it is no failure.
   * (When the window ended in between, the next window starts one attempt richer: never poorer.)
   */
  async releaseSignIn(identifier: string): Promise<void> {
    await this.#limiter.consume([this.#settings.signInFailures], identifierPartition(identifier), -1);
  }

  /**
   * Counts a failed sign-in of `identifier` (a wrong password, or an identifier no account has:
   * both alike). Resolves to whether another attempt is still allowed in this window.
   */
  async recordFailedSignIn(identifier: string): Promise<ThrottleDecision> {
    const result = await this.#limiter.consume([this.#settings.signInFailures], identifierPartition(identifier));
    const state = result.states[0];
    if (state === undefined || (result.allowed && state.remaining > 0)) return { allowed: true, retryAfterSeconds: 0 };
    return { allowed: false, retryAfterSeconds: state.resetSeconds };
  }

  /**
   * Counts an email to `identifier` (verification or reset) and resolves to whether it may be sent.
   * When not, the endpoint answers as it always does and sends nothing: a 429 here would tell
   * which addresses have accounts, and the mailbox's owner is not the one asking.
   */
  async allowEmail(identifier: string): Promise<boolean> {
    return (await this.decideEmail(identifier)).allowed;
  }

  /** {@link allowEmail}, with how long until the address's quota allows another (for an admin's resend, which may say so). */
  async decideEmail(identifier: string): Promise<ThrottleDecision> {
    const result = await this.#limiter.consume([this.#settings.accountEmails], identifierPartition(identifier));
    if (result.allowed) return { allowed: true, retryAfterSeconds: 0 };
    return { allowed: false, retryAfterSeconds: Math.max(1, result.states[0]?.resetSeconds ?? 60) };
  }

  close(): Promise<void> {
    return this.#limiter.close();
  }
}

/** The counter partition of an identifier: a hash of its trimmed, case-folded form. */
function identifierPartition(identifier: string): string {
  return `id:${createHash('sha256').update(identifier.trim().toLowerCase()).digest('base64url')}`;
}

function refusal(result: RateLimitResult, what: string): RateLimitedError {
  return new RateLimitedError(`${what}; try again in ${result.retryAfterSeconds} s.`, { headers: { 'retry-after': String(result.retryAfterSeconds) } });
}
