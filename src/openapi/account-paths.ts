import type { AccountsModel } from '../schema/accounts-model.js';
import type { AccessRule } from '../schema/schema-model.js';
import { type OperationObject, type PathItemObject, type SchemaObject, ref } from './openapi-types.js';
import { BODY_FAILURES as BODY, JSON_MEDIA_TYPE, operation, success } from './operation-builder.js';
import { mergeFailures, type Failures } from './problem-responses.js';

const PUBLIC: AccessRule = { kind: 'public' };
const AUTHENTICATED: AccessRule = { kind: 'authenticated' };
const TAGS = ['auth'];
const PASSWORD: SchemaObject = { type: 'string', minLength: 8, maxLength: 1024, description: '8 to 1,024 characters, not one of the most common passwords.' };
const REFRESH_BODY: SchemaObject = { type: 'object', properties: { refreshToken: { type: 'string' } }, required: ['refreshToken'] };
const WRONG: Failures = { 401: ['invalid-credentials'], 422: ['validation-failed'] };
/** The account throttles (failed sign-ins per identifier, account requests per address). */
const THROTTLED: Failures = { 429: ['rate-limited'] };

function jsonBody(schema: SchemaObject): OperationObject['requestBody'] {
  return { required: true, content: { [JSON_MEDIA_TYPE]: { schema } } };
}

/**
 * `/v1/auth/sign-up`, `sign-in`, `refresh`, `sign-out`, `sign-out-everywhere`, `change-password`,
 * `verify-email/request`, `verify-email`, `forgot-password`, `reset-password` and `/.well-known/jwks.json` of a schema with accounts (src/rest/account-routes.ts).
 * `recordSchema` names the account resource's record schema (null: this version lacks it).
 */
