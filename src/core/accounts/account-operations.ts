import { AuthenticationRequiredError, EmailNotVerifiedError, ForbiddenError, InvalidCredentialsError, RestgraphError, UniqueConflictError, ValidationError } from '../../errors.js';
import type { AccountsModel } from '../../schema/accounts-model.js';
import { foldIdentifier, foldsIdentifierCase } from '../../schema/identifier-case.js';
import { resourceNamed, type ResourceModel, type SchemaModel } from '../../schema/schema-model.js';
import { isVerifiedFor, type AccountKey, type CredentialStore } from '../../store/credential-store.js';
import type { StoredRecord } from '../../store/list-spec.js';
import type { RecordStore } from '../../store/record-store.js';
import type { RefreshTokenStore } from '../../store/refresh-token-store.js';
import type { SqlExecutor } from '../../store/sql-database.js';
import { enforceRule } from '../access-rules/access-rules.js';
import { createFieldChecks, enforceFieldChecks } from '../access-rules/write-access.js';
import { isPlainObject } from '../merge-patch.js';
import { isAdmin, type OperationContext, type Principal } from '../principal.js';
import type { ResourceOperations } from '../resource-operations.js';
import type { AccountThrottle } from '../account-throttle.js';
import type { AccessTokens } from './access-tokens.js';
import { AccountSessions, type SessionTokens } from './account-sessions.js';
import type { AccountStates } from './account-states.js';
import { checkNewPassword, hashPassword, MAX_PASSWORD_LENGTH, needsRehash, passwordLength, verifyNothing, verifyPassword } from './password-hashing.js';

export type { SessionTokens };

/** How long refresh tokens live by default: 30 days, renewed by every refresh (each refresh issues a new one). */
export const DEFAULT_REFRESH_TOKEN_SECONDS = 30 * 24 * 60 * 60;

/** Writes the sign-up's record: every field check is made here, as the new account's own (see signUp). */
const SIGN_UP_WRITER: Principal = Object.freeze({ kind: 'admin-token', scopes: new Set(['admin']), credentialId: 'sign-up' });

/**
 * End-user accounts (docs/accounts.md), one core for every adapter: sign-up, sign-in, refresh,
 * sign-out, password change; and the functions the email and OpenID Connect flows build on
 * ({@link setPassword}, {@link markEmailVerified}, {@link findByIdentifier}, {@link startSession}).
 */
export class AccountOperations {
  readonly accounts: AccountsModel;
  readonly resource: ResourceModel;
  readonly #operations: ResourceOperations;
  readonly #records: RecordStore;
  readonly #credentials: CredentialStore;
  readonly #refreshTokens: RefreshTokenStore;
  readonly #sessions: AccountSessions;
  readonly #throttle: AccountThrottle | undefined;
  /** The longest identifier sign-in looks up: the field's maxLength, else 320 (an email's longest, RFC 5321) for email, else 1,024. */
  readonly #identifierLimit: number;
  readonly #states: AccountStates | undefined;
  readonly #signUpListeners: ((ctx: OperationContext, record: StoredRecord) => void)[] = [];
  readonly #signUpTakenListeners: ((ctx: OperationContext, identifier: string) => void)[] = [];
  /** An email identifier: compared ignoring case (stored lower-cased, schema/identifier-case.ts). */
  readonly #foldsCase: boolean;

  constructor(options: {
    schema: SchemaModel & { accounts: AccountsModel };
    operations: ResourceOperations;
    records: RecordStore;
    credentials: CredentialStore;
    refreshTokens: RefreshTokenStore;
    accessTokens: AccessTokens;
    refreshTokenSeconds: number;
    /** The account throttles (failed sign-ins per identifier, requests per address); none: unthrottled. */
    throttle?: AccountThrottle;
    /** Disabled accounts and revoked access tokens (docs/accounts.md#revocation); none: neither exists. */
    states?: AccountStates;
  }) {
    this.accounts = options.schema.accounts;
    this.resource = resourceNamed(options.schema, this.accounts.resource);
    this.#foldsCase = foldsIdentifierCase(this.accounts, options.schema.resources);
    this.#operations = options.operations;
    this.#records = options.records;
    this.#credentials = options.credentials;
    this.#refreshTokens = options.refreshTokens;
    this.#throttle = options.throttle;
    const identifierField = this.resource.fields.get(this.accounts.identifier);
    this.#identifierLimit = identifierField?.maxLength ?? (identifierField?.format === 'email' ? 320 : 1024);
    this.#states = options.states;
    this.#sessions = new AccountSessions(this.accounts, this.resource, options.refreshTokens, options.accessTokens, options.refreshTokenSeconds * 1000, options.states);
  }

