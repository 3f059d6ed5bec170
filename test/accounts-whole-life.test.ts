import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { dataOf, graphql, type GraphqlReply } from './helpers/graphql-request.js';
import { linkToken, smtpSink, type SmtpSink } from './helpers/smtp-sink.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * The whole life of an account on examples/accounts.yaml (docs/accounts.md), once through REST and
 * once through GraphQL, on the suite's database, with the emails read from a local SMTP sink:
 * sign-up, the verification link, verify, sign-in, API calls under the @auth.sub rules (the user
 * sees only their own notes and profile), refresh, reuse of a used refresh token (the session's
 * newest token dies too), forgot-password, reset by the emailed link (every old session ends),
 * sign-in with the new password, sign-out.
 */

const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'a brand new passphrase for me';
const PUBLIC_URL = 'https://api.example.com';
const anonymous = { authorization: '' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Session {
  accessToken: string;
  refreshToken: string;
  user: { id: number | string; email: string } | null;
}

let sink: SmtpSink;
let t: TestApp;

beforeAll(async () => {
  sink = await smtpSink();
  t = await startTestApp({
    schema: parseSchemaText(readFileSync(new URL('../examples/accounts.yaml', import.meta.url), 'utf8')),
    mail: { smtpUrl: sink.url, from: 'App <no-reply@example.com>' },
    publicUrl: PUBLIC_URL,
  });
});
afterAll(async () => {
  await t.close();
  await sink.close();
});

function post(url: string, payload: unknown, headers: Record<string, string> = anonymous) {
  return t.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });
}

/** The token of the last `path` link mailed to `to`, once every message on its way reached the sink. */
async function mailedToken(to: string, path: 'verify-email' | 'reset-password'): Promise<string> {
  await t.app.restgraph.accountEmails?.settled();
  const text = sink.to(to).at(-1)?.text ?? '';
  const token = linkToken(text, PUBLIC_URL, path);
  expect(token, text).toBeDefined();
  return token ?? '';
}

async function emailVerified(accessToken: string): Promise<boolean> {
  const me = await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: bearer(accessToken) });
  expect(me.statusCode, me.body).toBe(200);
  return json<{ emailVerified: boolean }>(me).emailVerified;
}

/** Another user with a note of their own (through REST): what the account under test must not see. */
async function neighbour(email: string): Promise<{ userId: number; noteId: number }> {
  expect((await post('/v1/auth/sign-up', { email, password: PASSWORD, name: 'Neighbour' })).statusCode).toBe(201);
  const session = json<Session>(await post('/v1/auth/sign-in', { email, password: PASSWORD }));
  const note = await post('/notes', { text: 'not yours' }, bearer(session.accessToken));
  expect(note.statusCode, note.body).toBe(201);
  return { userId: Number(session.user?.id), noteId: json<{ id: number }>(note).id };
}

