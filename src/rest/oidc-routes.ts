import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OidcSignIn } from '../auth/oidc-sign-in.js';
import type { SignInTokens, SignInWithIdentity } from '../auth/oidc-settings.js';
import { NotFoundError, RestgraphError } from '../errors.js';
import { JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { registerPath } from '../http/path-routes.js';

export interface OidcRouteOptions {
  signIn: OidcSignIn;
  /** Signs the verified identity in (the accounts core). */
  signInWithIdentity: SignInWithIdentity;
  /** Where the callback sends the browser with the tokens (or the error) in the fragment; JSON answers without. */
  redirectUrl: string | undefined;
}

/** The cookie that carries a started sign-in's sealed state to its callback (and nowhere else: its Path). */
export const OIDC_STATE_COOKIE = 'restgraph_oidc_state';

/**
 * `GET /v1/auth/oidc/<provider>/start` sends the browser to the provider; `…/callback` is where the
 * provider sends it back. Thin: the flow is OidcSignIn's, the sign-in the injected function's.
 */
export function registerOidcRoutes(app: FastifyInstance, options: OidcRouteOptions): void {
  registerPath(app, '/v1/auth/oidc/:provider/start', {
    GET: async (request, reply) => {
      const provider = providerParam(request);
      const callbackUrl = new URL(callbackPath(provider), `${request.protocol}://${request.host}`);
      const started = await options.signIn.start(provider, callbackUrl.href);
      const secure = callbackUrl.protocol === 'https:' ? '; Secure' : '';
      return reply
        .code(302)
        .header('location', started.authorizationUrl.href)
        .header('cache-control', 'no-store')
        .header('set-cookie', `${OIDC_STATE_COOKIE}=${started.sealedState}; Path=${callbackPath(provider)}; Max-Age=${started.maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`)
        .send();
    },
  });
  registerPath(app, '/v1/auth/oidc/:provider/callback', {
    GET: async (request, reply) => {
      const provider = providerParam(request);
      const query = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '');
      // One use only: whatever happens, the browser forgets the state.
      reply.header('cache-control', 'no-store').header('set-cookie', `${OIDC_STATE_COOKIE}=; Path=${callbackPath(provider)}; Max-Age=0; HttpOnly; SameSite=Lax`);
      let tokens: SignInTokens;
      try {
        const identity = await options.signIn.finish(provider, cookieValue(request.headers.cookie, OIDC_STATE_COOKIE), query);
        tokens = await options.signInWithIdentity(identity);
      } catch (error) {
        if (options.redirectUrl === undefined || !(error instanceof RestgraphError) || error instanceof NotFoundError) throw error;
        request.log.info({ err: error }, 'OpenID Connect sign-in refused');
        return reply.code(302).header('location', withFragment(options.redirectUrl, { error: error.code, error_description: error.message })).send();
      }
      return answerTokens(reply, tokens, options.redirectUrl);
    },
  });
}

function providerParam(request: FastifyRequest): string {
  return (request.params as { provider: string }).provider;
}

function callbackPath(provider: string): string {
  return `/v1/auth/oidc/${encodeURIComponent(provider)}/callback`;
}

function answerTokens(reply: FastifyReply, tokens: SignInTokens, redirectUrl: string | undefined): FastifyReply {
  if (redirectUrl === undefined) return reply.code(200).type(JSON_CONTENT_TYPE).send(JSON.stringify(tokens));
  const fragment = { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, expiresIn: String(tokens.expiresIn), tokenType: 'Bearer' };
  return reply.code(302).header('location', withFragment(redirectUrl, fragment)).send();
}

/** `url` with `values` form-encoded in its fragment: the fragment never reaches a server or a Referer. */
function withFragment(url: string, values: Record<string, string>): string {
  return `${url}#${new URLSearchParams(values).toString()}`;
}

/** The value of one cookie of a Cookie header (RFC 6265, 5.4), undefined when absent. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals !== -1 && pair.slice(0, equals).trim() === name) {
      const value = pair.slice(equals + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}
