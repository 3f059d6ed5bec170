import type { AccountsModel } from '../../schema/accounts-model.js';
import type { ResourceModel } from '../../schema/schema-model.js';
import type { StoredRecord } from '../../store/list-spec.js';
import type { RefreshTokenStore } from '../../store/refresh-token-store.js';
import { InvalidCredentialsError } from '../../errors.js';
import type { AccessTokens } from './access-tokens.js';
import type { AccountStates } from './account-states.js';
import { compileAdminTest, type AdminTest } from './admin-accounts.js';

/** What a sign-in or a refresh answers (RFC 6749, section 5.1, in camelCase), and the account as its user sees it. */
export interface SessionTokens {
  accessToken: string;
  tokenType: 'Bearer';
  /** Seconds the access token lives. */
  expiresIn: number;
  refreshToken: string;
  /** The account's record as the resource's read rules show it to its own user (null: they hide it). */
  user: StoredRecord | null;
}

/** Issues the tokens of a session: an access token for the record and a refresh token of the session's family. */
export class AccountSessions {
  readonly #accounts: AccountsModel;
  readonly #resource: ResourceModel;
  readonly #refreshTokens: RefreshTokenStore;
  readonly #accessTokens: AccessTokens;
  readonly #refreshMs: number;
  readonly #states: AccountStates | undefined;
  readonly #isAdmin: AdminTest | undefined;

  /** @throws SchemaError for an `accounts.admin` expression that cannot be read */
  constructor(accounts: AccountsModel, resource: ResourceModel, refreshTokens: RefreshTokenStore, accessTokens: AccessTokens, refreshMs: number, states?: AccountStates) {
    this.#accounts = accounts;
    this.#resource = resource;
    this.#refreshTokens = refreshTokens;
    this.#accessTokens = accessTokens;
    this.#refreshMs = refreshMs;
    this.#states = states;
    this.#isAdmin = compileAdminTest(accounts, resource);
  }

  /**
   * New tokens for `record`: of a new session, or of `family` (a refresh rotating its token). A
   * disabled account gets none: `refused` (the same 401 as wrong credentials). The access token
   * has the admin scope when the record meets `accounts.admin` now.
   * @throws InvalidCredentialsError
   */
  async issue(record: StoredRecord, user: (subject: string) => Promise<StoredRecord | null>, family?: string, refused?: () => Error): Promise<SessionTokens> {
    if (this.#states !== undefined && (await this.#states.isDisabled(record))) {
      throw refused?.() ?? new InvalidCredentialsError(`The ${this.#accounts.identifier} or the password is wrong.`);
    }
    const recordId = Number(record.id);
    const refresh = await this.#refreshTokens.issue({ resource: this.#resource.name, recordId }, this.#refreshMs, family);
    const subject = String(recordId);
    const accessToken = await this.#accessTokens.sign({ subject, session: refresh.family, claims: this.claimsOf(record), admin: this.#isAdmin?.(record) === true });
    return { accessToken, tokenType: 'Bearer', expiresIn: this.#accessTokens.lifetimeSeconds, refreshToken: refresh.token, user: await user(subject) };
  }

  /** The token claims of a record: the values of the `accounts.claims` fields it has (null ones left out). */
  claimsOf(record: StoredRecord): Record<string, unknown> {
    const claims: Record<string, unknown> = {};
    for (const name of this.#accounts.claims) {
      const value = record[name];
      if (value !== null && value !== undefined) claims[name] = value;
    }
    return claims;
  }
}
