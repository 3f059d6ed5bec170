import { createHash } from 'node:crypto';
import type { SqlDatabase, SqlExecutor } from './sql-database.js';

const TABLE = '_restgraph_credentials';

/** An account's credentials, kept apart from its record (never in any answer or export). */
export interface StoredCredentials {
  /** The `$argon2id$…` string; null: the account has no password (signs in another way). */
  passwordHash: string | null;
  /**
   * The verification of its identifier (email): `<instant> <SHA-256 of the address verified>`, as
   * {@link verificationMark} writes it; null: never. It holds for that address only: an account
   * whose email changed since is not verified ({@link isVerifiedFor}).
   */
  emailVerifiedAt: string | null;
}

function addressDigest(address: string): string {
  return createHash('sha256').update(address).digest('base64url');
}

/** The `emailVerifiedAt` value of `address` verified now. */
export function verificationMark(address: string, now = new Date().toISOString()): string {
  return `${now} ${addressDigest(address)}`;
}

/** Whether `emailVerifiedAt` (a {@link verificationMark}) verified `address`, the account's identifier as stored now. */
export function isVerifiedFor(emailVerifiedAt: string | null | undefined, address: unknown): boolean {
  if (typeof emailVerifiedAt !== 'string' || typeof address !== 'string') return false;
  const space = emailVerifiedAt.indexOf(' ');
  return space > 0 && emailVerifiedAt.slice(space + 1) === addressDigest(address);
}

/** Which record an account is: its resource, id and `createdAt` (a later record under a reused id is another account). */
export interface AccountKey {
  resource: string;
  recordId: number;
  recordCreatedAt: string;
}

/** `_restgraph_credentials`: password hashes and verification marks of accounts, by record. */
export class CredentialStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** The credentials of this record, or undefined when it has none (or they belonged to an earlier record with its id). */
  async find(account: AccountKey, executor: SqlExecutor = this.#db): Promise<StoredCredentials | undefined> {
    const row = await executor.one(
      this.#db.builder.selectFrom(TABLE).select(['passwordHash', 'emailVerifiedAt', 'recordCreatedAt']).where('resource', '=', account.resource).where('recordId', '=', account.recordId).compile(),
    );
    if (row === undefined || row.recordCreatedAt !== account.recordCreatedAt) return undefined;
    return { passwordHash: typeof row.passwordHash === 'string' ? row.passwordHash : null, emailVerifiedAt: typeof row.emailVerifiedAt === 'string' ? row.emailVerifiedAt : null };
  }

  /** Sets the password hash of an account (creating its credentials, replacing those of an earlier record with its id). */
  async setPassword(account: AccountKey, passwordHash: string, executor: SqlExecutor = this.#db): Promise<void> {
    await this.#upsert(account, { passwordHash }, executor);
  }

  /** Marks `address`, the account's identifier, as verified (now), keeping its password. */
  async markEmailVerified(account: AccountKey, address: string, executor: SqlExecutor = this.#db): Promise<void> {
    await this.#upsert(account, { emailVerifiedAt: verificationMark(address) }, executor);
  }

  /**
   * Every credentials row of `resource`'s accounts, by record id ascending, read `pageSize` at a
   * time (for `export data --with-credentials`): each with the record `createdAt` it is bound to.
   */
  async *all(resource: string, executor: SqlExecutor = this.#db, pageSize = 1000): AsyncGenerator<AccountKey & StoredCredentials> {
    let after = 0;
    for (;;) {
      const page = await executor.all(
        this.#db.builder
          .selectFrom(TABLE)
          .select(['recordId', 'recordCreatedAt', 'passwordHash', 'emailVerifiedAt'])
          .where('resource', '=', resource)
          .where('recordId', '>', after)
          .orderBy('recordId')
          .limit(pageSize)
          .compile(),
      );
      for (const row of page) {
        yield {
          resource,
          recordId: Number(row.recordId),
          recordCreatedAt: String(row.recordCreatedAt),
          passwordHash: typeof row.passwordHash === 'string' ? row.passwordHash : null,
          emailVerifiedAt: typeof row.emailVerifiedAt === 'string' ? row.emailVerifiedAt : null,
        };
      }
      if (page.length < pageSize) return;
      after = Number(page[page.length - 1]?.recordId);
    }
  }

  /** Sets an account's credentials as given (an import restoring them), replacing any row of its id. In the caller's transaction. */
  async restore(account: AccountKey, credentials: StoredCredentials, tx: SqlExecutor): Promise<void> {
    await tx.run(this.#db.builder.deleteFrom(TABLE).where('resource', '=', account.resource).where('recordId', '=', account.recordId).compile());
    await tx.run(
      this.#db.builder
        .insertInto(TABLE)
        .values({ ...account, passwordHash: credentials.passwordHash, emailVerifiedAt: credentials.emailVerifiedAt, updatedAt: new Date().toISOString() })
        .compile(),
    );
  }

  /** Deletes the credentials of these records of `resource` (rows an import took out again). */
  async forget(resource: string, recordIds: readonly number[], tx: SqlExecutor): Promise<void> {
    for (let start = 0; start < recordIds.length; start += 500) {
      await tx.run(this.#db.builder.deleteFrom(TABLE).where('resource', '=', resource).where('recordId', 'in', recordIds.slice(start, start + 500)).compile());
    }
  }

  /** Removes the account's password (it then signs in another way, or after a reset); its verification mark stays. */
  async clearPassword(account: AccountKey, executor: SqlExecutor = this.#db): Promise<void> {
    const statement = this.#db.builder
      .updateTable(TABLE)
      .set({ passwordHash: null, updatedAt: new Date().toISOString() })
      .where('resource', '=', account.resource)
      .where('recordId', '=', account.recordId)
      .where('recordCreatedAt', '=', account.recordCreatedAt)
      .compile();
    await executor.run(statement);
  }

  async #upsert(account: AccountKey, values: Partial<StoredCredentials>, executor: SqlExecutor): Promise<void> {
    // Alone, the read and the two writes are one transaction; in a caller's, they are part of it.
    if (executor === this.#db) return this.#db.transaction((tx) => this.#upsert(account, values, tx));
    const now = new Date().toISOString();
    const current = await this.find(account, executor);
    const where = this.#db.builder.deleteFrom(TABLE).where('resource', '=', account.resource).where('recordId', '=', account.recordId);
    await executor.run(where.compile());
    await executor.run(
      this.#db.builder
        .insertInto(TABLE)
        .values({
          resource: account.resource,
          recordId: account.recordId,
          recordCreatedAt: account.recordCreatedAt,
          passwordHash: values.passwordHash ?? current?.passwordHash ?? null,
          emailVerifiedAt: values.emailVerifiedAt ?? current?.emailVerifiedAt ?? null,
          updatedAt: now,
        })
        .compile(),
    );
  }
}
