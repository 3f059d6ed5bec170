import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountOperations } from '../src/core/accounts/account-operations.js';
import { ANONYMOUS } from '../src/core/principal.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * What the email and OpenID Connect flows build on, through the app's embedding API
 * (`app.restgraph.accounts`): accounts found or created by a verified email, passwords set by
 * id (a reset), sessions started for an account that proved itself another way.
 */

let t: TestApp;
let accounts: AccountOperations;
const anonymous = { authorization: '' };
const ctx = { principal: ANONYMOUS };

beforeAll(async () => {
  t = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA) });
  const found = t.app.restgraph.accounts;
  if (found === undefined) throw new Error('no accounts');
  accounts = found;
});
afterAll(() => t.close());

const signIn = (email: string, password: string) => t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: anonymous, payload: { email, password } });

describe('the account core for other sign-in flows', () => {
  it('finds or creates an account by a verified email; a new one has no password until one is set', async () => {
    const created = await accounts.findOrCreateByVerifiedEmail(ctx, 'oli@example.com', { name: 'Oli' });
    const id = Number(created.id);
    expect(await accounts.isEmailVerified(id)).toBe(true);
    expect((await accounts.findOrCreateByVerifiedEmail(ctx, 'oli@example.com')).id).toBe(id);
    // No password: every password is wrong, with the same answer as for an unknown email.
    expect((await signIn('oli@example.com', 'any passphrase at all')).statusCode).toBe(401);
    // A session for the account, as after an identity provider's sign-in.
    const session = await accounts.startSession(created);
    expect((await t.app.inject({ method: 'GET', url: '/users', headers: { authorization: `Bearer ${session.accessToken}` } })).statusCode).toBe(200);
    // A reset: the password is set by id (the policy applies), and the sessions end.
    await expect(accounts.setPassword(id, 'short')).rejects.toMatchObject({ code: 'validation-failed' });
    await accounts.setPassword(id, 'a fine new passphrase');
    expect((await signIn('oli@example.com', 'a fine new passphrase')).statusCode).toBe(200);
    const refreshed = await t.app.inject({ method: 'POST', url: '/v1/auth/refresh', headers: anonymous, payload: { refreshToken: session.refreshToken } });
    expect(refreshed.statusCode).toBe(401);
    // The password stays when the email is verified again.
    await accounts.markEmailVerified(id);
    expect((await signIn('oli@example.com', 'a fine new passphrase')).statusCode).toBe(200);
  });

  it('creates accounts as a sign-up would: the profile may not set what its user may not write', async () => {
    await expect(accounts.findOrCreateByVerifiedEmail(ctx, 'pam@example.com', { role: 'admin' })).rejects.toMatchObject({ code: 'forbidden' });
    expect(await accounts.findByIdentifier('pam@example.com')).toBeUndefined();
  });
});
