import { ConfigError } from '../errors.js';
import { AccessTokens } from '../core/accounts/access-tokens.js';
import { AccountEmails, type AccountEmailsLog } from '../core/accounts/account-emails.js';
import type { AccountThrottle } from '../core/account-throttle.js';
import { createMailer } from '../mail/create-mailer.js';
import type { MailLog } from '../mail/mail-log.js';
import { AccountAdministration } from '../core/accounts/account-administration.js';
import { AccountOperations } from '../core/accounts/account-operations.js';
import { AccountStates } from '../core/accounts/account-states.js';
import { SigningKeys } from '../core/accounts/signing-keys.js';
import { ANONYMOUS } from '../core/principal.js';
import type { ResourceOperations } from '../core/resource-operations.js';
import type { SignInWithIdentity } from '../auth/oidc-settings.js';
import { resourceNamed, type SchemaModel } from '../schema/schema-model.js';
import { AccountStateStore } from '../store/account-state-store.js';
import { CredentialStore } from '../store/credential-store.js';
import { RefreshTokenStore } from '../store/refresh-token-store.js';
import { SigningKeyStore } from '../store/signing-key-store.js';
import type { ResolvedOptions } from './app-options.js';
import type { Lifecycle } from './lifecycle.js';
import { createAccountThrottle } from './rate-limit-setup.js';
import type { Storage } from './storage.js';

/** The accounts of a schema with `accounts:`, and the keys their tokens are signed with. */
export interface AccountSetup {
  accounts: AccountOperations;
  keys: SigningKeys;
  accessTokens: AccessTokens;
  throttle: AccountThrottle;
  /** Disabled accounts and revoked access tokens. */
  states: AccountStates;
  stateStore: AccountStateStore;
  refreshTokens: RefreshTokenStore;
}

/**
 * Sets up accounts when the schema declares them: the first start stores a signing key in the
 * database (every instance then signs and verifies with the keys stored there).
 */
export async function setUpAccounts(schema: SchemaModel, storage: Storage, options: ResolvedOptions, operations: ResourceOperations, lifecycle: Lifecycle): Promise<AccountSetup | undefined> {
  const model = schema.accounts;
  if (model === undefined) return undefined;
  const throttle = await createAccountThrottle(options.rateLimits, storage.db);
  lifecycle.add(() => throttle.close());
  const keys = new SigningKeys(new SigningKeyStore(storage.db), options.accessTokenSeconds * 1000);
  await keys.ensureKey();
  const stateStore = new AccountStateStore(storage.db);
  const states = new AccountStates(resourceNamed(schema, model.resource), stateStore, storage.records);
  const accessTokens = new AccessTokens(keys, options.accessTokenSeconds, states);
  const refreshTokens = new RefreshTokenStore(storage.db);
  const accounts = new AccountOperations({
    schema: { ...schema, accounts: model },
    operations,
    records: storage.records,
    credentials: new CredentialStore(storage.db),
    refreshTokens,
    accessTokens,
    refreshTokenSeconds: options.refreshTokenSeconds,
    throttle,
    states,
  });
  return { accounts, keys, accessTokens, throttle, states, stateStore, refreshTokens };
}

/** Account administration (admins only): the list, disable, enable, force sign-out, resending the verification email. */
export function setUpAccountAdministration(setup: AccountSetup, storage: Storage, emails: AccountEmails | undefined): AccountAdministration {
  return new AccountAdministration({
    resource: setup.accounts.resource,
    identifier: setup.accounts.accounts.identifier,
    records: storage.records,
    refreshTokens: setup.refreshTokens,
    states: setup.states,
    stateStore: setup.stateStore,
    ...(emails === undefined ? {} : { emails }),
  });
}

/**
 * The email flows of accounts (verification, password reset): the mailer of the options (SMTP,
 * the log in development, none in production), closed with the app once the messages on their
 * way are sent; a sign-up sends its verification email.
 * @throws ConfigError for mail settings or templates that cannot be used.
 */
export function setUpAccountEmails(setup: AccountSetup, storage: Storage, options: ResolvedOptions, log: MailLog & AccountEmailsLog, lifecycle: Lifecycle): AccountEmails {
  const mailer = createMailer(options.mail, log);
  // Links in emails that leave the machine are built from the configured address only: built from
  // a request's Host header, a forged Host would point a victim's reset link at another server.
  if (mailer.delivery === 'smtp' && options.publicUrl === undefined) {
    void mailer.close();
    throw new ConfigError('RESTGRAPH_PUBLIC_URL', 'is needed when accounts send email over SMTP: the links in verification and reset emails point at it (without it they would be built from the Host header a client sends)');
  }
  // Sign-up then works by email only: without it no account could ever sign in.
  if (mailer.delivery === 'none' && setup.accounts.accounts.emailVerification === 'required') {
    void mailer.close();
    throw new ConfigError('RESTGRAPH_SMTP_URL', 'is needed in production when the schema has accounts.emailVerification: required: sign-up sends the verification link by email, and sign-in waits for it');
  }
  const emails = new AccountEmails({
    accounts: setup.accounts,
    tokens: storage.oneTimeTokens,
    mailer,
    throttle: setup.throttle,
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
    log,
  });
  lifecycle.add(() => emails.close());
  setup.accounts.onSignUp((ctx, record) => emails.signedUp(ctx, record));
  setup.accounts.onSignUpTaken((ctx, identifier) => emails.signUpTaken(ctx, identifier));
  return emails;
}

/**
 * Signs in an identity an OpenID Connect provider vouched for (a verified email): the account with
 * that email, or a new one made as a sign-up would be (the `signUp` policy applies), with the
 * provider's display name when the resource has a `name` field.
 */
export function signInWithAccounts(accounts: AccountOperations): SignInWithIdentity {
  return async (identity) => {
    const named = identity.name !== null && accounts.resource.fields.has('name');
    const record = await accounts.findOrCreateByVerifiedEmail({ principal: ANONYMOUS }, identity.email, named ? { name: identity.name } : {});
    const session = await accounts.startSession(record);
    return { accessToken: session.accessToken, refreshToken: session.refreshToken, expiresIn: session.expiresIn, user: session.user ?? {} };
  };
}