export function accountPaths(accounts: AccountsModel, recordSchema: string | undefined): Record<string, PathItemObject> {
  const user: SchemaObject = recordSchema === undefined ? { type: ['object', 'null'] } : { oneOf: [ref('schemas', recordSchema), { type: 'null' }] };
  const identifier = accounts.identifier;
  const session: SchemaObject = {
    type: 'object',
    description: 'A session: a short-lived access token (a JWT signed by this server, EdDSA) and a refresh token (opaque, single-use).',
    properties: {
      accessToken: { type: 'string' },
      tokenType: { const: 'Bearer' },
      expiresIn: { type: 'integer', description: 'Seconds the access token lives.' },
      refreshToken: { type: 'string' },
      user: { ...user, description: "The account's record as the resource's read rules show it to its own user." },
    },
    required: ['accessToken', 'tokenType', 'expiresIn', 'refreshToken', 'user'],
    additionalProperties: false,
  };
  const tokens = (description: string) => success(description, session, [['Cache-Control', true]]);
  const done = { 204: success('Done.') };
  const accepted = {
    202: success(
      'Taken: the message is on its way if an account has the address and needs it (the same answer in every case).',
      { type: 'object', properties: { status: { const: 'accepted' }, detail: { type: 'string' } }, required: ['status', 'detail'], additionalProperties: false },
      [['Cache-Control', true]],
    ),
  };
  const post = (operationId: string, summary: string, description: string, rule: AccessRule, body: SchemaObject | undefined, successes: Parameters<typeof operation>[2], failures: Failures): PathItemObject => ({
    post: operation({ operationId, summary, description, tags: TAGS, ...(body === undefined ? {} : { requestBody: jsonBody(body) }) }, [rule], successes, mergeFailures(BODY, failures)),
  });
  const signUpAccepted = {
    202: success(
      'emailVerification is required: the same answer for a new and a taken identifier (admins get 201 or 409); the rest goes by email.',
      { type: 'object', properties: { status: { const: 'accepted' }, detail: { type: 'string' } }, required: ['status', 'detail'], additionalProperties: false },
      [['Cache-Control', true]],
    ),
  };
  const base = '/v1/auth';
  return {
    [`${base}/sign-up`]: post(
      'signUp',
      'Create an account',
      `The ${identifier}, a password and profile fields of ${accounts.resource}. The body may set only the fields the account's own user may write (the resource's field access and create rule). Sign-up is ${accounts.signUp}.`,
      PUBLIC,
      { type: 'object', properties: { [identifier]: { type: 'string' }, password: PASSWORD }, required: [identifier, 'password'] },
      {
        201: success('The new account, as its user sees it.', { type: 'object', properties: { user }, required: ['user'], additionalProperties: false }, [['Cache-Control', true]]),
        ...(accounts.emailVerification === 'required' ? signUpAccepted : {}),
      },
      { 403: ['forbidden'], 409: ['unique-conflict', 'reference-conflict'], 422: ['validation-failed'], ...THROTTLED },
    ),
    [`${base}/sign-in`]: post(
      'signIn',
      'Sign in with a password',
      `The same 401 for an unknown ${identifier} and a wrong password.`,
      PUBLIC,
      { type: 'object', properties: { [identifier]: { type: 'string' }, password: { type: 'string' } }, required: [identifier, 'password'] },
      { 200: tokens('A new session.') },
      mergeFailures(WRONG, THROTTLED, accounts.emailVerification === 'required' ? { 403: ['email-not-verified'] } : {}),
    ),
    [`${base}/refresh`]: post(
      'refreshSession',
      'Exchange a refresh token for new tokens',
      'The refresh token is used up and a new one issued. A used refresh token presented again ends its whole session.',
      PUBLIC,
      REFRESH_BODY,
      { 200: tokens('The session, renewed.') },
      mergeFailures(WRONG, THROTTLED),
    ),
    [`${base}/sign-out`]: post('signOut', 'End a session', 'Revokes the refresh token and every token of its session. An unknown token is a 204 too.', PUBLIC, REFRESH_BODY, done, { 422: ['validation-failed'] }),
    [`${base}/sign-out-everywhere`]: post(
      'signOutEverywhere',
      "End every session of the caller's account",
      'Needs an account access token. Its access tokens already issued are refused within 10 seconds.',
      AUTHENTICATED,
      undefined,
      done,
      {},
    ),
    [`${base}/change-password`]: post(
      'changePassword',
      "Change the caller's password",
      'Needs an account access token and the current password; every other session of the account ends.',
      AUTHENTICATED,
      { type: 'object', properties: { currentPassword: { type: 'string' }, newPassword: PASSWORD }, required: ['currentPassword', 'newPassword'] },
      done,
      WRONG,
    ),
    [`${base}/verify-email/request`]: post(
      'requestEmailVerification',
      'Send a verification link',
      `Sends a link with a one-time token (24 hours) to the account with this ${identifier}, if there is one, it is not verified yet, and the address's email quota allows. The same 202 in every case.`,
      PUBLIC,
      { type: 'object', properties: { [identifier]: { type: 'string' } }, required: [identifier] },
      accepted,
      mergeFailures({ 422: ['validation-failed'], 503: ['email-not-configured'] }, THROTTLED),
    ),
    [`${base}/verify-email`]: post(
      'verifyEmail',
      'Confirm an email with its link token',
      'The token of a verification link, once.',
      PUBLIC,
      { type: 'object', properties: { token: { type: 'string' } }, required: ['token'] },
      done,
      mergeFailures({ 400: ['invalid-link-token'], 422: ['validation-failed'] }, THROTTLED),
    ),
    [`${base}/forgot-password`]: post(
      'forgotPassword',
      'Send a password-reset link',
      `Sends a link with a one-time token (30 minutes) to the account with this ${identifier}, if there is one and the address's email quota allows. The same 202 in every case.`,
      PUBLIC,
      { type: 'object', properties: { [identifier]: { type: 'string' } }, required: [identifier] },
      accepted,
      mergeFailures({ 422: ['validation-failed'], 503: ['email-not-configured'] }, THROTTLED),
    ),
    [`${base}/reset-password`]: post(
      'resetPassword',
      'Set a new password with a reset link token',
      "The token of a reset link, once, and the new password (checked first: a refused one leaves the token usable). Every session of the account ends, and its other reset links stop working.",
      PUBLIC,
      { type: 'object', properties: { token: { type: 'string' }, newPassword: PASSWORD }, required: ['token', 'newPassword'] },
      done,
      mergeFailures({ 400: ['invalid-link-token'], 422: ['validation-failed'] }, THROTTLED),
    ),
    '/.well-known/jwks.json': {
      get: operation(
        { operationId: 'getJwks', summary: 'The public keys of access tokens', description: 'A JSON Web Key Set (RFC 7517): the keys that verify the access tokens this server signs.', tags: TAGS },
        [PUBLIC],
        { 200: success('The keys.', { type: 'object', properties: { keys: { type: 'array', items: { type: 'object' } } }, required: ['keys'] }) },
        {},
      ),
    },
  };
}
