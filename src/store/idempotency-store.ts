import type { SqlDatabase, SqlExecutor } from './sql-database.js';
import { ConstraintViolation } from './store-errors.js';

const TABLE = '_restgraph_idempotency_keys';

/** A response stored under an idempotency key, replayed to retries. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type ClaimResult =
  | { outcome: 'claimed' }
  | { outcome: 'in-flight' }
  | { outcome: 'mismatch' }
  | { outcome: 'completed'; response: StoredResponse };

export interface IdempotencyStoreOptions {
  /** How long a completed key replays its response. @default 86_400_000 (24 h) */
  ttlMs: number;
  /**
   * How long a claim may stay in flight before another request may take it over. A claim and its
   * change commit together, so an abandoned claim (crashed process) never hides a committed change.
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
      return await this.#claimOnce(scope, key, fingerprint);
    } catch (error) {
      // Another instance inserted the same key between our read and our insert (PostgreSQL runs
      // such transactions side by side): read again, and see it as a retry sees it.
      if (error instanceof ConstraintViolation && error.kind === 'unique') return this.#claimOnce(scope, key, fingerprint);
      throw error;
    }
  }

  async #claimOnce(scope: string, key: string, fingerprint: string): Promise<ClaimResult> {
    const now = Date.now();
    return this.#db.transaction(async (tx) => {
      const rows = await tx.all(
        this.#db.builder.selectFrom(TABLE).selectAll().where('scope', '=', scope).where('key', '=', key).compile(),
      );
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
      if (row !== undefined) {
        await tx.run(this.#db.builder.deleteFrom(TABLE).where('scope', '=', scope).where('key', '=', key).compile());
      }
      await tx.run(
        this.#db.builder
          .insertInto(TABLE)
          .values({
            scope,
            key,
            fingerprint,
            state: 'in-flight',
            createdAt: new Date(now).toISOString(),
            expiresAt: new Date(now + this.#options.ttlMs).toISOString(),
          })
          .compile(),
      );
      return { outcome: 'claimed' };
    });
  }

  /** Stores the response of a claimed key; call it inside the transaction of the change. */
  async complete(tx: SqlExecutor, scope: string, key: string, response: StoredResponse): Promise<void> {
    await tx.run(
      this.#db.builder
        .updateTable(TABLE)
        .set({ state: 'completed', status: response.status, headers: JSON.stringify(response.headers), body: response.body })
        .where('scope', '=', scope)
        .where('key', '=', key)
        .compile(),
    );
  }

  /** Forgets a claim whose request failed, so the client may retry. */
  async release(scope: string, key: string): Promise<void> {
    await this.#db.run(
      this.#db.builder.deleteFrom(TABLE).where('scope', '=', scope).where('key', '=', key).where('state', '=', 'in-flight').compile(),
    );
  }

  /** Deletes expired keys; resolves to how many. */
  async prune(now = Date.now()): Promise<number> {
    return this.#db.run(this.#db.builder.deleteFrom(TABLE).where('expiresAt', '<=', new Date(now).toISOString()).compile());
  }
}
