import type { AccountKey } from './credential-store.js';
import type { SqlDatabase, SqlExecutor } from './sql-database.js';

const TABLE = '_restgraph_account_states';
const CREDENTIALS = '_restgraph_credentials';
const REFRESH_TOKENS = '_restgraph_refresh_tokens';

/** What an admin set on an account (docs/accounts.md#account-administration). */
export interface AccountState {
  /** When it was disabled; null: it is enabled. */
  disabledAt: string | null;
  /** Access tokens issued before this instant are refused (null: none is). */
  sessionsValidAfter: string | null;
}

/** What the accounts list shows of each account besides its record. */
export interface AccountSummary extends AccountState {
  emailVerifiedAt: string | null;
  /** Refresh tokens neither used, revoked nor expired: one per live session. */
  activeSessions: number;
}

/**
 * `_restgraph_account_states` (system migration 6): per account, whether it is disabled and from
 * when its access tokens count. Rows remember the record's `createdAt`, like credentials: a record
 * made later under a reused id never inherits them.
 */
export class AccountStateStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /**
   * The state of the account with this id, as stored, with the `createdAt` of the record it was
   * set for (the caller compares it with the record's when it matters). One primary-key lookup.
   */
  async findById(resource: string, recordId: number): Promise<(AccountState & { recordCreatedAt: string }) | undefined> {
    const row = await this.#db.one(
      this.#db.builder.selectFrom(TABLE).select(['recordCreatedAt', 'disabledAt', 'sessionsValidAfter']).where('resource', '=', resource).where('recordId', '=', recordId).compile(),
    );
    if (row === undefined) return undefined;
    return { recordCreatedAt: String(row.recordCreatedAt), disabledAt: textOrNull(row.disabledAt), sessionsValidAfter: textOrNull(row.sessionsValidAfter) };
  }

  /** The state of this account (none set: enabled, every token valid). */
  async find(account: AccountKey, executor: SqlExecutor = this.#db): Promise<AccountState> {
    const row = await executor.one(
      this.#db.builder.selectFrom(TABLE).select(['recordCreatedAt', 'disabledAt', 'sessionsValidAfter']).where('resource', '=', account.resource).where('recordId', '=', account.recordId).compile(),
    );
    if (row === undefined || row.recordCreatedAt !== account.recordCreatedAt) return { disabledAt: null, sessionsValidAfter: null };
    return { disabledAt: textOrNull(row.disabledAt), sessionsValidAfter: textOrNull(row.sessionsValidAfter) };
  }

  /** Disables (true) or enables (false) an account; disabling also ends its access tokens issued until `now`. */
  async setDisabled(account: AccountKey, disabled: boolean, now: string): Promise<void> {
    await this.#update(account, (state) => (disabled ? { disabledAt: state.disabledAt ?? now, sessionsValidAfter: now } : { ...state, disabledAt: null }));
  }

  /** Refuses from now on the access tokens of the account issued until `now`. */
  async endSessions(account: AccountKey, now: string): Promise<void> {
    await this.#update(account, (state) => ({ ...state, sessionsValidAfter: now }));
  }

  /** The states, verification marks and live session counts of these accounts (three statements for a page). */
  async summaries(accounts: readonly AccountKey[], now: string): Promise<Map<number, AccountSummary>> {
    const result = new Map<number, AccountSummary>();
    const first = accounts[0];
    if (first === undefined) return result;
    const resource = first.resource;
    const ids = accounts.map((account) => account.recordId);
    const createdAt = new Map(accounts.map((account) => [account.recordId, account.recordCreatedAt]));
    for (const id of ids) result.set(id, { disabledAt: null, sessionsValidAfter: null, emailVerifiedAt: null, activeSessions: 0 });
    const builder = this.#db.builder;
    const [states, credentials, sessions] = await Promise.all([
      this.#db.all(builder.selectFrom(TABLE).select(['recordId', 'recordCreatedAt', 'disabledAt', 'sessionsValidAfter']).where('resource', '=', resource).where('recordId', 'in', ids).compile()),
      this.#db.all(builder.selectFrom(CREDENTIALS).select(['recordId', 'recordCreatedAt', 'emailVerifiedAt']).where('resource', '=', resource).where('recordId', 'in', ids).compile()),
      this.#db.all(
        builder
          .selectFrom(REFRESH_TOKENS)
          .select((eb) => ['recordId', eb.fn.countAll<number>().as('n')])
          .where('resource', '=', resource)
          .where('recordId', 'in', ids)
          .where('usedAt', 'is', null)
          .where('revokedAt', 'is', null)
          .where('expiresAt', '>', now)
          .groupBy('recordId')
          .compile(),
      ),
    ]);
    const own = (row: Record<string, unknown>): AccountSummary | undefined => {
      const id = Number(row.recordId);
      return row.recordCreatedAt === undefined || row.recordCreatedAt === createdAt.get(id) ? result.get(id) : undefined;
    };
    for (const row of states) {
      const summary = own(row);
      if (summary !== undefined) Object.assign(summary, { disabledAt: textOrNull(row.disabledAt), sessionsValidAfter: textOrNull(row.sessionsValidAfter) });
    }
    for (const row of credentials) {
      const summary = own(row);
      if (summary !== undefined) summary.emailVerifiedAt = textOrNull(row.emailVerifiedAt);
    }
    for (const row of sessions) {
      const summary = own(row);
      if (summary !== undefined) summary.activeSessions = Number(row.n);
    }
    return result;
  }

  /** Reads, changes and writes an account's row in one transaction (a row of an earlier record under its id is replaced). */
  async #update(account: AccountKey, change: (state: AccountState) => AccountState): Promise<void> {
    await this.#db.transaction(async (tx) => {
      const next = change(await this.find(account, tx));
      await tx.run(this.#db.builder.deleteFrom(TABLE).where('resource', '=', account.resource).where('recordId', '=', account.recordId).compile());
      await tx.run(
        this.#db.builder
          .insertInto(TABLE)
          .values({ resource: account.resource, recordId: account.recordId, recordCreatedAt: account.recordCreatedAt, ...next, updatedAt: new Date().toISOString() })
          .compile(),
      );
    });
  }
}

function textOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
