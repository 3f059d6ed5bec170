import * as client from 'openid-client';
import { OidcProviderUnavailableError } from '../errors.js';
import { isLoopbackUrl, type VerifiedIdentity } from './oidc-settings.js';
import { verifiedIdentity } from './verified-identity.js';

/** GitHub's web address, where its OAuth endpoints are; its API is at api.github.com. */
export const GITHUB_WEB_URL = 'https://github.com';

/**
 * GitHub's OAuth 2.0 endpoints (GitHub has no OpenID Connect discovery for users), on github.com
 * or on a GitHub Enterprise Server at `webUrl` (its API under /api/v3):
 * https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
 */
export function githubConfiguration(webUrl: string | undefined, clientId: string, clientSecret: string): client.Configuration {
  const web = new URL(webUrl ?? GITHUB_WEB_URL);
  const base = web.href.endsWith('/') ? web.href : `${web.href}/`;
  const configuration = new client.Configuration(
    { issuer: web.href.replace(/\/$/, ''), authorization_endpoint: new URL('login/oauth/authorize', base).href, token_endpoint: new URL('login/oauth/access_token', base).href },
    clientId,
    clientSecret,
  );
  // Plain http only to a server on this machine (the tests' stand-in); checkOidcOptions refuses it elsewhere.
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out; loopback only
  if (web.protocol === 'http:' && isLoopbackUrl(web)) client.allowInsecureRequests(configuration);
  return configuration;
}

function githubApiUrl(webUrl: string | undefined): string {
  return webUrl === undefined || new URL(webUrl).href === new URL(GITHUB_WEB_URL).href ? 'https://api.github.com/' : new URL('api/v3/', webUrl.endsWith('/') ? webUrl : `${webUrl}/`).href;
}

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
export async function githubIdentity(configuration: client.Configuration, accessToken: string, provider: string, webUrl: string | undefined): Promise<VerifiedIdentity> {
  const api = githubApiUrl(webUrl);
  const user = await githubJson(configuration, accessToken, api, 'user');
  const emails = await githubJson(configuration, accessToken, api, 'user/emails');
  const { id, name, login } = (user ?? {}) as { id?: unknown; name?: unknown; login?: unknown };
  if (typeof id !== 'number' && typeof id !== 'string') throw new OidcProviderUnavailableError(`${provider} answered no user id.`);
  const primary = Array.isArray(emails) ? (emails as GithubEmail[]).find((e) => e.primary) : undefined;
  return verifiedIdentity(provider, configuration.serverMetadata().issuer, String(id), {
    email: primary?.email,
    email_verified: primary?.verified === true,
    name: typeof name === 'string' && name !== '' ? name : login,
  });
}

async function githubJson(configuration: client.Configuration, accessToken: string, api: string, path: string): Promise<unknown> {
  const headers = new Headers({ accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' });
  const response = await client.fetchProtectedResource(configuration, accessToken, new URL(path, api), 'GET', undefined, headers);
  if (!response.ok) throw new OidcProviderUnavailableError(`GitHub answered ${response.status} to GET /${path}.`);
  return response.json();
}