describe('the whole life of an account', () => {
  it('through REST', async () => {
    const other = await neighbour('rest-neighbour@example.com');
    const email = 'rest-ann@example.com';
    const up = await post('/v1/auth/sign-up', { email, password: PASSWORD, name: 'Ann' });
    expect(up.statusCode, up.body).toBe(201);
    const annId = json<{ user: { id: number } }>(up).user.id;

    // The verification email, its link, verify.
    const verifyToken = await mailedToken(email, 'verify-email');
    const first = json<Session>(await post('/v1/auth/sign-in', { email, password: PASSWORD }));
    expect(await emailVerified(first.accessToken)).toBe(false);
    expect((await post('/v1/auth/verify-email', { token: verifyToken })).statusCode).toBe(204);
    expect(await emailVerified(first.accessToken)).toBe(true);

    // Sign in, and the API under the @auth.sub rules.
    const signedIn = await post('/v1/auth/sign-in', { email, password: PASSWORD });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const session = json<Session>(signedIn);
    const as = bearer(session.accessToken);
    const note = await post('/notes', { text: 'Buy milk' }, as);
    expect(note.statusCode, note.body).toBe(201);
    expect(json<{ ownerId: number }>(note).ownerId).toBe(annId);
    const get = (url: string) => t.app.inject({ method: 'GET', url, headers: as });
    expect(json<{ text: string }[]>(await get('/notes')).map((n) => n.text)).toEqual(['Buy milk']);
    expect(json<{ email: string }[]>(await get('/users')).map((u) => u.email)).toEqual([email]);
    expect((await get(`/notes/${String(other.noteId)}`)).statusCode).toBe(404);
    expect((await get(`/users/${String(other.userId)}`)).statusCode).toBe(404);
    const patchOther = await t.app.inject({ method: 'PATCH', url: `/notes/${String(other.noteId)}`, headers: as, payload: { text: 'mine now' } });
    expect(patchOther.statusCode).toBe(404);
    const renamed = await t.app.inject({ method: 'PATCH', url: `/users/${String(annId)}`, headers: as, payload: { name: 'Ann B.' } });
    expect(renamed.statusCode, renamed.body).toBe(200);

    // Refresh; the used token again: the whole family ends, its newest token too.
    const renewed = await post('/v1/auth/refresh', { refreshToken: session.refreshToken });
    expect(renewed.statusCode, renewed.body).toBe(200);
    const newest = json<Session>(renewed);
    expect((await t.app.inject({ method: 'GET', url: '/notes', headers: bearer(newest.accessToken) })).statusCode).toBe(200);
    expect((await post('/v1/auth/refresh', { refreshToken: session.refreshToken })).statusCode).toBe(401);
    expect((await post('/v1/auth/refresh', { refreshToken: newest.refreshToken })).statusCode).toBe(401);

    // Forgot the password: the reset link ends every old session.
    const laptop = json<Session>(await post('/v1/auth/sign-in', { email, password: PASSWORD }));
    expect((await post('/v1/auth/forgot-password', { email })).statusCode).toBe(202);
    const resetToken = await mailedToken(email, 'reset-password');
    expect((await post('/v1/auth/reset-password', { token: resetToken, newPassword: NEW_PASSWORD })).statusCode).toBe(204);
    for (const old of [first, laptop]) expect((await post('/v1/auth/refresh', { refreshToken: old.refreshToken })).statusCode).toBe(401);
    expect((await post('/v1/auth/sign-in', { email, password: PASSWORD })).statusCode).toBe(401);

    // The new password; sign-out ends the session.
    const fresh = await post('/v1/auth/sign-in', { email, password: NEW_PASSWORD });
    expect(fresh.statusCode, fresh.body).toBe(200);
    const last = json<Session>(fresh);
    expect(json<{ text: string }[]>(await t.app.inject({ method: 'GET', url: '/notes', headers: bearer(last.accessToken) })).map((n) => n.text)).toEqual(['Buy milk']);
    expect((await post('/v1/auth/sign-out', { refreshToken: last.refreshToken })).statusCode).toBe(204);
    expect((await post('/v1/auth/refresh', { refreshToken: last.refreshToken })).statusCode).toBe(401);
  });

  it('through GraphQL', async () => {
    const other = await neighbour('gql-neighbour@example.com');
    const email = 'gql-ann@example.com';
    const SESSION = 'accessToken refreshToken user { id email }';
    const gql = <D>(query: string, variables: Record<string, unknown>, headers: Record<string, string> = anonymous): Promise<GraphqlReply<D>> => graphql<D>(t.app, query, { headers, variables });
    const codeOf = (reply: GraphqlReply<unknown>) => (reply.body.errors?.[0]?.extensions as { code?: string } | undefined)?.code;
    const signIn = async (password: string) => dataOf(await gql<{ signIn: Session }>(`mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { ${SESSION} } }`, { e: email, p: password })).signIn;
    const refresh = (token: string) => gql<{ refresh: Session }>(`mutation($r: String!) { refresh(refreshToken: $r) { ${SESSION} } }`, { r: token });

    const up = dataOf(await gql<{ signUp: { id: string; email: string } }>('mutation($e: String!, $p: String!) { signUp(password: $p, input: { email: $e, name: "Ann" }) { id email } }', { e: email, p: PASSWORD }));
    expect(up.signUp.email).toBe(email);

    const verifyToken = await mailedToken(email, 'verify-email');
    const first = await signIn(PASSWORD);
    expect(dataOf(await gql<{ verifyEmail: boolean }>('mutation($t: String!) { verifyEmail(token: $t) }', { t: verifyToken })).verifyEmail).toBe(true);
    // GraphQL has no field for it: /v1/auth/me tells.
    expect(await emailVerified(first.accessToken)).toBe(true);

    const session = await signIn(PASSWORD);
    const as = bearer(session.accessToken);
    const created = dataOf(await gql<{ createNote: { ownerId: number; text: string } }>('mutation { createNote(input: { text: "Buy milk" }) { ownerId text } }', {}, as));
    expect(String(created.createNote.ownerId)).toBe(up.signUp.id);
    const seen = dataOf(await gql<{ notes: { text: string }[]; users: { email: string }[] }>('{ notes { text } users { email } }', {}, as));
    expect(seen.notes.map((n) => n.text)).toEqual(['Buy milk']);
    expect(seen.users.map((u) => u.email)).toEqual([email]);
    // The neighbour's note and profile are hidden: not found, as over REST.
    const hidden = await gql<{ note: unknown; user: unknown }>('query($n: ID!, $u: ID!) { note(id: $n) { id } user(id: $u) { id } }', { n: String(other.noteId), u: String(other.userId) }, as);
    expect(hidden.body.data).toEqual({ note: null, user: null });
    expect(hidden.body.errors?.map((e) => [e.path?.[0], e.extensions.code]).sort()).toEqual([['note', 'not-found'], ['user', 'not-found']]);
    const taken = await gql('mutation($n: ID!) { updateNote(id: $n, input: { text: "mine now" }) { id } }', { n: String(other.noteId) }, as);
    expect(codeOf(taken)).toBe('not-found');

    const newest = dataOf(await refresh(session.refreshToken)).refresh;
    expect(dataOf(await gql<{ notes: unknown[] }>('{ notes { id } }', {}, bearer(newest.accessToken))).notes).toHaveLength(1);
    expect(codeOf(await refresh(session.refreshToken))).toBe('invalid-credentials');
    expect(codeOf(await refresh(newest.refreshToken))).toBe('invalid-credentials');

    const laptop = await signIn(PASSWORD);
    expect(dataOf(await gql<{ forgotPassword: boolean }>('mutation($e: String!) { forgotPassword(email: $e) }', { e: email })).forgotPassword).toBe(true);
    const resetToken = await mailedToken(email, 'reset-password');
    expect(dataOf(await gql<{ resetPassword: boolean }>('mutation($t: String!, $p: String!) { resetPassword(token: $t, newPassword: $p) }', { t: resetToken, p: NEW_PASSWORD })).resetPassword).toBe(true);
    for (const old of [first, laptop]) expect(codeOf(await refresh(old.refreshToken))).toBe('invalid-credentials');
    expect(codeOf(await gql('mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { accessToken } }', { e: email, p: PASSWORD }))).toBe('invalid-credentials');

    const last = await signIn(NEW_PASSWORD);
    expect(dataOf(await gql<{ notes: { text: string }[] }>('{ notes { text } }', {}, bearer(last.accessToken))).notes.map((n) => n.text)).toEqual(['Buy milk']);
    expect(dataOf(await gql<{ signOut: boolean }>('mutation($r: String!) { signOut(refreshToken: $r) }', { r: last.refreshToken })).signOut).toBe(true);
    expect(codeOf(await refresh(last.refreshToken))).toBe('invalid-credentials');
  });
});
