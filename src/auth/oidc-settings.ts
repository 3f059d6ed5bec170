import { ConfigError } from '../errors.js';

/**
 * One sign-in provider: an OpenID Connect issuer found by discovery (Google, Microsoft, any issuer),
 * or, for the provider named `github`, GitHub's OAuth 2.0 endpoints (GitHub has no OpenID Connect
 * for users).
 */
export interface OidcProviderOptions {
  /**
   * The issuer identifier, `https://…` (`http://` on a loopback address only). For `github`: left
   * out for github.com, or a GitHub Enterprise Server's address (its API under /api/v3).
   */
  issuer?: string | undefined;
  clientId: string;
  clientSecret: string;
}

/** The identity a provider vouched for, handed to {@link SignInWithIdentity}. */
export interface VerifiedIdentity {
  /** The provider's name as in the path (`google`). */
  provider: string;
  /** The issuer that signed the ID token (`https://github.com` for GitHub). */
  issuer: string;
  /** The provider's stable id of the user (`sub`; GitHub's numeric user id). */
  subject: string;
  email: string;
  /** Always true when the function is called: unverified addresses are refused before. */
  emailVerified: boolean;
  name: string | null;
}

/** What a sign-in answers: the accounts core's sign-in result. */
export interface SignInTokens {
  accessToken: string;
  refreshToken: string;
  /** Seconds the access token is valid. */
  expiresIn: number;
  user: Record<string, unknown>;
}

/** Finds or creates the account of a verified identity (linked by verified email) and signs it in. */
export type SignInWithIdentity = (identity: VerifiedIdentity) => Promise<SignInTokens>;

/** OpenID Connect sign-in (docs/oidc.md). */
export interface OidcOptions {
  /** Providers by their lower-case name, the one in `/v1/auth/oidc/<name>/…`. @default none */
  providers: Readonly<Record<string, OidcProviderOptions>>;
  /**
   * Where the callback sends the browser, the tokens (or the error) in the URL fragment. Without it
   * the callback answers JSON. @default none
   */
  redirectUrl: string | undefined;
  /** How long a started sign-in may take before its callback is refused. @default 600_000 (10 min) */
  stateTtlMs: number;
  /** Signs the verified identity in; wired to the accounts core by the app. @default none */
  signInWithIdentity: SignInWithIdentity | undefined;
}

export const DEFAULT_OIDC_OPTIONS: Readonly<OidcOptions> = Object.freeze({
  providers: Object.freeze({}),
  redirectUrl: undefined,
  stateTtlMs: 10 * 60 * 1000, // 10 min
  signInWithIdentity: undefined,
});

/** The provider whose known OAuth 2.0 endpoints stand in for discovery (GitHub's, or a GitHub Enterprise Server's). */
export const GITHUB = 'github';

const PROVIDER_NAME = /^[a-z][a-z0-9]{0,31}$/;

/**
 * Checks OpenID Connect options at start-up: names, issuer URLs, credentials and the redirect URL.
 * `variable` names the setting of a provider in errors (the environment variable's name).
 */
export function checkOidcOptions(options: OidcOptions, variable: (provider: string, part: string) => string = envName): void {
  for (const [name, provider] of Object.entries(options.providers)) {
    if (!PROVIDER_NAME.test(name)) throw new ConfigError(variable(name, 'ISSUER'), `a provider's name must be lower-case letters and digits (at most 32), starting with a letter, not "${name}"`);
    if (provider.clientId.trim() === '') throw new ConfigError(variable(name, 'CLIENT_ID'), 'must be set: the client id the provider gave this app');
    if (provider.clientSecret.trim() === '') throw new ConfigError(variable(name, 'CLIENT_SECRET'), 'must be set: the client secret the provider gave this app');
    if (provider.issuer === undefined) {
      if (name !== GITHUB) throw new ConfigError(variable(name, 'ISSUER'), 'must be set: the issuer URL of the OpenID Connect provider (only github has known endpoints)');
      continue;
    }
    const problem = issuerProblem(provider.issuer);
    if (problem !== undefined) throw new ConfigError(variable(name, 'ISSUER'), problem);
  }
  if (options.redirectUrl !== undefined) {
    const problem = redirectUrlProblem(options.redirectUrl);
    if (problem !== undefined) throw new ConfigError('RESTGRAPH_OIDC_REDIRECT_URL', problem);
  }
}

function envName(provider: string, part: string): string {
  return `RESTGRAPH_OIDC_${provider.toUpperCase()}_${part}`;
}

/** Whether `url` is on this machine: the only place plain http is accepted (local providers, tests). */
export function isLoopbackUrl(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
}

function issuerProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `must be a URL like https://accounts.google.com, not "${text}"`;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) return `must be an https URL (http only on a loopback address), not "${text}"`;
  if (url.search !== '' || url.hash !== '') return `must have no query or fragment, not "${text}"`;
  return undefined;
}

function redirectUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `must be an absolute URL like https://app.example.com/signed-in, not "${text}"`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `must be an http or https URL, not "${text}"`;
  if (url.hash !== '') return `must have no fragment (the tokens go there), not "${text}"`;
  return undefined;
}
