import { InvalidLinkTokenError, RateLimitedError, ValidationError } from '../../errors.js';
import type { StoredRecord } from '../../store/list-spec.js';
import { type OneTimeTokenPurpose, OneTimeTokenStore } from '../../store/one-time-token-store.js';
import type { AccountThrottle } from '../account-throttle.js';
import type { Mailer, MailTemplateName } from '../mailer.js';
import { isPlainObject } from '../merge-patch.js';
import type { OperationContext } from '../principal.js';
import type { AccountOperations } from './account-operations.js';
import { checkNewPassword } from './password-hashing.js';

/** How long a verification link works: 24 hours. */
export const VERIFY_EMAIL_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a password-reset link works: 30 minutes (OWASP Forgot Password cheat sheet: short). */
export const RESET_PASSWORD_TTL_MS = 30 * 60 * 1000;

/** An account request that may send an email: who asks, and where the request came to (`origin`, for links). */
export type EmailFlowContext = OperationContext;

/** What the email flows write to the log: failures of messages no client waits for. */
export interface AccountEmailsLog {
  error(fields: object, message: string): void;
}

/** The one answer of the request endpoints, whether or not an account has the address. */
export const EMAIL_REQUEST_ACCEPTED = Object.freeze({
  status: 'accepted',
  detail: 'If an account has this email and needs the message, it is on its way.',
});

/** The one answer of a sign-up with `accounts.emailVerification: required`, whether or not the identifier was taken. */
export const SIGN_UP_ACCEPTED = Object.freeze({
  status: 'accepted',
  detail: 'Check your email: the message we sent tells you how to go on.',
});

/**
 * Email verification and password reset (docs/accounts.md), one core for REST and GraphQL.
 *
 * The request endpoints answer the same whether or not an account has the address, and at the
 * same speed: after the checks that tell nothing (email configured, the address's request quota,
 * the body's shape), the account is looked up and its message sent in the background, its
 * failures logged. Links carry a one-time token (single use, stored hashed, short-lived).
 */
export class AccountEmails {
  readonly #accounts: AccountOperations;
  readonly #tokens: OneTimeTokenStore;
  readonly #mailer: Mailer;
  readonly #throttle: AccountThrottle | undefined;
  readonly #publicUrl: string | undefined;
  readonly #log: AccountEmailsLog;
  readonly #pending = new Set<Promise<void>>();

  constructor(options: { accounts: AccountOperations; tokens: OneTimeTokenStore; mailer: Mailer; throttle?: AccountThrottle; publicUrl?: string; log: AccountEmailsLog }) {
    this.#accounts = options.accounts;
    this.#tokens = options.tokens;
    this.#mailer = options.mailer;
    this.#throttle = options.throttle;
    this.#publicUrl = options.publicUrl?.replace(/\/+$/, '');
    this.#log = options.log;
  }

