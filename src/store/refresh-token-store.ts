import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { SqlDatabase } from './sql-database.js';

const TABLE = '_restgraph_refresh_tokens';

/** A refresh token as stored: never the token, only its SHA-256. */
export interface RefreshTokenRecord {
  id: number;
  /** The session: every token rotated from one sign-in shares it. */
  family: string;
  resource: string;
  recordId: number;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
  revokedAt: string | null;
}

/** SHA-256 of a refresh token, hex. 256 random bits need no slow hash. */
export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * `_restgraph_refresh_tokens`: opaque refresh tokens (256 random bits, base64url), stored hashed,
 * each used once (rotation), grouped by family (one sign-in's session).
 */
export class RefreshTokenStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** Issues a token of `family` (a new family when absent); the token exists nowhere else. */
  async issue(account: { resource: string; recordId: number }, lifetimeMs: number, family: string = randomUUID()): Promise<{ token: string; family: string }> {
    const token = randomBytes(32).toString('base64url');
    const now = Date.now();
    await this.#db.run(
      this.#db.builder
        .insertInto(TABLE)
        .values({
          hash: hashRefreshToken(token),
          family,
          resource: account.resource,
          recordId: account.recordId,
          createdAt: new Date(now).toISOString(),
          expiresAt: new Date(now + lifetimeMs).toISOString(),
        })
        .compile(),
    );
    return { token, family };
  }

  async find(token: string): Promise<RefreshTokenRecord | undefined> {
    const row = await this.#db.one(this.#db.builder.selectFrom(TABLE).selectAll().where('hash', '=', hashRefreshToken(token)).compile());
    if (row === undefined) return undefined;
    return {
      id: Number(row.id),
      family: String(row.family),
      resource: String(row.resource),
      recordId: Number(row.recordId),
      createdAt: String(row.createdAt),
      expiresAt: String(row.expiresAt),
      usedAt: typeof row.usedAt === 'string' ? row.usedAt : null,
      revokedAt: typeof row.revokedAt === 'string' ? row.revokedAt : null,
    };
  }

  /** Marks a token used; false when it was used (or revoked) already: another request rotated it first. */
  async markUsed(id: number): Promise<boolean> {
    const changed = await this.#db.run(
      this.#db.builder.updateTable(TABLE).set({ usedAt: new Date().toISOString() }).where('id', '=', id).where('usedAt', 'is', null).where('revokedAt', 'is', null).compile(),
    );
    return changed === 1;
  }

  /** Revokes every token of a family (sign-out, or reuse of a used token). */
  async revokeFamily(family: string): Promise<void> {
    await this.#db.run(this.#db.builder.updateTable(TABLE).set({ revokedAt: new Date().toISOString() }).where('family', '=', family).where('revokedAt', 'is', null).compile());
  }

  /** Revokes every token of an account, but those of `keep` (the session that asked, on a password change). */
  async revokeAccount(account: { resource: string; recordId: number }, keep?: string): Promise<void> {
    let query = this.#db.builder
      .updateTable(TABLE)
      .set({ revokedAt: new Date().toISOString() })
      .where('resource', '=', account.resource)
      .where('recordId', '=', account.recordId)
      .where('revokedAt', 'is', null);
    if (keep !== undefined) query = query.where('family', '!=', keep);
    await this.#db.run(query.compile());
  }
}
