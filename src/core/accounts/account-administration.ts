import { AuthenticationRequiredError, ForbiddenError, InvalidQueryError, NotFoundError } from '../../errors.js';
import type { ResourceModel } from '../../schema/schema-model.js';
import type { AccountStateStore, AccountSummary } from '../../store/account-state-store.js';
import type { FilterCondition, StoredRecord, TextMatch } from '../../store/list-spec.js';
import type { RecordStore } from '../../store/record-store.js';
import { isVerifiedFor } from '../../store/credential-store.js';
import type { RefreshTokenStore } from '../../store/refresh-token-store.js';
import { isAdmin, type OperationContext, type Principal } from '../principal.js';
import type { AccountEmails } from './account-emails.js';
import { accountKeyOf, type AccountStates } from './account-states.js';

/** One account as the admin list shows it. */
export interface AccountListItem {
  id: number;
  /** The value of the identifier field (the email). */
  identifier: string | null;
  emailVerified: boolean;
  disabled: boolean;
  createdAt: string;
  /** Sessions that can still refresh (refresh tokens neither used, revoked nor expired). */
  activeSessions: number;
}

/** A page of the accounts list, newest first; `next` is the `after` of the following page (null: the last). */
export interface AccountListPage {
  items: AccountListItem[];
  next: string | null;
}

/** Query parameters of the accounts list, as received. */
export interface AccountListQuery {
  q?: unknown;
  limit?: unknown;
  after?: unknown;
}

export const ACCOUNT_LIST_DEFAULT_LIMIT = 50;
export const ACCOUNT_LIST_MAX_LIMIT = 100;
/** The longest `q`: longer than any email address (RFC 5321 allows 254 characters). */
export const ACCOUNT_SEARCH_MAX_LENGTH = 320;
const ID = /^[1-9][0-9]{0,15}$/;

/**
 * Account administration (docs/accounts.md#account-administration), admins only: the accounts list
 * with search, disabling and enabling accounts, signing an account out everywhere, resending its
 * verification email. One core for every adapter.
 */
export class AccountAdministration {
  readonly #resource: ResourceModel;
  readonly #identifier: string;
  readonly #records: RecordStore;
  readonly #refreshTokens: RefreshTokenStore;
  readonly #states: AccountStates;
  readonly #stateStore: AccountStateStore;
  readonly #emails: AccountEmails | undefined;

  constructor(options: { resource: ResourceModel; identifier: string; records: RecordStore; refreshTokens: RefreshTokenStore; states: AccountStates; stateStore: AccountStateStore; emails?: AccountEmails }) {
    this.#resource = options.resource;
    this.#identifier = options.identifier;
    this.#records = options.records;
    this.#refreshTokens = options.refreshTokens;
    this.#states = options.states;
    this.#stateStore = options.stateStore;
    this.#emails = options.emails;
  }

