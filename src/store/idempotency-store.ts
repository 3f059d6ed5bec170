import { randomUUID } from 'node:crypto';
import type { SqlDatabase, SqlExecutor, SqlRow } from './sql-database.js';
import { ConstraintViolation } from './store-errors.js';

const TABLE = '_restgraph_idempotency_keys';

/** A response stored under an idempotency key, replayed to retries. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A request's hold on a key. Its token fences it: once another request has taken the key over,
 * completing or releasing with this claim changes nothing.
 */
export interface IdempotencyClaim {
  readonly scope: string;
  readonly key: string;
  readonly token: string;
}

export type ClaimResult =
  | { outcome: 'claimed'; claim: IdempotencyClaim }
  | { outcome: 'in-flight' }
  | { outcome: 'mismatch' }
  | { outcome: 'completed'; response: StoredResponse };

export interface IdempotencyStoreOptions {
  /** How long a completed key replays its response. @default 86_400_000 (24 h) */
  ttlMs: number;
  /**
   * How long a claim may stay in flight before another request may take it over. A claim and its
   * change commit together, so an abandoned claim (crashed process) never hides a committed change;
   * a request still running when its claim is taken over commits nothing ({@link complete}).
   * @default 60_000 (60 s)
   */
  abandonAfterMs: number;
}

/**
 * Idempotency keys (draft-ietf-httpapi-idempotency-key-header): a key is claimed before the
 * request runs, completed with the response in the same transaction as the change, and released
 * when the request fails so that a retry runs again.
 */
export class IdempotencyStore {
  readonly #db: SqlDatabase;
  readonly #options: IdempotencyStoreOptions;

  constructor(db: SqlDatabase, options: IdempotencyStoreOptions) {
    this.#db = db;
    this.#options = options;
  }

  /** Claims `key` for a request with this fingerprint, or says why not. */
  async claim(scope: string, key: string, fingerprint: string): Promise<ClaimResult> {
    try {
      return (await this.#claimOnce(scope, key, fingerprint)) ?? (await this.#claimAgain(scope, key, fingerprint));
    } catch (error) {
      // Another instance inserted the same key between our read and our insert (PostgreSQL runs
      // such transactions side by side): read again, and see it as a retry sees it.
      if (error instanceof ConstraintViolation && error.kind === 'unique') return this.#claimAgain(scope, key, fingerprint);
      throw error;
    }
  }

  /** After losing a race for the key: what a retry sees now (in flight, when it changed yet again). */
  async #claimAgain(scope: string, key: string, fingerprint: string): Promise<ClaimResult> {
    return (await this.#claimOnce(scope, key, fingerprint)) ?? { outcome: 'in-flight' };
  }

  /** Resolves to undefined when another request changed the key between our read and our write. */
  async #claimOnce(scope: string, key: string, fingerprint: string): Promise<ClaimResult | undefined> {
    const now = Date.now();
    return this.#db.transaction(async (tx) => {
      const rows = await tx.all(this.#db.builder.selectFrom(TABLE).selectAll().where('scope', '=', scope).where('key', '=', key).compile());
      const row = rows[0];
      const expired = row !== undefined && Date.parse(String(row.expiresAt)) <= now;
      const abandoned = row !== undefined && row.state === 'in-flight' && Date.parse(String(row.createdAt)) + this.#options.abandonAfterMs <= now;
      if (row !== undefined && !expired && !abandoned) {
        if (row.fingerprint !== fingerprint) return { outcome: 'mismatch' };
        if (row.state === 'in-flight') return { outcome: 'in-flight' };
        return {
          outcome: 'completed',
          response: { status: Number(row.status), headers: JSON.parse(String(row.headers)) as Record<string, string>, body: String(row.body) },
        };
      }
      // Only the row as read goes: on PostgreSQL its request may be completing it right now, and
      // then this delete waits for that commit and finds the row changed.
      if (row !== undefined && (await this.#deleteUnchanged(tx, row)) === 0) return undefined;
      const claim: IdempotencyClaim = { scope, key, token: randomUUID() };
      await tx.run(
        this.#db.builder
          .insertInto(TABLE)
          .values({
            scope,
            key,
            fingerprint,
            state: 'in-flight',
            claim: claim.token,
            createdAt: new Date(now).toISOString(),
            expiresAt: new Date(now + this.#options.ttlMs).toISOString(),
          })
          .compile(),
      );
      return { outcome: 'claimed', claim };
    });
  }

  /** Deletes the key's row if it still is the one read; resolves to the rows deleted (0 or 1). */
  async #deleteUnchanged(tx: SqlExecutor, row: SqlRow): Promise<number> {
    const token = row.claim;
    let query = this.#db.builder
      .deleteFrom(TABLE)
      .where('scope', '=', row.scope)
      .where('key', '=', row.key)
      .where('state', '=', row.state)
      .where('createdAt', '=', row.createdAt);
    // Claims made before claims carried tokens have none.
    query = typeof token === 'string' ? query.where('claim', '=', token) : query.where('claim', 'is', null);
    return tx.run(query.compile());
  }

  /**
   * Stores the response of a claimed key; call it inside the transaction of the change. Resolves to
   * false when another request has taken the key over: the caller must then roll the change back.
   */
  async complete(tx: SqlExecutor, claim: IdempotencyClaim, response: StoredResponse): Promise<boolean> {
    const changed = await tx.run(
      this.#db.builder
        .updateTable(TABLE)
        .set({ state: 'completed', status: response.status, headers: JSON.stringify(response.headers), body: response.body })
        .where('scope', '=', claim.scope)
        .where('key', '=', claim.key)
        .where('claim', '=', claim.token)
        .where('state', '=', 'in-flight')
        .compile(),
    );
    return changed === 1;
  }

  /** Forgets a claim whose request failed, so the client may retry; a claim taken over stays its new owner's. */
  async release(claim: IdempotencyClaim): Promise<void> {
    await this.#db.run(
      this.#db.builder
        .deleteFrom(TABLE)
        .where('scope', '=', claim.scope)
        .where('key', '=', claim.key)
        .where('claim', '=', claim.token)
        .where('state', '=', 'in-flight')
        .compile(),
    );
  }

  /** Deletes expired keys; resolves to how many. */
  async prune(now = Date.now()): Promise<number> {
    return this.#db.run(this.#db.builder.deleteFrom(TABLE).where('expiresAt', '<=', new Date(now).toISOString()).compile());
  }
}
