import { InvalidTokenError } from '../../errors.js';
import type { ResourceModel } from '../../schema/schema-model.js';
import type { AccountStateStore } from '../../store/account-state-store.js';
import type { AccountKey } from '../../store/credential-store.js';
import type { StoredRecord } from '../../store/list-spec.js';
import type { RecordStore } from '../../store/record-store.js';

/** The account a record is: its state belongs to it, not to a later record under its id. */
export function accountKeyOf(resource: ResourceModel, record: StoredRecord): AccountKey {
  return { resource: resource.name, recordId: Number(record.id), recordCreatedAt: String(record.createdAt) };
}

/**
 * Disabled accounts and revoked access tokens (docs/accounts.md#revocation). An access token is
 * checked here when it is verified, not on every request: the verified-token cache answers
 * repeats for at most `RESTGRAPH_API_KEY_CACHE_SECONDS` (10 s), the bound on how late a
 * revocation takes effect. The common case (an account never disabled nor signed out) costs one
 * primary-key lookup that finds nothing.
 */
export class AccountStates {
  readonly #resource: ResourceModel;
  readonly #store: AccountStateStore;
  readonly #records: RecordStore;
  readonly #sessionsEnded: ((recordId: number) => void)[] = [];

  constructor(resource: ResourceModel, store: AccountStateStore, records: RecordStore) {
    this.#resource = resource;
    this.#store = store;
    this.#records = records;
  }

  /** Whether the account of this record is disabled. */
  async isDisabled(record: StoredRecord): Promise<boolean> {
    return (await this.#store.find(accountKeyOf(this.#resource, record))).disabledAt !== null;
  }

  /**
   * Calls `listener` with the record id each time an account's sessions end here (disabled,
   * signed out, password changed): this instance then forgets its tokens at once, rather than
   * within the verified-token cache's window.
   */
  onSessionsEnded(listener: (recordId: number) => void): void {
    this.#sessionsEnded.push(listener);
  }

  /** Disables or enables the account; disabling refuses its access tokens issued until now. */
  async setDisabled(record: StoredRecord, disabled: boolean): Promise<void> {
    await this.#store.setDisabled(accountKeyOf(this.#resource, record), disabled, new Date().toISOString());
    if (disabled) this.#ended(record);
  }

  /** Refuses from now on every access token of the account issued until now. */
  async endSessions(record: StoredRecord): Promise<void> {
    await this.#store.endSessions(accountKeyOf(this.#resource, record), new Date().toISOString());
    this.#ended(record);
  }

  #ended(record: StoredRecord): void {
    for (const listener of this.#sessionsEnded) listener(Number(record.id));
  }

  /** {@link endSessions} by record id (nothing when there is no such record). */
  async endSessionsOf(recordId: number): Promise<void> {
    const record = await this.#records.findById(this.#resource, recordId);
    if (record !== undefined) await this.endSessions(record);
  }

  /**
   * Refuses an access token of account `subject` issued at `issuedAtMs` when the account is
   * disabled or its sessions were ended after that instant.
   * @throws InvalidTokenError
   */
  async assertTokenCurrent(subject: string, issuedAtMs: number): Promise<void> {
    const recordId = Number(subject);
    if (!Number.isSafeInteger(recordId)) return;
    const state = await this.#store.findById(this.#resource.name, recordId);
    if (state === undefined || (state.disabledAt === null && state.sessionsValidAfter === null)) return;
    // A state set for an earlier record under this id says nothing of the current one's tokens.
    const record = await this.#records.findById(this.#resource, recordId);
    if (record === undefined || String(record.createdAt) !== state.recordCreatedAt) return;
    if (state.disabledAt !== null) throw new InvalidTokenError('The account of this token is disabled.');
    if (state.sessionsValidAfter !== null && issuedAtMs < Date.parse(state.sessionsValidAfter)) {
      throw new InvalidTokenError('The token was revoked (its account was signed out, or its password changed); sign in again.');
    }
  }
}