  /**
   * Creates an account: its record from the body's profile fields and identifier, its password
   * apart. The body may set only what the new account's own user could (the resource's field write
   * access and create rule, judged for an anonymous caller whose subject is the new record's id);
   * refused, nothing is written. `signUp: closed` refuses everyone; `invite`, everyone but admins.
   * @throws ForbiddenError, ValidationError, UniqueConflictError
   */
  async signUp(ctx: OperationContext, body: unknown): Promise<StoredRecord | null> {
    if (!isAdmin(ctx.principal)) await this.#throttle?.checkAccountRequest(ctx.clientAddress);
    this.#assertMaySignUp(ctx.principal);
    if (!isPlainObject(body)) throw new ValidationError('The body must be a JSON object.');
    const { password, ...profile } = body;
    if (typeof profile[this.accounts.identifier] !== 'string') {
      throw new ValidationError(`Sign-up needs ${this.accounts.identifier}.`, { errors: [{ pointer: `/${this.accounts.identifier}`, detail: 'is required (a string)' }] });
    }
    // Hashed whether or not the identifier is taken: the same work in both cases.
    const passwordHash = await hashPassword(checkNewPassword(password, '/password'));
    const hidden = this.hidesSignUpOutcome(ctx.principal);
    let record: StoredRecord;
    try {
      record = await this.#createAccount(ctx, profile, (tx, key) => this.#credentials.setPassword(key, passwordHash, tx));
    } catch (error) {
      if (!hidden || !this.#isIdentifierTaken(error)) throw error;
      await this.#signUpTaken(ctx, profile);
      return null;
    }
    for (const listener of this.#signUpListeners) listener(ctx, record);
    return hidden ? null : this.#userView(String(record.id));
  }

  /**
   * Whether sign-up answers alike for a new and a taken identifier (`emailVerification:
   * required`, for everyone but admins): {@link signUp} then resolves to null in both cases, and
   * the owner of a taken address hears of the attempt by email ({@link onSignUpTaken}).
   */
  hidesSignUpOutcome(principal: Principal): boolean {
    return this.accounts.emailVerification === 'required' && !isAdmin(principal);
  }

  /** Calls `listener` with the (canonical) identifier of each hidden sign-up whose identifier was taken. */
  onSignUpTaken(listener: (ctx: OperationContext, identifier: string) => void): void {
    this.#signUpTakenListeners.push(listener);
  }

  #isIdentifierTaken(error: unknown): boolean {
    return error instanceof UniqueConflictError && (error.errors ?? []).some((e) => e.pointer === `/${this.accounts.identifier}`);
  }

  /**
   * A hidden sign-up of a taken identifier: the body is judged as it would have been for a new
   * account (its field write access and create rule, the existing record standing in for the new
   * one), so that a refused body is refused alike; then the owner is told.
   */
  async #signUpTaken(ctx: OperationContext, profile: Record<string, unknown>): Promise<void> {
    const identifier = this.canonicalIdentifier(String(profile[this.accounts.identifier]));
    const existing = await this.findByIdentifier(identifier);
    if (existing !== undefined) {
      const candidate = { ...existing, ...profile, id: existing.id };
      const own = newAccountPrincipal(candidate);
      enforceFieldChecks(this.resource, createFieldChecks(own, this.resource, profile), candidate);
      enforceRule(own, this.resource, 'create', candidate);
    }
    for (const listener of this.#signUpTakenListeners) listener(ctx, identifier);
  }

  /** Calls `listener` after each sign-up that made an account (the verification email is sent so). */
  onSignUp(listener: (ctx: OperationContext, record: StoredRecord) => void): void {
    this.#signUpListeners.push(listener);
  }

  /** `signUp: closed` refuses everyone; `invite`, everyone but admins. @throws ForbiddenError */
  #assertMaySignUp(principal: Principal): void {
    if (this.accounts.signUp === 'closed') throw new ForbiddenError('Sign-up is closed on this server.');
    if (this.accounts.signUp === 'invite' && !isAdmin(principal)) throw new ForbiddenError('Accounts on this server are created by invitation only.');
  }

