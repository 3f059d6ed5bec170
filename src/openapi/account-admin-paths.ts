import type { AccountsModel } from '../schema/accounts-model.js';
import type { PathItemObject, SchemaObject } from './openapi-types.js';
import { BODY_FAILURES as BODY, idParameter, operation, success } from './operation-builder.js';
import { ADMIN_ONLY } from './operation-security.js';
import { mergeFailures, type Failures } from './problem-responses.js';

const TAGS = ['auth'];
const BY_ID: Failures = { 404: ['not-found'], 414: ['uri-too-long'] };

/**
 * `/v1/auth/accounts` and its actions (src/rest/account-admin-routes.ts): account administration,
 * for admins, of a schema with accounts.
 */
export function accountAdminPaths(accounts: AccountsModel): Record<string, PathItemObject> {
  const admin = [ADMIN_ONLY];
  const account: SchemaObject = {
    type: 'object',
    description: 'An account as account administration shows it.',
    properties: {
      id: { type: 'integer' },
      identifier: { type: ['string', 'null'], description: `Its ${accounts.identifier}.` },
      emailVerified: { type: 'boolean' },
      disabled: { type: 'boolean', description: 'A disabled account cannot sign in or refresh; its access tokens are refused.' },
      createdAt: { type: 'string', format: 'date-time' },
      activeSessions: { type: 'integer', description: 'Sessions that can still refresh.' },
    },
    required: ['id', 'identifier', 'emailVerified', 'disabled', 'createdAt', 'activeSessions'],
    additionalProperties: false,
  };
  const base = '/v1/auth/accounts';
  const action = (operationId: string, summary: string, description: string): PathItemObject => ({
    parameters: [idParameter('id', 'account')],
    post: operation({ operationId, summary, description, tags: TAGS }, admin, { 200: success('The account, as it is now.', account, [['Cache-Control', true]]) }, mergeFailures(BODY, BY_ID)),
  });
  return {
    [base]: {
      get: operation(
        {
          operationId: 'listAccounts',
          summary: 'List accounts',
          description: `Newest first, a page at a time: \`next\` is the \`after\` of the next page (null on the last). \`q\` keeps the accounts whose ${accounts.identifier} starts with it, ignoring case.`,
          tags: TAGS,
          parameters: [
            { name: 'q', in: 'query', required: false, description: `The start of the ${accounts.identifier} (at most 320 characters).`, schema: { type: 'string', maxLength: 320 } },
            { name: 'limit', in: 'query', required: false, description: 'Accounts per page, 1 to 100 (default 50).', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
            { name: 'after', in: 'query', required: false, description: 'The `next` of the previous page: accounts older than this id.', schema: { type: 'integer', minimum: 1 } },
          ],
        },
        admin,
        {
          200: success(
            'A page of accounts.',
            { type: 'object', properties: { items: { type: 'array', items: account }, next: { type: ['string', 'null'] } }, required: ['items', 'next'], additionalProperties: false },
            [['Cache-Control', true]],
          ),
        },
        { 400: ['invalid-query'] },
      ),
    },
    [`${base}/{id}/disable`]: action('disableAccount', 'Disable an account', 'Sign-in and refresh then answer 401 invalid-credentials, as for a wrong password; every session ends (refresh tokens revoked, access tokens refused within 10 seconds).'),
    [`${base}/{id}/enable`]: action('enableAccount', 'Enable an account again', 'Its user can sign in again; sessions that ended stay ended.'),
    [`${base}/{id}/sign-out`]: action('signOutAccount', 'Sign an account out everywhere', 'Every refresh token of the account is revoked; its access tokens are refused within 10 seconds.'),
    [`${base}/{id}/resend-verification`]: {
      parameters: [idParameter('id', 'account')],
      post: operation(
        { operationId: 'resendAccountVerification', summary: 'Send the verification email again', description: 'Under the same per-address quota as every account email.', tags: TAGS },
        admin,
        {
          200: success('Nothing sent: the email is verified already.', { type: 'object', properties: { status: { const: 'already-verified' } }, required: ['status'], additionalProperties: false }, [['Cache-Control', true]]),
          202: success('The message is on its way.', { type: 'object', properties: { status: { const: 'sent' } }, required: ['status'], additionalProperties: false }, [['Cache-Control', true]]),
        },
        mergeFailures(BODY, mergeFailures(BY_ID, { 429: ['rate-limited'], 503: ['email-not-configured'] })),
      ),
    },
  };
}
