import * as client from 'openid-client';
import { NotFoundError, OidcProviderUnavailableError, OidcSignInFailedError, RestgraphError } from '../errors.js';
import { GITHUB, isLoopbackUrl, type OidcOptions, type OidcProviderOptions, type VerifiedIdentity } from './oidc-settings.js';
import { PendingSignInSeal, type PendingSignIn } from './oidc-state.js';
import { githubConfiguration, githubIdentity, GITHUB_SCOPE } from './github-identity.js';
import { verifiedIdentity } from './verified-identity.js';

/** A started sign-in: where to send the browser, and the sealed state for its cookie. */
export interface StartedSignIn {
  authorizationUrl: URL;
  sealedState: string;
  /** Seconds the state is good for (the cookie's Max-Age). */
  maxAgeSeconds: number;
}

/** Scopes asked of an OpenID Connect provider: the subject, the email address and whether it is verified, the name. */
const OIDC_SCOPE = 'openid email profile';

/** How long one request to a provider may take (discovery, token, user info). */
const PROVIDER_TIMEOUT_SECONDS = 10;

interface Provider {
  name: string;
  options: OidcProviderOptions;
  seal: PendingSignInSeal;
  /** The discovered configuration; dropped when discovery failed, so the next sign-in tries again. */
  configuration: Promise<client.Configuration> | undefined;
}

/**
 * The OpenID Connect authorization code flow with PKCE (S256), state and nonce (OpenID Connect
 * Core 1.0, section 3.1; RFC 7636; RFC 9700), through `openid-client`. It keeps nothing between
 * start and callback: what the callback needs travels sealed in a cookie (see PendingSignInSeal).
 * Its result is a verified identity; signing it in is the caller's.
 */
export class OidcSignIn {
  readonly #providers = new Map<string, Provider>();
  readonly #stateTtlMs: number;
  readonly #now: () => number;

  constructor(options: Pick<OidcOptions, 'providers' | 'stateTtlMs'>, now: () => number = Date.now) {
    for (const [name, provider] of Object.entries(options.providers)) {
      this.#providers.set(name, { name, options: provider, seal: new PendingSignInSeal(name, provider.clientSecret), configuration: undefined });
    }
    this.#stateTtlMs = options.stateTtlMs;
    this.#now = now;
  }

  get providerNames(): string[] {
    return [...this.#providers.keys()];
  }

  /** The provider's authorization URL for a new sign-in whose callback is `redirectUri`. */
  async start(name: string, redirectUri: string): Promise<StartedSignIn> {
    const provider = this.#provider(name);
    const configuration = await this.#configuration(provider);
    const pending: PendingSignIn = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
      redirectUri,
      expiresAt: this.#now() + this.#stateTtlMs,
    };
    const github = isGithub(provider);
    const parameters: Record<string, string> = {
      redirect_uri: redirectUri,
      scope: github ? GITHUB_SCOPE : OIDC_SCOPE,
      state: pending.state,
      code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
    };
    if (!github) parameters.nonce = pending.nonce;
    return {
      authorizationUrl: client.buildAuthorizationUrl(configuration, parameters),
      sealedState: provider.seal.seal(pending),
      maxAgeSeconds: Math.ceil(this.#stateTtlMs / 1000),
    };
  }

  /**
   * Completes a sign-in from the callback's query string and the sealed state of its cookie:
   * checks the state, exchanges the code with the PKCE verifier, validates the ID token (nonce
   * included) and requires a verified email address.
   * @throws NotFoundError, OidcSignInFailedError, OidcEmailNotVerifiedError, OidcProviderUnavailableError
   */
  async finish(name: string, sealedState: string | undefined, query: URLSearchParams): Promise<VerifiedIdentity> {
    const provider = this.#provider(name);
    const pending = this.#pending(provider, sealedState, query);
    const configuration = await this.#configuration(provider);
    const callbackUrl = new URL(pending.redirectUri);
    callbackUrl.search = query.toString();
    try {
      if (isGithub(provider)) {
        const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, { pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state });
        return await githubIdentity(configuration, tokens.access_token, provider.name, provider.options.issuer);
      }
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims();
      if (idToken === undefined) throw new OidcSignInFailedError(`${provider.name} sent no ID token.`);
      let claims: Record<string, unknown> = idToken;
      // Providers may keep the email claims for the UserInfo endpoint (OpenID Connect Core 1.0, 5.4).
      if (typeof idToken.email !== 'string' && configuration.serverMetadata().userinfo_endpoint !== undefined) {
        claims = { ...(await client.fetchUserInfo(configuration, tokens.access_token, idToken.sub)), ...idToken };
      }
      return verifiedIdentity(provider.name, idToken.iss, idToken.sub, claims);
    } catch (error) {
      throw providerError(provider.name, error);
    }
  }