  /**
   * Sends a verification link to the account with this email, if there is one, it is not verified
   * yet, and the address's email quota allows. Answers alike in every case.
   * @throws EmailNotConfiguredError (checked first), RateLimitedError (the client address's quota), ValidationError
   */
  async requestVerification(ctx: EmailFlowContext, body: unknown): Promise<void> {
    const email = await this.#emailRequest(ctx, body);
    this.#inBackground('verify-email', async () => {
      if (!(await this.#allowEmail(email))) return;
      const record = await this.#accounts.findByIdentifier(email);
      if (record === undefined || (await this.#accounts.isEmailVerified(Number(record.id)))) return;
      await this.#sendLink('verify-email', record, email, ctx);
    });
  }

  /** Marks the email of the link's account verified. @throws InvalidLinkTokenError, RateLimitedError, ValidationError */
  async verifyEmail(ctx: OperationContext, body: unknown): Promise<void> {
    await this.#throttle?.checkAccountRequest(ctx.clientAddress);
    const accountId = await this.#consume('verify-email', stringField(body, 'token'));
    await this.#accounts.markEmailVerified(Number(accountId));
  }

  /**
   * Sends a password-reset link to the account with this email, if there is one and the address's
   * email quota allows. Answers alike in every case.
   * @throws EmailNotConfiguredError (checked first), RateLimitedError (the client address's quota), ValidationError
   */
  async forgotPassword(ctx: EmailFlowContext, body: unknown): Promise<void> {
    const email = await this.#emailRequest(ctx, body);
    this.#inBackground('reset-password', async () => {
      if (!(await this.#allowEmail(email))) return;
      const record = await this.#accounts.findByIdentifier(email);
      if (record !== undefined) await this.#sendLink('reset-password', record, email, ctx);
    });
  }

  /**
   * Sets a new password with a reset link's token: the password is checked first (a refused one
   * does not use the token up), then the token is consumed, every session of the account ends and
   * its other reset links stop working. The link proves the mailbox: the email counts as verified.
   * @throws ValidationError (the new password refused), InvalidLinkTokenError, RateLimitedError
   */
  async resetPassword(ctx: OperationContext, body: unknown): Promise<void> {
    await this.#throttle?.checkAccountRequest(ctx.clientAddress);
    const token = stringField(body, 'token');
    const password = checkNewPassword(isPlainObject(body) ? body.newPassword : undefined, '/newPassword');
    const accountId = Number(await this.#consume('reset-password', token));
    await this.#accounts.setPassword(accountId, password);
    await this.#tokens.invalidate(accountId, 'reset-password');
    await this.#accounts.markEmailVerified(accountId);
  }

  /**
   * After a sign-up: sends the new account its verification link (in the background; a failure is
   * logged, the sign-up stands). Nothing when email is not configured or the quota is used up.
   */
  signedUp(ctx: EmailFlowContext, record: StoredRecord): void {
    if (this.#mailer.delivery === 'none') return;
    const email = record[this.#accounts.accounts.identifier];
    if (typeof email !== 'string') return;
    this.#inBackground('verify-email', async () => {
      if (await this.#allowEmail(email)) await this.#sendLink('verify-email', record, email, ctx);
    });
  }

  /**
   * After a sign-up that answered as if it had made an account, for an identifier that is taken
   * (`accounts.emailVerification: required`): tells the account's owner that someone tried, with a
   * password-reset link in case it was them (template `account-exists`). In the background, under
   * the address's email quota, like the other messages.
   */
  signUpTaken(ctx: EmailFlowContext, email: string): void {
    if (this.#mailer.delivery === 'none') return;
    this.#inBackground('account-exists', async () => {
      if (!(await this.#allowEmail(email))) return;
      const record = await this.#accounts.findByIdentifier(email);
      if (record !== undefined) await this.#sendLink('reset-password', record, email, ctx, 'account-exists');
    });
  }

  /**
   * An admin's resend of an account's verification link (docs/accounts.md#account-administration):
   * the same mailer and per-address email quota as the public request, but the answer says what
   * happened (an admin may know whether the account exists). The message leaves in the background.
   * @throws EmailNotConfiguredError, RateLimitedError (the address's email quota is used up)
   */
  async resendVerification(ctx: EmailFlowContext, record: StoredRecord): Promise<'sent' | 'already-verified'> {
    this.#mailer.assertConfigured();
    const email = record[this.#accounts.accounts.identifier];
    if (typeof email !== 'string') throw new ValidationError(`The account has no ${this.#accounts.accounts.identifier} to send to.`);
    if (await this.#accounts.isEmailVerified(Number(record.id))) return 'already-verified';
    const decision = this.#throttle === undefined ? undefined : await this.#throttle.decideEmail(email);
    if (decision?.allowed === false) {
      throw new RateLimitedError(`This address has had its quota of account emails; try again in ${decision.retryAfterSeconds} s.`, { headers: { 'retry-after': String(decision.retryAfterSeconds) } });
    }
    this.#inBackground('verify-email', () => this.#sendLink('verify-email', record, email, ctx));
    return 'sent';
  }

  /** Resolves once the messages being sent now are sent (or failed). */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Waits for the messages on their way, then closes the mailer. */
  async close(): Promise<void> {
    await this.settled();
    await this.#mailer.close();
  }

  /** The checks of a request endpoint that tell nothing about accounts, in this order; the email asked for. */
  async #emailRequest(ctx: OperationContext, body: unknown): Promise<string> {
    this.#mailer.assertConfigured();
    await this.#throttle?.checkAccountRequest(ctx.clientAddress);
    return this.#accounts.canonicalIdentifier(stringField(body, this.#accounts.accounts.identifier));
  }

  #allowEmail(email: string): Promise<boolean> {
    return this.#throttle === undefined ? Promise.resolve(true) : this.#throttle.allowEmail(email);
  }

  async #sendLink(purpose: OneTimeTokenPurpose, record: StoredRecord, email: string, ctx: EmailFlowContext, template: MailTemplateName = purpose): Promise<void> {
    const ttlMs = purpose === 'verify-email' ? VERIFY_EMAIL_TTL_MS : RESET_PASSWORD_TTL_MS;
    // Bound to the address: the link stops working if the account's address changes (see #consume).
    const { token } = await this.#tokens.issue(purpose, Number(record.id), ttlMs, this.#accounts.canonicalIdentifier(email));
    const base = this.#publicUrl ?? ctx.origin ?? 'http://localhost';
    const link = `${base}/v1/auth/${purpose}?token=${encodeURIComponent(token)}`;
    await this.#mailer.send({ template, to: email, link, expiresInMinutes: Math.round(ttlMs / 60_000) });
  }

  /**
   * Uses up a link's token, if it was sent to the address its account has now: a link sent before
   * the address changed proves nothing about the new one (and a reset link must not reach an
   * account from a mailbox it left). Refused links are all the same error.
   */
  async #consume(purpose: OneTimeTokenPurpose, token: string): Promise<string> {
    const named = OneTimeTokenStore.accountOf(token);
    const address = named === undefined ? undefined : await this.#accounts.currentIdentifier(Number(named));
    const accountId = address === undefined ? undefined : await this.#tokens.consume(purpose, token, address);
    if (accountId === undefined) throw new InvalidLinkTokenError('The link is not valid: it was used already, has expired, or was never issued. Ask for a new one.');
    return accountId;
  }

  #inBackground(purpose: MailTemplateName, work: () => Promise<void>): void {
    const running = work()
      .catch((error: unknown) => this.#log.error({ err: error, template: purpose }, `sending a ${purpose} email failed`))
      .finally(() => this.#pending.delete(running));
    this.#pending.add(running);
  }
}

function stringField(body: unknown, name: string): string {
  const value = isPlainObject(body) ? body[name] : undefined;
  if (typeof value !== 'string' || value === '') throw new ValidationError(`${name} is required (a string).`, { errors: [{ pointer: `/${name}`, detail: 'is required (a string)' }] });
  return value;
}
