import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/index.js';
import { SchemaError } from '../src/errors.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * Admin accounts (`accounts.admin`), account state (disable, enable, force sign-out) and the
 * revocation of access tokens, and the admin endpoints under /v1/auth/accounts
 * (docs/accounts.md#admin-accounts, #account-administration, #revocation), on the suite's
 * database. The verified-token cache is off (apiKeyCacheMs: 0), so a revocation shows at once.
 */

const ADMIN_SCHEMA = ACCOUNTS_SCHEMA.replace('claims: [role, orgId] }', `claims: [role, orgId], admin: "role = 'admin'" }`);
const PASSWORD = 'correct horse battery staple';
const anonymous = { authorization: '' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Session {
  accessToken: string;
  refreshToken: string;
}
interface Item {
  id: number;
  identifier: string | null;
  emailVerified: boolean;
  disabled: boolean;
  createdAt: string;
  activeSessions: number;
}

let t: TestApp;
let messages: string[];
let smtp: SMTPServer;

beforeAll(async () => {
  messages = [];
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        messages.push(session.envelope.rcptTo.map((to) => to.address).join(','));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const { port } = smtp.server.address() as AddressInfo;
  t = await startTestApp({
    schema: parseSchemaText(ADMIN_SCHEMA),
    apiKeyCacheMs: 0,
    mail: { smtpUrl: `smtp://127.0.0.1:${port}`, from: 'App <no-reply@example.com>' },
    publicUrl: 'https://api.example.com',
    rateLimits: { accountEmails: '2/1h' },
  });
});
afterAll(async () => {
  await t.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const post = (url: string, payload?: unknown, headers: Record<string, string> = anonymous) =>
  t.app.inject({ method: 'POST', url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
const get = (url: string, headers: Record<string, string> = anonymous) => t.app.inject({ method: 'GET', url, headers });
/** As the admin token (the test app's default credential). */
const asAdmin = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
  t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

async function account(email: string, role?: 'admin'): Promise<number> {
  const res = await post('/v1/auth/sign-up', { email, password: PASSWORD });
  expect(res.statusCode, res.body).toBe(201);
  const id = json<{ user: { id: number } }>(res).user.id;
  if (role !== undefined) expect((await asAdmin('PATCH', `/users/${id}`, { role })).statusCode).toBe(200);
  return id;
}

async function signIn(email: string): Promise<Session> {
  const res = await post('/v1/auth/sign-in', { email, password: PASSWORD });
  expect(res.statusCode, res.body).toBe(200);
  return json<Session>(res);
}

describe('admin accounts', () => {
  it('an account the admin expression holds for gets the admin scope; a member does not', async () => {
    await account('root@example.com', 'admin');
    await account('mia@example.com');
    const admin = await signIn('root@example.com');
    const me = json<{ scopes: string[]; admin: boolean; manage: { tokens: boolean } }>(await get('/v1/auth/me', bearer(admin.accessToken)));
    expect(me).toMatchObject({ scopes: ['admin'], admin: true, manage: { tokens: true } });
    // Admin like an admin token: other users' records, the API keys.
    expect((await get('/users', bearer(admin.accessToken))).json()).toHaveLength(2);
    expect((await get('/v1/tokens', bearer(admin.accessToken))).statusCode).toBe(200);
    expect((await get('/v1/auth/accounts', bearer(admin.accessToken))).statusCode).toBe(200);

    const member = await signIn('mia@example.com');
    expect(json<{ scopes: string[]; admin: boolean }>(await get('/v1/auth/me', bearer(member.accessToken)))).toMatchObject({ scopes: [], admin: false });
    expect((await get('/v1/tokens', bearer(member.accessToken))).statusCode).toBe(403);
  });

  it('is judged again at refresh: a demoted admin loses the scope with the next token', async () => {
    const id = await account('demoted@example.com', 'admin');
    const session = await signIn('demoted@example.com');
    expect(json<{ admin: boolean }>(await get('/v1/auth/me', bearer(session.accessToken))).admin).toBe(true);
    expect((await asAdmin('PATCH', `/users/${id}`, { role: 'member' })).statusCode).toBe(200);
    const renewed = await post('/v1/auth/refresh', { refreshToken: session.refreshToken });
    expect(renewed.statusCode, renewed.body).toBe(200);
    expect(json<{ admin: boolean; scopes: string[] }>(await get('/v1/auth/me', bearer(json<Session>(renewed).accessToken)))).toMatchObject({ admin: false, scopes: [] });
  });

  it('an admin expression that cannot be read stops the start with a schema error naming accounts.admin', async () => {
    for (const [admin, says] of [
      ["rank = 'admin'", 'rank'],
      ["role = 'root'", 'root'],
      ["role = 'admin' and", 'admin'],
    ] as const) {
      const schema = parseSchemaText(ACCOUNTS_SCHEMA.replace('claims: [role, orgId] }', `claims: [role], admin: "${admin}" }`));
      const started = buildApp({ schema, databaseUrl: 'sqlite::memory:' });
      const error: unknown = await started.then(
        async (app) => {
          await app.close();
          return undefined;
        },
        (failure: unknown) => failure,
      );
      expect(error, admin).toBeInstanceOf(SchemaError);
      expect((error as Error).message).toContain('accounts.admin');
      expect((error as Error).message).toContain(says);
    }
  });
});

describe('account state and revocation', () => {
  it('disable: sign-in answers as a wrong password, refresh and the live access token are refused; enable lets the user in again', async () => {
    const id = await account('dora@example.com');
    const session = await signIn('dora@example.com');
    expect((await get('/v1/auth/me', bearer(session.accessToken))).statusCode).toBe(200);

    const disabled = await asAdmin('POST', `/v1/auth/accounts/${id}/disable`);
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(json<Item>(disabled)).toMatchObject({ id, identifier: 'dora@example.com', disabled: true, activeSessions: 0 });

    const wrongPassword = await post('/v1/auth/sign-in', { email: 'dora@example.com', password: 'not her password' });
    const refusedSignIn = await post('/v1/auth/sign-in', { email: 'dora@example.com', password: PASSWORD });
    expect(refusedSignIn.statusCode).toBe(401);
    const withoutRequestId = (body: Record<string, unknown>) => Object.fromEntries(Object.entries(body).filter(([name]) => name !== 'requestId'));
    expect(withoutRequestId(json(refusedSignIn))).toEqual(withoutRequestId(json(wrongPassword)));
    expect(json<{ code: string }>(await post('/v1/auth/refresh', { refreshToken: session.refreshToken })).code).toBe('invalid-credentials');
    const live = await get('/v1/auth/me', bearer(session.accessToken));
    expect(live.statusCode).toBe(401);
    expect(json<{ code: string }>(live).code).toBe('invalid-token');

    const enabled = await asAdmin('POST', `/v1/auth/accounts/${id}/enable`);
    expect(json<Item>(enabled)).toMatchObject({ id, disabled: false });
    const again = await signIn('dora@example.com');
    expect((await get('/v1/auth/me', bearer(again.accessToken))).statusCode).toBe(200);
    // The sessions that ended stay ended.
    expect((await get('/v1/auth/me', bearer(session.accessToken))).statusCode).toBe(401);
    expect((await post('/v1/auth/refresh', { refreshToken: session.refreshToken })).statusCode).toBe(401);
  });

  it('force sign-out: every refresh token revoked and every access token refused; a new sign-in works', async () => {
    const id = await account('fred@example.com');
    const phone = await signIn('fred@example.com');
    const laptop = await signIn('fred@example.com');
    const listed = json<{ items: Item[] }>(await asAdmin('GET', '/v1/auth/accounts?q=fred'));
    expect(listed.items).toEqual([expect.objectContaining({ id, activeSessions: 2, disabled: false })]);

    const res = await asAdmin('POST', `/v1/auth/accounts/${id}/sign-out`);
    expect(res.statusCode, res.body).toBe(200);
    expect(json<Item>(res).activeSessions).toBe(0);
    for (const session of [phone, laptop]) {
      expect((await get('/v1/auth/me', bearer(session.accessToken))).statusCode).toBe(401);
      expect((await post('/v1/auth/refresh', { refreshToken: session.refreshToken })).statusCode).toBe(401);
    }
    // Signed in again at once (the same millisecond, even): the new token is after the revocation.
    const fresh = await signIn('fred@example.com');
    expect((await get('/v1/auth/me', bearer(fresh.accessToken))).statusCode).toBe(200);
  });

  it("sign-out-everywhere and a password change refuse the account's access tokens issued before", async () => {
    await account('gus@example.com');
    const one = await signIn('gus@example.com');
    expect((await post('/v1/auth/sign-out-everywhere', undefined, bearer(one.accessToken))).statusCode).toBe(204);
    expect((await get('/v1/auth/me', bearer(one.accessToken))).statusCode).toBe(401);

    const phone = await signIn('gus@example.com');
    const laptop = await signIn('gus@example.com');
    const changed = await post('/v1/auth/change-password', { currentPassword: PASSWORD, newPassword: 'a new and longer passphrase' }, bearer(laptop.accessToken));
    expect(changed.statusCode, changed.body).toBe(204);
    expect((await get('/v1/auth/me', bearer(phone.accessToken))).statusCode).toBe(401);
    // The session that changed it keeps its refresh token: it refreshes into a valid access token.
    const renewed = await post('/v1/auth/refresh', { refreshToken: laptop.refreshToken });
    expect(renewed.statusCode, renewed.body).toBe(200);
    expect((await get('/v1/auth/me', bearer(json<Session>(renewed).accessToken))).statusCode).toBe(200);
  });
});

describe('revocation through this instance', () => {
  it("takes effect at once here, however long the verified-token cache would trust the token", async () => {
    const cached = await startTestApp({ schema: parseSchemaText(ADMIN_SCHEMA), apiKeyCacheMs: 3_600_000 });
    try {
      const signUp = await cached.app.inject({ method: 'POST', url: '/v1/auth/sign-up', headers: anonymous, payload: { email: 'hal@example.com', password: PASSWORD } });
      const id = json<{ user: { id: number } }>(signUp).user.id;
      const signIn = await cached.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: anonymous, payload: { email: 'hal@example.com', password: PASSWORD } });
      const token = json<Session>(signIn).accessToken;
      const me = () => cached.app.inject({ method: 'GET', url: '/v1/auth/me', headers: bearer(token) });
      expect((await me()).statusCode).toBe(200);
      expect((await me()).statusCode).toBe(200); // now from the cache
      expect((await cached.app.inject({ method: 'POST', url: `/v1/auth/accounts/${id}/sign-out` })).statusCode).toBe(200);
      expect((await me()).statusCode).toBe(401);
    } finally {
      await cached.close();
    }
  });
});

describe('the admin endpoints', () => {
  it('refuse anonymous callers (401) and accounts that are not admins (403)', async () => {
    const id = await account('nina@example.com');
    const member = await signIn('nina@example.com');
    for (const [method, url] of [
      ['GET', '/v1/auth/accounts'],
      ['POST', `/v1/auth/accounts/${id}/disable`],
      ['POST', `/v1/auth/accounts/${id}/enable`],
      ['POST', `/v1/auth/accounts/${id}/sign-out`],
      ['POST', `/v1/auth/accounts/${id}/resend-verification`],
    ] as const) {
      const nobody = await t.app.inject({ method, url, headers: anonymous });
      expect(nobody.statusCode, url).toBe(401);
      expect(nobody.headers['content-type']).toContain('application/problem+json');
      const refused = await t.app.inject({ method, url, headers: bearer(member.accessToken) });
      expect(refused.statusCode, url).toBe(403);
      expect(json<{ code: string }>(refused).code).toBe('forbidden');
    }
    // Nothing was done.
    expect((await get('/v1/auth/me', bearer(member.accessToken))).statusCode).toBe(200);
  });

  it('list newest first, a page at a time, searched by the start of the email ignoring case', async () => {
    for (const name of ['page1', 'page2', 'page3']) await account(`${name}@list.example.com`);
    const first = json<{ items: Item[]; next: string | null }>(await asAdmin('GET', '/v1/auth/accounts?q=PAGE&limit=2'));
    expect(first.items.map((item) => item.identifier)).toEqual(['page3@list.example.com', 'page2@list.example.com']);
    expect(first.next).not.toBeNull();
    const second = json<{ items: Item[]; next: string | null }>(await asAdmin('GET', `/v1/auth/accounts?q=page&limit=2&after=${first.next ?? ''}`));
    expect(second.items.map((item) => item.identifier)).toEqual(['page1@list.example.com']);
    expect(second.next).toBeNull();
    expect(second.items[0]).toMatchObject({ emailVerified: false, disabled: false, activeSessions: 0 });
    const all = json<{ items: Item[] }>(await asAdmin('GET', '/v1/auth/accounts'));
    const ids = all.items.map((item) => item.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });

  it('hostile input: ids that are not numbers, huge or repeated q, bad limits and cursors are clear 4xx problems', async () => {
    for (const id of ['abc', '0', '-1', '1.5', '99999999999999999999', '%2e%2e', '1%20or%201=1', 'x'.repeat(2000)]) {
      const res = await asAdmin('POST', `/v1/auth/accounts/${id}/disable`);
      expect(res.statusCode, id).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, id).toBeLessThan(500);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    expect((await asAdmin('POST', '/v1/auth/accounts/123456/disable')).statusCode).toBe(404);
    expect((await asAdmin('GET', `/v1/auth/accounts?q=${'a'.repeat(100_000)}`)).statusCode).toBe(414);
    for (const query of [`q=${'a'.repeat(1000)}`, 'q=a&q=b', 'limit=0', 'limit=101', 'limit=ten', 'after=abc', 'after=-5']) {
      const res = await asAdmin('GET', `/v1/auth/accounts?${query}`);
      expect(res.statusCode, query.slice(0, 20)).toBe(400);
      expect(json<{ code: string }>(res).code).toBe('invalid-query');
    }
    // Characters that mean something in SQL LIKE or the filter language are only text.
    for (const q of ["%", '_', "'", '\\', 'a%b']) {
      const res = await asAdmin('GET', `/v1/auth/accounts?q=${encodeURIComponent(q)}`);
      expect(res.statusCode, q).toBe(200);
      expect(json<{ items: Item[] }>(res).items, q).toEqual([]);
    }
  });

  it('resend-verification sends the email again under the per-address quota, and says when it is verified already', async () => {
    const id = await account('vera@example.com');
    await t.app.restgraph.accountEmails?.settled();
    const sentBefore = messages.filter((to) => to === 'vera@example.com').length;
    expect(sentBefore).toBe(1); // the sign-up's
    const res = await asAdmin('POST', `/v1/auth/accounts/${id}/resend-verification`);
    expect(res.statusCode, res.body).toBe(202);
    expect(json<{ status: string }>(res).status).toBe('sent');
    await t.app.restgraph.accountEmails?.settled();
    expect(messages.filter((to) => to === 'vera@example.com')).toHaveLength(2);
    // The quota (2 an hour here) is used up.
    const throttled = await asAdmin('POST', `/v1/auth/accounts/${id}/resend-verification`);
    expect(throttled.statusCode).toBe(429);

    await t.app.restgraph.accounts?.markEmailVerified(id);
    const verified = await asAdmin('POST', `/v1/auth/accounts/${id}/resend-verification`);
    expect(verified.statusCode).toBe(200);
    expect(json<{ status: string }>(verified).status).toBe('already-verified');
    const listed = json<{ items: Item[] }>(await asAdmin('GET', '/v1/auth/accounts?q=vera'));
    expect(listed.items[0]?.emailVerified).toBe(true);
  });
});
