import * as client from 'openid-client';
import { OidcProviderUnavailableError } from '../errors.js';
import type { VerifiedIdentity } from './oidc-settings.js';
import { verifiedIdentity } from './verified-identity.js';

/**
 * GitHub's OAuth 2.0 endpoints (GitHub has no OpenID Connect discovery for users):
 * https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
 */
export const GITHUB_METADATA: client.ServerMetadata = Object.freeze({
  issuer: 'https://github.com',
  authorization_endpoint: 'https://github.com/login/oauth/authorize',
  token_endpoint: 'https://github.com/login/oauth/access_token',
});

const GITHUB_API = 'https://api.github.com';

/** The user's profile and their email addresses with whether GitHub verified each. */
export const GITHUB_SCOPE = 'read:user user:email';

interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

/**
 * The identity of a GitHub access token: the numeric user id as subject, the primary email address
 * if GitHub verified it (GET /user/emails), the name (or login).
 */
export async function githubIdentity(configuration: client.Configuration, accessToken: string, provider: string): Promise<VerifiedIdentity> {
  const user = await githubJson(configuration, accessToken, '/user');
  const emails = await githubJson(configuration, accessToken, '/user/emails');
  const { id, name, login } = (user ?? {}) as { id?: unknown; name?: unknown; login?: unknown };
  if (typeof id !== 'number' && typeof id !== 'string') throw new OidcProviderUnavailableError(`${provider} answered no user id.`);
  const primary = Array.isArray(emails) ? (emails as GithubEmail[]).find((e) => e.primary) : undefined;
  return verifiedIdentity(provider, GITHUB_METADATA.issuer, String(id), {
    email: primary?.email,
    email_verified: primary?.verified === true,
    name: typeof name === 'string' && name !== '' ? name : login,
  });
}

async function githubJson(configuration: client.Configuration, accessToken: string, path: string): Promise<unknown> {
  const headers = new Headers({ accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' });
  const response = await client.fetchProtectedResource(configuration, accessToken, new URL(path, GITHUB_API), 'GET', undefined, headers);
  if (!response.ok) throw new OidcProviderUnavailableError(`GitHub answered ${response.status} to GET ${path}.`);
  return response.json();
}
