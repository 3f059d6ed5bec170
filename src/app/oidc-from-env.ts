import type { OidcOptions, OidcProviderOptions } from '../auth/oidc-settings.js';
import { ConfigError } from '../errors.js';

type Env = Record<string, string | undefined>;

const PROVIDER_VARIABLE = /^RESTGRAPH_OIDC_([A-Z][A-Z0-9]*)_(ISSUER|CLIENT_ID|CLIENT_SECRET)$/;
const REDIRECT_URL = 'RESTGRAPH_OIDC_REDIRECT_URL';

/**
 * OpenID Connect providers from `RESTGRAPH_OIDC_<PROVIDER>_ISSUER`, `_CLIENT_ID` and
 * `_CLIENT_SECRET` (the provider's name upper case there, lower case in the path), and
 * `RESTGRAPH_OIDC_REDIRECT_URL`. Any other `RESTGRAPH_OIDC_…` variable is a mistake, said at
 * start-up. The values themselves are checked with the other options (checkOidcOptions).
 */
export function oidcFromEnv(env: Env): Partial<OidcOptions> | undefined {
  const parts = new Map<string, Partial<Record<'ISSUER' | 'CLIENT_ID' | 'CLIENT_SECRET', string>>>();
  let redirectUrl: string | undefined;
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('RESTGRAPH_OIDC_') || value === undefined || value.trim() === '') continue;
    if (name === REDIRECT_URL) {
      redirectUrl = value.trim();
      continue;
    }
    const match = PROVIDER_VARIABLE.exec(name);
    if (match === null) {
      throw new ConfigError(name, 'is not a setting: a provider is configured by RESTGRAPH_OIDC_<PROVIDER>_ISSUER, _CLIENT_ID and _CLIENT_SECRET (letters and digits in <PROVIDER>), plus RESTGRAPH_OIDC_REDIRECT_URL');
    }
    const [, provider = '', part = 'ISSUER'] = match;
    const entry = parts.get(provider) ?? {};
    entry[part as 'ISSUER' | 'CLIENT_ID' | 'CLIENT_SECRET'] = value.trim();
    parts.set(provider, entry);
  }
  if (parts.size === 0 && redirectUrl === undefined) return undefined;
  if (parts.size === 0) throw new ConfigError(REDIRECT_URL, 'is set but no provider is: set RESTGRAPH_OIDC_<PROVIDER>_ISSUER, _CLIENT_ID and _CLIENT_SECRET');
  const providers: Record<string, OidcProviderOptions> = {};
  for (const [provider, entry] of parts) {
    const variable = (part: string) => `RESTGRAPH_OIDC_${provider}_${part}`;
    if (entry.CLIENT_ID === undefined) throw new ConfigError(variable('CLIENT_ID'), `must be set with the other RESTGRAPH_OIDC_${provider}_ settings`);
    if (entry.CLIENT_SECRET === undefined) throw new ConfigError(variable('CLIENT_SECRET'), `must be set with the other RESTGRAPH_OIDC_${provider}_ settings`);
    providers[provider.toLowerCase()] = { issuer: entry.ISSUER, clientId: entry.CLIENT_ID, clientSecret: entry.CLIENT_SECRET };
  }
  return { providers, redirectUrl };
}
