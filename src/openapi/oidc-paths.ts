import type { AccessRule } from '../schema/schema-model.js';
import { operation } from './operation-builder.js';
import type { HeaderObject, ParameterObject, PathItemObject, ResponseObject } from './openapi-types.js';

const PUBLIC: AccessRule = { kind: 'public' };
const NO_STORE: HeaderObject = { description: '`no-store`.', required: true, schema: { type: 'string', enum: ['no-store'] } };

function redirect(description: string, setCookie: string): ResponseObject {
  return {
    description,
    headers: {
      Location: { description: 'Where the browser goes next.', required: true, schema: { type: 'string', format: 'uri' } },
      'Set-Cookie': { description: setCookie, required: true, schema: { type: 'string' } },
      'Cache-Control': NO_STORE,
    },
  };
}

/**
 * `/v1/auth/oidc/{provider}/start` and `/callback`: OpenID Connect sign-in (src/rest/oidc-routes.ts,
 * docs/oidc.md), documented when providers are configured.
 */
export function oidcPaths(providers: readonly string[]): Record<string, PathItemObject> {
  if (providers.length === 0) return {};
  const tags = ['auth'];
  const parameters: ParameterObject[] = [
    { name: 'provider', in: 'path', required: true, description: 'The provider, as configured (`RESTGRAPH_OIDC_<PROVIDER>_…`, lower case here). Another name: 404.', schema: { type: 'string', examples: [...providers] } },
  ];
  const tokens: ResponseObject = {
    description: 'Signed in (no RESTGRAPH_OIDC_REDIRECT_URL): the tokens.',
    headers: { 'Cache-Control': NO_STORE },
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['accessToken', 'refreshToken', 'expiresIn', 'user'],
          properties: { accessToken: { type: 'string' }, refreshToken: { type: 'string' }, expiresIn: { type: 'integer', description: 'Seconds the access token is valid.' }, user: { type: 'object' } },
        },
      },
    },
  };
  return {
    '/v1/auth/oidc/{provider}/start': {
      parameters,
      get: operation(
        {
          operationId: 'startOidcSignIn',
          summary: 'Sign in with an OpenID Connect provider',
          description: 'Sends the browser to the provider (authorization code flow with PKCE S256, state and nonce). The state travels in a sealed, HttpOnly, SameSite=Lax cookie scoped to the callback path, valid 10 minutes.',
          tags,
        },
        [PUBLIC],
        { 302: redirect("To the provider's authorization endpoint.", 'The sealed state of this sign-in (restgraph_oidc_state), for the callback only.') },
        { 404: ['not-found'], 502: ['oidc-provider-unavailable'] },
      ),
    },
    '/v1/auth/oidc/{provider}/callback': {
      parameters,
      get: operation(
        {
          operationId: 'finishOidcSignIn',
          summary: 'Where the provider sends the browser back',
          description:
            'Checks the state against the cookie, exchanges the code with the PKCE verifier, validates the ID token (nonce included), requires a verified email address and signs the account of that address in. ' +
            'With RESTGRAPH_OIDC_REDIRECT_URL: a redirect there with `accessToken`, `refreshToken`, `expiresIn` and `tokenType` (or `error` and `error_description`) in the fragment; without: the tokens as JSON, or a problem.',
          tags,
        },
        [PUBLIC],
        { 200: tokens, 302: redirect('To RESTGRAPH_OIDC_REDIRECT_URL, the tokens or the error in the fragment.', 'Clears the state cookie.') },
        { 400: ['oidc-sign-in-failed'], 403: ['oidc-email-not-verified'], 404: ['not-found'], 502: ['oidc-provider-unavailable'] },
      ),
    },
  };
}
