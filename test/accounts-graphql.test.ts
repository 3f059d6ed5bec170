import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { dataOf, graphql } from './helpers/graphql-request.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * The account mutations of GraphQL (docs/accounts.md) call the same core as /v1/auth/: sign-up,
 * sign-in, a query under rules with @auth.sub, refresh and reuse detection, password change,
 * sign-out.
 */

interface Session {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  user: { id: string; email: string } | null;
}

let t: TestApp;
const anonymous = { authorization: '' };
const SESSION = 'accessToken refreshToken expiresIn user { id email }';

beforeAll(async () => {
  t = await startTestApp({ schema: parseSchemaText(ACCOUNTS_SCHEMA) });
});
afterAll(() => t.close());

async function signIn(password: string): Promise<Session> {
  return dataOf(await graphql<{ signIn: Session }>(t.app, `mutation($p: String!) { signIn(email: "gil@example.com", password: $p) { ${SESSION} } }`, { headers: anonymous, variables: { p: password } })).signIn;
}

async function refreshCode(refreshToken: string): Promise<string | undefined> {
  const reply = await graphql(t.app, `mutation($r: String!) { refresh(refreshToken: $r) { accessToken } }`, { headers: anonymous, variables: { r: refreshToken } });
  return (reply.body.errors?.[0]?.extensions as { code?: string } | undefined)?.code;
}

describe('account mutations', () => {
  it('sign up, sign in, query as the account, refresh, reuse, change password, sign out', async () => {
    const up = await graphql<{ signUp: { email: string } }>(t.app, 'mutation { signUp(password: "correct horse battery staple", input: { email: "gil@example.com", name: "Gil" }) { email } }', { headers: anonymous });
    expect(dataOf(up).signUp.email).toBe('gil@example.com');
    const refused = await graphql(t.app, 'mutation { signUp(password: "correct horse battery staple", input: { email: "ida@example.com", role: admin }) { email } }', { headers: anonymous });
    expect((refused.body.errors?.[0]?.extensions as { code?: string }).code).toBe('forbidden');

    const wrong = await graphql(t.app, 'mutation { signIn(email: "gil@example.com", password: "not the password") { accessToken } }', { headers: anonymous });
    const unknown = await graphql(t.app, 'mutation { signIn(email: "nobody@example.com", password: "not the password") { accessToken } }', { headers: anonymous });
    expect(wrong.body.errors?.[0]?.message).toBe(unknown.body.errors?.[0]?.message);
    expect((wrong.body.errors?.[0]?.extensions as { code?: string }).code).toBe('invalid-credentials');

    const session = await signIn('correct horse battery staple');
    expect(session.expiresIn).toBe(900);
    const headers = { authorization: `Bearer ${session.accessToken}` };
    expect(dataOf(await graphql<{ users: { email: string }[] }>(t.app, '{ users { email } }', { headers })).users).toEqual([{ email: 'gil@example.com' }]);

    const renewed = dataOf(await graphql<{ refresh: Session }>(t.app, `mutation($r: String!) { refresh(refreshToken: $r) { ${SESSION} } }`, { headers: anonymous, variables: { r: session.refreshToken } })).refresh;
    expect(await refreshCode(session.refreshToken)).toBe('invalid-credentials');
    expect(await refreshCode(renewed.refreshToken)).toBe('invalid-credentials');

    const other = await signIn('correct horse battery staple');
    const here = await signIn('correct horse battery staple');
    const changed = await graphql<{ changePassword: boolean }>(t.app, 'mutation { changePassword(currentPassword: "correct horse battery staple", newPassword: "another long passphrase") }', { headers: { authorization: `Bearer ${here.accessToken}` } });
    expect(dataOf(changed).changePassword).toBe(true);
    expect(await refreshCode(other.refreshToken)).toBe('invalid-credentials');
    expect(dataOf(await graphql<{ signOut: boolean }>(t.app, `mutation($r: String!) { signOut(refreshToken: $r) }`, { headers: anonymous, variables: { r: here.refreshToken } })).signOut).toBe(true);
    expect(await refreshCode(here.refreshToken)).toBe('invalid-credentials');
    expect((await signIn('another long passphrase')).user?.email).toBe('gil@example.com');
  });
});
