import { describe, expect, it } from 'vitest';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { resolveOptions } from '../src/app/app-options.js';
import { ConfigError } from '../src/errors.js';
import { buildApp } from '../src/app/build-app.js';

/** Settings of OpenID Connect sign-in: read from the environment, and every mistake a ConfigError naming its variable at start-up. */

const GOOGLE = {
  RESTGRAPH_OIDC_GOOGLE_ISSUER: 'https://accounts.google.com',
  RESTGRAPH_OIDC_GOOGLE_CLIENT_ID: 'client-id.apps.googleusercontent.com',
  RESTGRAPH_OIDC_GOOGLE_CLIENT_SECRET: 'GOCSPX-secret',
};

/** The options of `env`, resolved as at start-up (resolveOptions checks them). */
function resolved(env: Record<string, string>) {
  return resolveOptions(optionsFromEnv(env));
}

function configError(env: Record<string, string>): ConfigError {
  try {
    resolved(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(env)}`);
}

describe('OpenID Connect settings', () => {
  it('reads providers (upper case in the variables, lower case as configured) and the redirect URL', () => {
    const options = resolved({
      ...GOOGLE,
      RESTGRAPH_OIDC_MICROSOFT_ISSUER: 'https://login.microsoftonline.com/0f1e2d3c-aaaa-bbbb-cccc-0123456789ab/v2.0',
      RESTGRAPH_OIDC_MICROSOFT_CLIENT_ID: 'ms-client',
      RESTGRAPH_OIDC_MICROSOFT_CLIENT_SECRET: 'ms-secret',
      RESTGRAPH_OIDC_GITHUB_CLIENT_ID: 'gh-client',
      RESTGRAPH_OIDC_GITHUB_CLIENT_SECRET: 'gh-secret',
      RESTGRAPH_OIDC_REDIRECT_URL: 'https://app.example.com/signed-in',
    });
    expect(options.oidc.providers).toEqual({
      google: { issuer: 'https://accounts.google.com', clientId: 'client-id.apps.googleusercontent.com', clientSecret: 'GOCSPX-secret' },
      microsoft: { issuer: 'https://login.microsoftonline.com/0f1e2d3c-aaaa-bbbb-cccc-0123456789ab/v2.0', clientId: 'ms-client', clientSecret: 'ms-secret' },
      github: { issuer: undefined, clientId: 'gh-client', clientSecret: 'gh-secret' },
    });
    expect(options.oidc.redirectUrl).toBe('https://app.example.com/signed-in');
    expect(options.oidc.stateTtlMs).toBe(600_000);
    expect(resolved({}).oidc.providers).toEqual({});
    // A local provider may be plain http.
    expect(resolved({ ...GOOGLE, RESTGRAPH_OIDC_GOOGLE_ISSUER: 'http://127.0.0.1:8080' }).oidc.providers.google?.issuer).toBe('http://127.0.0.1:8080');
  });

  it('names the variable at fault', () => {
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ ...GOOGLE, RESTGRAPH_OIDC_GOOGLE_CLIENT_SECRET: '' }, 'RESTGRAPH_OIDC_GOOGLE_CLIENT_SECRET', /must be set/],
      [{ RESTGRAPH_OIDC_GOOGLE_ISSUER: 'https://accounts.google.com', RESTGRAPH_OIDC_GOOGLE_CLIENT_SECRET: 's' }, 'RESTGRAPH_OIDC_GOOGLE_CLIENT_ID', /must be set/],
      [{ ...GOOGLE, RESTGRAPH_OIDC_GOOGLE_ISSUER: 'http://accounts.google.com' }, 'RESTGRAPH_OIDC_GOOGLE_ISSUER', /https/],
      [{ ...GOOGLE, RESTGRAPH_OIDC_GOOGLE_ISSUER: 'accounts.google.com' }, 'RESTGRAPH_OIDC_GOOGLE_ISSUER', /must be a URL/],
      [{ RESTGRAPH_OIDC_OKTA_CLIENT_ID: 'c', RESTGRAPH_OIDC_OKTA_CLIENT_SECRET: 's' }, 'RESTGRAPH_OIDC_OKTA_ISSUER', /issuer URL/],
      [{ ...GOOGLE, RESTGRAPH_OIDC_GOOGLE_CLIENTID: 'typo' }, 'RESTGRAPH_OIDC_GOOGLE_CLIENTID', /is not a setting/],
      [{ ...GOOGLE, RESTGRAPH_OIDC_REDIRECT_URL: 'https://app.example.com/#done' }, 'RESTGRAPH_OIDC_REDIRECT_URL', /fragment/],
      [{ ...GOOGLE, RESTGRAPH_OIDC_REDIRECT_URL: '/signed-in' }, 'RESTGRAPH_OIDC_REDIRECT_URL', /absolute URL/],
      [{ RESTGRAPH_OIDC_REDIRECT_URL: 'https://app.example.com/' }, 'RESTGRAPH_OIDC_REDIRECT_URL', /no provider/],
    ];
    for (const [env, option, message] of cases) {
      const error = configError(env);
      expect(error.option, JSON.stringify(env)).toBe(option);
      expect(error.message).toMatch(message);
    }
  });

  it('a server with providers but nothing to sign identities in to does not start', async () => {
    // Refused before the database is opened.
    await expect(buildApp({ databaseUrl: 'sqlite::memory:', oidc: { providers: { google: { issuer: 'https://accounts.google.com', clientId: 'c', clientSecret: 's' } } } })).rejects.toThrow(/RESTGRAPH_OIDC_GOOGLE_ISSUER.*needs accounts/);
  });
});