  /**
   * A page of accounts, newest first: `q` keeps those whose identifier starts with it (ignoring
   * case), `limit` (1 to 100, default 50) bounds the page, `after` (the previous page's `next`)
   * continues. @throws AuthenticationRequiredError, ForbiddenError, InvalidQueryError
   */
  async list(principal: Principal, query: AccountListQuery): Promise<AccountListPage> {
    assertAdmin(principal);
    const limit = limitOf(query.limit);
    const filters: FilterCondition[] = [];
    if (query.after !== undefined) filters.push({ field: 'id', op: 'lt', value: idParameter(query.after, 'after') });
    if (query.q !== undefined) {
      if (typeof query.q !== 'string') throw invalid('q', 'must be given once');
      if (query.q.length > ACCOUNT_SEARCH_MAX_LENGTH) throw invalid('q', `is ${query.q.length} characters long; at most ${ACCOUNT_SEARCH_MAX_LENGTH} are allowed`);
      if (query.q !== '') filters.push({ field: this.#identifier, op: 'textMatch', value: { text: query.q, at: 'start' } satisfies TextMatch });
    }
    const rows = await this.#records.list(this.#resource, { filters, sort: [{ field: 'id', direction: 'desc' }], limit: limit + 1 });
    const page = rows.slice(0, limit);
    const summaries = await this.#stateStore.summaries(
      page.map((record) => accountKeyOf(this.#resource, record)),
      new Date().toISOString(),
    );
    const items = page.map((record) => this.#toItem(record, summaries.get(Number(record.id))));
    const last = page.at(-1);
    return { items, next: rows.length > limit && last !== undefined ? String(last.id) : null };
  }

  /** Disables an account: sign-in and refresh answer as for a wrong password, every session ends. @throws NotFoundError */
  async disable(principal: Principal, id: string): Promise<AccountListItem> {
    const record = await this.#account(principal, id);
    await this.#states.setDisabled(record, true);
    await this.#refreshTokens.revokeAccount({ resource: this.#resource.name, recordId: Number(record.id) });
    return this.#item(record);
  }

  /** Enables a disabled account again (its ended sessions stay ended). @throws NotFoundError */
  async enable(principal: Principal, id: string): Promise<AccountListItem> {
    const record = await this.#account(principal, id);
    await this.#states.setDisabled(record, false);
    return this.#item(record);
  }

  /** Signs an account out everywhere: every refresh token revoked, every access token refused. @throws NotFoundError */
  async signOut(principal: Principal, id: string): Promise<AccountListItem> {
    const record = await this.#account(principal, id);
    await this.#refreshTokens.revokeAccount({ resource: this.#resource.name, recordId: Number(record.id) });
    await this.#states.endSessions(record);
    return this.#item(record);
  }

  /**
   * Sends the account its verification email again (same quota as any account email).
   * @throws NotFoundError, EmailNotConfiguredError, RateLimitedError
   */
  async resendVerification(ctx: OperationContext, id: string): Promise<{ status: 'sent' | 'already-verified' }> {
    const record = await this.#account(ctx.principal, id);
    if (this.#emails === undefined) throw new NotFoundError('This server sends no account emails.');
    return { status: await this.#emails.resendVerification(ctx, record) };
  }

  async #account(principal: Principal, id: string): Promise<StoredRecord> {
    assertAdmin(principal);
    const record = ID.test(id) ? await this.#records.findById(this.#resource, Number(id)) : undefined;
    if (record === undefined) throw new NotFoundError(`There is no account ${JSON.stringify(id.length > 40 ? `${id.slice(0, 37)}...` : id)}.`);
    return record;
  }

  async #item(record: StoredRecord): Promise<AccountListItem> {
    const summaries = await this.#stateStore.summaries([accountKeyOf(this.#resource, record)], new Date().toISOString());
    return this.#toItem(record, summaries.get(Number(record.id)));
  }

  #toItem(record: StoredRecord, summary: AccountSummary | undefined): AccountListItem {
    const identifier = record[this.#identifier];
    return {
      id: Number(record.id),
      identifier: typeof identifier === 'string' ? identifier : null,
      emailVerified: isVerifiedFor(summary?.emailVerifiedAt, identifier),
      disabled: (summary?.disabledAt ?? null) !== null,
      createdAt: String(record.createdAt),
      activeSessions: summary?.activeSessions ?? 0,
    };
  }
}

/** Admins only: 401 without a credential, 403 with one that is not an admin's. */
function assertAdmin(principal: Principal): void {
  if (isAdmin(principal)) return;
  if (principal.kind === 'anonymous') throw new AuthenticationRequiredError('Account administration needs an admin credential.');
  throw new ForbiddenError('Account administration is for admins only (the admin scope).');
}

function limitOf(value: unknown): number {
  if (value === undefined) return ACCOUNT_LIST_DEFAULT_LIMIT;
  const text = typeof value === 'string' ? value : '';
  const limit = /^[0-9]{1,4}$/.test(text) ? Number(text) : NaN;
  if (!(limit >= 1 && limit <= ACCOUNT_LIST_MAX_LIMIT)) throw invalid('limit', `must be a whole number from 1 to ${ACCOUNT_LIST_MAX_LIMIT}`);
  return limit;
}

function idParameter(value: unknown, parameter: string): number {
  if (typeof value !== 'string' || !ID.test(value)) throw invalid(parameter, 'must be an account id (a positive whole number)');
  return Number(value);
}

function invalid(parameter: string, detail: string): InvalidQueryError {
  return new InvalidQueryError(`${parameter} ${detail}.`, { errors: [{ parameter, detail }] });
}
