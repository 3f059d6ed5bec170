import { createHash, randomBytes } from 'node:crypto';
import type { SqlDatabase } from './sql-database.js';
import { pruneOlderThan } from './time-ordered-prune.js';

const TABLE = '_restgraph_one_time_tokens';

/** What a one-time token proves: that its holder reads the account's mailbox, for one of these acts. */
export type OneTimeTokenPurpose = 'verify-email' | 'reset-password';

/**
 * The longest a one-time token may live: 7 days. Rows created longer ago than this are past their
 * expiry whatever their own was, so pruning can find them by creation time (ids in creation
 * order) without an index on the expiry every issue would pay for.
 */
export const MAX_ONE_TIME_TOKEN_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** A token just issued: `token` is what goes into the link and exists nowhere else. */
export interface IssuedOneTimeToken {
  /** 256 random bits, base64url (43 characters). */
  readonly token: string;
  /** When it stops being accepted (ISO 8601). */
  readonly expiresAt: string;
}

/** SHA-256 of a token, hex: what is stored and looked up. 256 random bits need no slow hash. */
export function hashOneTimeToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A bound token: `<account id>.<256 random bits>`, so that its binding can be found before it is looked up. */
const BOUND_TOKEN = /^(\d{1,16})\.[A-Za-z0-9_-]{43}$/;
const UNBOUND_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** What is stored of a token: its SHA-256, or, bound, the SHA-256 of the token and its binding. */
function storedHash(token: string, binding: string | undefined): string {
  return hashOneTimeToken(binding === undefined ? token : `${token}\n${binding}`);
}

/**
 * Single-use, short-lived tokens for the links of account emails (email verification, password
 * reset), as OWASP's Forgot Password cheat sheet asks: random, stored hashed, bound to one account
 * and one purpose, expiring, and consumed at most once, atomically, across instances.
 */
export class OneTimeTokenStore {
  readonly #db: SqlDatabase;
  readonly #now: () => number;

  constructor(db: SqlDatabase, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  /**
   * Issues a token for `accountId` and `purpose`, valid for `ttlMs` (at most
   * {@link MAX_ONE_TIME_TOKEN_TTL_MS}). Earlier tokens of the same account and purpose stay valid
   * unless {@link invalidate} is called (a reset that succeeds should invalidate the others).
   *
   * With a `binding` (the address the link is sent to), the token is `<accountId>.<random>` and
   * is stored as the SHA-256 of itself and the binding: {@link consume} accepts it only with the
   * same binding, and the binding is stored nowhere in clear.
   *
   * @throws RangeError for a ttl that is not positive or is over the maximum.
   */
  async issue(purpose: OneTimeTokenPurpose, accountId: string | number, ttlMs: number, binding?: string): Promise<IssuedOneTimeToken> {
    if (!(ttlMs > 0 && ttlMs <= MAX_ONE_TIME_TOKEN_TTL_MS)) throw new RangeError(`a one-time token lives from 1 ms to ${MAX_ONE_TIME_TOKEN_TTL_MS} ms, not ${ttlMs}`);
    const random = randomBytes(32).toString('base64url');
    const token = binding === undefined ? random : `${String(accountId)}.${random}`;
    if (binding !== undefined && !BOUND_TOKEN.test(token)) throw new RangeError(`a bound one-time token needs a numeric account id, not ${String(accountId)}`);
    const now = this.#now();
    const expiresAt = new Date(now + ttlMs).toISOString();
    const values = { purpose, accountId: String(accountId), hash: storedHash(token, binding), createdAt: new Date(now).toISOString(), expiresAt, usedAt: null };
    await this.#db.transaction((tx) => tx.run(this.#db.builder.insertInto(TABLE).values(values).compile()));
    return { token, expiresAt };
  }

  /**
   * Consumes a token: when it was issued for `purpose`, has not expired and was not used, marks it
   * used and resolves to its account id (as text); otherwise resolves to undefined (unknown,
   * expired, used, or of another purpose: the caller answers them all alike). Of two concurrent
   * consumptions of one token, exactly one gets the id. A bound token needs its `binding`
   * (resolving to undefined with any other); an unbound one, none.
   */
  async consume(purpose: OneTimeTokenPurpose, token: string, binding?: string): Promise<string | undefined> {
    // Not a token we could have issued: no statement for it.
    if (!(binding === undefined ? UNBOUND_TOKEN : BOUND_TOKEN).test(token)) return undefined;
    const now = new Date(this.#now()).toISOString();
    const statement = this.#db.builder
      .updateTable(TABLE)
      .set({ usedAt: now })
      .where('hash', '=', storedHash(token, binding))
      .where('purpose', '=', purpose)
      .where('usedAt', 'is', null)
      .where('expiresAt', '>', now)
      .returning('accountId')
      .compile();
    // The update is the claim: the database lets one of two concurrent updates match the row.
    const row = await this.#db.transaction(async (tx) => tx.one(statement));
    return row === undefined ? undefined : String(row.accountId);
  }

  /** The account id a bound token names (not yet checked: {@link consume} does), or undefined for any other text. */
  static accountOf(token: string): string | undefined {
    return BOUND_TOKEN.exec(token)?.[1];
  }

  /** Makes every unused token of the account (of one purpose, or all) unusable; resolves to how many. */
  async invalidate(accountId: string | number, purpose?: OneTimeTokenPurpose): Promise<number> {
    let query = this.#db.builder.updateTable(TABLE).set({ usedAt: new Date(this.#now()).toISOString() }).where('accountId', '=', String(accountId)).where('usedAt', 'is', null);
    if (purpose !== undefined) query = query.where('purpose', '=', purpose);
    const statement = query.compile();
    return this.#db.transaction((tx) => tx.run(statement));
  }

  /**
   * Deletes the tokens created more than {@link MAX_ONE_TIME_TOKEN_TTL_MS} ago (all expired, used
   * or not) in batches; resolves to how many. Shorter-lived tokens wait for this too: until then an
   * expired row is refused by {@link consume} like a used one.
   */
  async prune(now = this.#now()): Promise<number> {
    return pruneOlderThan(this.#db, TABLE, 'createdAt', new Date(now - MAX_ONE_TIME_TOKEN_TTL_MS).toISOString());
  }
}