  /**
   * Creates an account's record from `profile`, its credentials (`withCredentials`) in the same
   * transaction. Unless an admin asks, the profile may set only what the new account's own user
   * could write: refused, nothing is written.
   */
  async #createAccount(ctx: OperationContext, profile: Record<string, unknown>, withCredentials: (tx: SqlExecutor, key: AccountKey) => Promise<void>): Promise<StoredRecord> {
    const admin = isAdmin(ctx.principal);
    return this.#operations.create({ ...ctx, principal: SIGN_UP_WRITER }, this.resource, profile, {
      beforeCommit: async (tx, created) => {
        if (created === undefined) return;
        if (!admin) {
          const own = newAccountPrincipal(created);
          enforceFieldChecks(this.resource, createFieldChecks(own, this.resource, profile), created);
          enforceRule(own, this.resource, 'create', created);
        }
        await withCredentials(tx, accountKey(this.resource, created));
      },
    });
  }

  /**
   * Signs in with identifier and password. Every failure is the same 401, after the same work (an
   * unknown identifier verifies the password against a dummy hash), so that neither the answer nor
   * its time tells whether the account exists. @throws InvalidCredentialsError
   */
  async signIn(ctx: OperationContext, body: unknown): Promise<SessionTokens> {
    await this.#throttle?.checkAccountRequest(ctx.clientAddress);
    const identifier = isPlainObject(body) ? body[this.accounts.identifier] : undefined;
    const password = isPlainObject(body) ? body.password : undefined;
    if (typeof identifier !== 'string' || typeof password !== 'string') throw new ValidationError(`Sign-in needs ${this.accounts.identifier} and password (strings).`);
    // Bounded before anything is looked up, counted or hashed: the same answer for every account.
    if (identifier.length > this.#identifierLimit) throw new ValidationError(`${this.accounts.identifier} is longer than ${this.#identifierLimit} characters.`);
    if (passwordLength(password) > MAX_PASSWORD_LENGTH) throw new ValidationError(`The password is longer than ${MAX_PASSWORD_LENGTH} characters.`);
    // Each attempt takes one of the identifier's failures before hashing (given back on success),
    // so concurrent attempts hash no more than the quota and a throttled identifier costs no
    // hashing; known and unknown identifiers are counted alike.
    const canonical = this.canonicalIdentifier(identifier);
    await this.#throttle?.reserveSignIn(canonical);
    const record = await this.findByIdentifier(canonical);
    const key = record === undefined ? undefined : accountKey(this.resource, record);
    const credentials = key === undefined ? undefined : await this.#credentials.find(key);
    const stored = credentials?.passwordHash ?? undefined;
    const valid = stored === undefined ? await verifyNothing(password) : await verifyPassword(stored, password);
    if (!valid || record === undefined || key === undefined || stored === undefined) throw this.#wrongCredentials();
    await this.#throttle?.releaseSignIn(canonical);
    // Only after the right password: to anyone without it, an unverified account looks like any other.
    if (this.accounts.emailVerification === 'required' && !isVerifiedFor(credentials?.emailVerifiedAt, record[this.accounts.identifier])) {
      throw new EmailNotVerifiedError('Confirm your email first: open the link we sent you, or ask for a new one (POST /v1/auth/verify-email/request).');
    }
    if (needsRehash(stored)) await this.#credentials.setPassword(key, await hashPassword(password));
    return this.startSession(record);
  }

  /**
   * Exchanges a refresh token for new tokens; the old one is used up. A used token presented again
   * means it was copied: the whole session (its family) is revoked. @throws InvalidCredentialsError
   */
  async refresh(ctx: OperationContext, body: unknown): Promise<SessionTokens> {
    await this.#throttle?.checkAccountRequest(ctx.clientAddress);
    const token = refreshTokenOf(body);
    const found = await this.#refreshTokens.find(token);
    const refused = new InvalidCredentialsError('The refresh token is not valid (unknown, expired, revoked or used); sign in again.');
    if (found === undefined || found.revokedAt !== null || found.resource !== this.resource.name) throw refused;
    if (found.usedAt !== null || !(await this.#refreshTokens.markUsed(found.id))) {
      await this.#refreshTokens.revokeFamily(found.family);
      throw refused;
    }
    if (Date.parse(found.expiresAt) <= Date.now()) throw refused;
    const record = await this.#records.findById(this.resource, found.recordId);
    // A token older than the record was issued to an earlier record under its id (one deleted, then its id given again by an import).
    if (record === undefined || Date.parse(found.createdAt) < Date.parse(String(record.createdAt))) throw refused;
    if ((await this.#credentials.find(accountKey(this.resource, record))) === undefined) throw refused;
    return this.#sessions.issue(record, (subject) => this.#userView(subject), found.family, () => refused);
  }

  /** Ends the session of a refresh token (its whole family). Unknown tokens end nothing, without saying so. */
  async signOut(body: unknown): Promise<void> {
    const found = await this.#refreshTokens.find(refreshTokenOf(body));
    if (found !== undefined) await this.#refreshTokens.revokeFamily(found.family);
  }

  /** Ends every session of the caller's account (its access tokens stop working within the verified-token cache's window). */
  async signOutEverywhere(principal: Principal): Promise<void> {
    const recordId = accountIdOf(principal);
    await this.#refreshTokens.revokeAccount({ resource: this.resource.name, recordId });
    await this.#states?.endSessionsOf(recordId);
  }

  /**
   * Changes the caller's password, given the current one; every other session of the account ends.
   * @throws InvalidCredentialsError (wrong current password), ValidationError (new one refused)
   */
  async changePassword(principal: Principal, body: unknown): Promise<void> {
    const recordId = accountIdOf(principal);
    const current = isPlainObject(body) ? body.currentPassword : undefined;
    const next = checkNewPassword(isPlainObject(body) ? body.newPassword : undefined, '/newPassword');
    if (typeof current !== 'string') throw new ValidationError('currentPassword is required.', { errors: [{ pointer: '/currentPassword', detail: 'is required (a string)' }] });
    const record = await this.#records.findById(this.resource, recordId);
    const key = record === undefined ? undefined : accountKey(this.resource, record);
    const stored = key === undefined ? undefined : (await this.#credentials.find(key))?.passwordHash ?? undefined;
    const valid = stored === undefined ? await verifyNothing(current) : await verifyPassword(stored, current);
    if (!valid || key === undefined) throw new InvalidCredentialsError('The current password is wrong.');
    await this.#credentials.setPassword(key, await hashPassword(next));
    const session = principal.claims?.sid;
    await this.#refreshTokens.revokeAccount({ resource: this.resource.name, recordId }, typeof session === 'string' ? session : undefined);
    if (record !== undefined) await this.#states?.endSessions(record);
  }

  /** The record of an account token's user, as they may see it (null for other credentials, or when the rules hide it). */
  async me(principal: Principal): Promise<StoredRecord | null> {
    return principal.account === true && principal.subject !== undefined ? this.#userView(principal.subject) : null;
  }

  // ---- For the email and OpenID Connect flows -------------------------------------------------

  /** The account with this identifier, as stored (every field); an email identifier whatever its case. */
  async findByIdentifier(identifier: string): Promise<StoredRecord | undefined> {
    const value = this.canonicalIdentifier(identifier);
    const rows = await this.#records.list(this.resource, { filters: [{ field: this.accounts.identifier, op: 'eq', value }], sort: [{ field: 'id', direction: 'asc' }], limit: 1 });
    return rows[0];
  }

  /** The identifier an account has now, in its canonical form (undefined: no such account, or none set). */
  async currentIdentifier(recordId: number): Promise<string | undefined> {
    const value = (await this.#records.findById(this.resource, recordId))?.[this.accounts.identifier];
    return typeof value === 'string' ? this.canonicalIdentifier(value) : undefined;
  }

  /** An identifier as it is stored and counted (throttles): an email lower-cased, any other as given. */
  canonicalIdentifier(identifier: string): string {
    return this.#foldsCase ? foldIdentifier(identifier) : identifier;
  }

  /** Sets an account's password (a reset), checked against the policy; its sessions end. @throws ValidationError */
  async setPassword(recordId: number, password: unknown, pointer = '/newPassword'): Promise<void> {
    const hashed = await hashPassword(checkNewPassword(password, pointer));
    const record = await this.#records.findById(this.resource, recordId);
    if (record === undefined) throw new ValidationError(`There is no account ${recordId}.`);
    await this.#credentials.setPassword(accountKey(this.resource, record), hashed);
    await this.#refreshTokens.revokeAccount({ resource: this.resource.name, recordId });
    await this.#states?.endSessions(record);
  }

  /** Records that the account's identifier (email) was verified now. */
  async markEmailVerified(recordId: number): Promise<void> {
    const record = await this.#records.findById(this.resource, recordId);
    const address = record?.[this.accounts.identifier];
    if (record !== undefined && typeof address === 'string') await this.#credentials.markEmailVerified(accountKey(this.resource, record), address);
  }

  /**
   * The account of an email an identity provider (or an email link) has verified: the one with
   * that identifier, now marked verified, or a new one without a password, created as a sign-up
   * would be (`signUp` policy, field write access) from `profile`. Only for verified emails: the
   * caller vouches that whoever asks controls the address. @throws ForbiddenError, ValidationError
   */
  async findOrCreateByVerifiedEmail(ctx: OperationContext, email: string, profile: Record<string, unknown> = {}): Promise<StoredRecord> {
    const found = await this.findByIdentifier(email);
    if (found !== undefined) {
      await this.#dropUnprovenPassword(found);
      await this.markEmailVerified(Number(found.id));
      return found;
    }
    this.#assertMaySignUp(ctx.principal);
    return this.#createAccount(ctx, { ...profile, [this.accounts.identifier]: email }, (tx, key) => this.#credentials.markEmailVerified(key, this.canonicalIdentifier(email), tx));
  }

  /**
   * Account pre-hijacking: someone who never proved the mailbox may have signed up with the
   * address and a password of their own before its owner first signs in through a provider. Once
   * the provider proves the mailbox, a password set while the email was unverified is removed and
   * the account's sessions end; the owner can set one with a reset.
   */
  async #dropUnprovenPassword(record: StoredRecord): Promise<void> {
    const key = accountKey(this.resource, record);
    const credentials = await this.#credentials.find(key);
    if (credentials === undefined || isVerifiedFor(credentials.emailVerifiedAt, record[this.accounts.identifier]) || credentials.passwordHash === null) return;
    await this.#credentials.clearPassword(key);
    await this.#refreshTokens.revokeAccount({ resource: this.resource.name, recordId: key.recordId });
    // The access tokens too: the one who set that password must not keep a session for minutes.
    await this.#states?.endSessions(record);
  }

  /** Whether the account's identifier was verified. */
  async isEmailVerified(recordId: number): Promise<boolean> {
    const record = await this.#records.findById(this.resource, recordId);
    return record !== undefined && isVerifiedFor((await this.#credentials.find(accountKey(this.resource, record)))?.emailVerifiedAt, record[this.accounts.identifier]);
  }

  /** A new session (tokens) for an account whose user proved who they are (password, or an identity provider). */
  startSession(record: StoredRecord): Promise<SessionTokens> {
    return this.#sessions.issue(record, (subject) => this.#userView(subject));
  }

  #wrongCredentials(): InvalidCredentialsError {
    return new InvalidCredentialsError(`The ${this.accounts.identifier} or the password is wrong.`);
  }

  /** The record as its own user sees it under the resource's read rules; null when they do not let them. */
  async #userView(subject: string): Promise<StoredRecord | null> {
    const own: Principal = { kind: 'jwt', account: true, subject, scopes: new Set(), credentialId: `account:${subject}` };
    try {
      return await this.#operations.get({ principal: own }, this.resource, Number(subject));
    } catch (error) {
      if (error instanceof RestgraphError && error.status < 500) return null;
      throw error;
    }
  }
}

/** The account a record is: credentials belong to it, not to a later record under its id. */
function accountKey(resource: ResourceModel, record: StoredRecord): AccountKey {
  return { resource: resource.name, recordId: Number(record.id), recordCreatedAt: String(record.createdAt) };
}

/** Sign-up judges the body as its new user would write it: no credential but a subject, the new record's id. */
function newAccountPrincipal(record: StoredRecord): Principal {
  return { kind: 'anonymous', subject: String(record.id), scopes: new Set(), credentialId: 'sign-up' };
}

function refreshTokenOf(body: unknown): string {
  const token = isPlainObject(body) ? body.refreshToken : undefined;
  if (typeof token !== 'string' || token === '') throw new ValidationError('refreshToken is required.', { errors: [{ pointer: '/refreshToken', detail: 'is required (a string)' }] });
  return token;
}

/** The record id of an account token's user. @throws AuthenticationRequiredError for any other credential */
function accountIdOf(principal: Principal): number {
  if (principal.account !== true || principal.subject === undefined) throw new AuthenticationRequiredError('This needs an account\'s access token (from POST /v1/auth/sign-in).');
  return Number(principal.subject);
}