  #provider(name: string): Provider {
    const provider = this.#providers.get(name);
    if (provider === undefined) throw new NotFoundError(`There is no sign-in provider named "${name.slice(0, 40)}".`);
    return provider;
  }

  #pending(provider: Provider, sealedState: string | undefined, query: URLSearchParams): PendingSignIn {
    const again = `start again at /v1/auth/oidc/${provider.name}/start`;
    const pending = sealedState === undefined ? undefined : provider.seal.open(sealedState);
    if (pending === undefined) throw new OidcSignInFailedError(`No sign-in with ${provider.name} is in progress in this browser (its state cookie, holding the PKCE verifier, is missing or not valid): ${again}.`);
    if (pending.expiresAt <= this.#now()) throw new OidcSignInFailedError(`The sign-in with ${provider.name} took too long: ${again}.`);
    if (query.get('state') !== pending.state) throw new OidcSignInFailedError(`The state of the callback is not the one of the sign-in started in this browser: ${again}.`);
    const providerError = query.get('error');
    if (providerError !== null) {
      const description = query.get('error_description');
      throw new OidcSignInFailedError(`${provider.name} answered ${providerError.slice(0, 100)}${description === null ? '' : `: ${description.slice(0, 300)}`}.`);
    }
    return pending;
  }

  #configuration(provider: Provider): Promise<client.Configuration> {
    provider.configuration ??= discover(provider).catch((error: unknown) => {
      provider.configuration = undefined;
      throw new OidcProviderUnavailableError(`The discovery document of ${provider.name} could not be read.`, { cause: error });
    });
    return provider.configuration;
  }
}

function isGithub(provider: Provider): boolean {
  return provider.name === GITHUB;
}

async function discover(provider: Provider): Promise<client.Configuration> {
  const { clientId, clientSecret, issuer } = provider.options;
  if (isGithub(provider)) return githubConfiguration(issuer, clientId, clientSecret);
  if (issuer === undefined) throw new Error(`${provider.name} has no issuer`);
  const url = new URL(issuer);
  const insecure = url.protocol === 'http:' && isLoopbackUrl(url);
  // Plain http only to a provider on this machine (a local one, the tests'): the library refuses it otherwise.
  return client.discovery(url, clientId, clientSecret, client.ClientSecretBasic(clientSecret), {
    timeout: PROVIDER_TIMEOUT_SECONDS,
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out; loopback only
    ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
  });
}

/** What the client is told of a failure: the provider's refusal (400) or its absence (502). */
function providerError(provider: string, error: unknown): RestgraphError {
  if (error instanceof RestgraphError) return error;
  if (error instanceof client.AuthorizationResponseError) return new OidcSignInFailedError(`${provider} answered ${error.error}.`, { cause: error });
  if (error instanceof client.ResponseBodyError) return new OidcSignInFailedError(`${provider} refused the authorization code (${error.error}): start again.`, { cause: error });
  const code = (error as { code?: unknown }).code;
  if (error instanceof TypeError || code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || code === 'OAUTH_RESPONSE_IS_NOT_JSON' || code === 'OAUTH_TIMEOUT') {
    return new OidcProviderUnavailableError(`${provider} could not be reached, or did not answer as an OAuth server does.`, { cause: error });
  }
  return new OidcSignInFailedError(`The answer of ${provider} did not pass the checks (${error instanceof Error ? error.message : 'unknown error'}).`, { cause: error });
}
