import { createPublicKey, type KeyObject } from 'node:crypto';
import { ConfigError } from '../errors.js';

export interface JwtOptions {
  /** Shared secret for HS256/384/512 (at least 32 characters). */
  secret?: string;
  /** PEM public keys (RSA, EC, Ed25519) for asymmetric algorithms. */
  publicKeys?: readonly string[];
  /** An OIDC issuer's JWKS URL; keys are fetched and cached, and re-fetched when a token names an unknown key. */
  jwksUrl?: string;
  /** Required `iss`. */
  issuer?: string;
  /**
   * Required `aud` (one of). With public keys or a JWKS it must be set, unless `anyAudience` says
   * deliberately that any will do: an identity provider signs tokens for every application it
   * serves (ID tokens included) with the same keys.
   */
  audience?: string | readonly string[];
  /** Accept tokens whatever their `aud` (RESTGRAPH_JWT_ANY_AUDIENCE=true). @default false */
  anyAudience?: boolean;
  /** Claim holding scopes: a space-separated string or an array. @default 'scope' */
  scopesClaim?: string;
  /** Leeway for exp/nbf. @default 5 (s) */
  clockToleranceSeconds?: number;
  /** Shortest wait between two JWKS fetches triggered by unknown keys. @default 30_000 (ms) */
  jwksCooldownMs?: number;
}

/** The credential settings of a server, checked by {@link checkCredentialSettings}. */
export interface CredentialSettings {
  /** A static credential granting `admin` (RESTGRAPH_ADMIN_TOKEN). */
  adminToken?: string | undefined;
  jwt?: JwtOptions | undefined;
}

/**
 * Checks a server's credential settings, as the start-up does before it takes the port or creates
 * anything (so a mistake is told first, and alone): the admin token's and JWT secret's lengths,
 * the public keys, the JWKS URL, and an audience to require with an identity provider's keys.
 * Returns the public keys and the JWKS URL, parsed. @throws ConfigError naming the setting
 */
export function checkCredentialSettings(settings: CredentialSettings): { publicKeys: KeyObject[]; jwksUrl: URL | undefined } {
  if (settings.adminToken !== undefined && settings.adminToken.length < 16) throw new ConfigError('RESTGRAPH_ADMIN_TOKEN', 'must be at least 16 characters long');
  const jwt = settings.jwt;
  if (jwt?.secret !== undefined && jwt.secret.length < 32) throw new ConfigError('RESTGRAPH_JWT_SECRET', 'must be at least 32 characters (256 bits) for HS256');
  const publicKeys = (jwt?.publicKeys ?? []).map((pem) => {
    try {
      return createPublicKey(pem);
    } catch (error) {
      throw new ConfigError('RESTGRAPH_JWT_PUBLIC_KEY', `not a PEM public key: ${(error as Error).message}`);
    }
  });
  let jwksUrl: URL | undefined;
  if (jwt?.jwksUrl !== undefined) {
    try {
      jwksUrl = new URL(jwt.jwksUrl);
    } catch {
      throw new ConfigError('RESTGRAPH_JWKS_URL', `"${jwt.jwksUrl}" is not a URL`);
    }
  }
  requireAudience(jwt);
  return { publicKeys, jwksUrl };
}

/**
 * Refuses, at start-up, to verify an identity provider's tokens (public keys, JWKS) without an
 * audience to require, unless any audience is accepted deliberately. (A secret is this server's
 * own: tokens signed with it were made for it, so it needs no audience.)
 */
function requireAudience(jwt: JwtOptions | undefined): void {
  if (jwt === undefined) return;
  const audiences = jwt.audience === undefined ? [] : [jwt.audience].flat().filter((a) => a !== '');
  const providerKeys = (jwt.publicKeys ?? []).length > 0 || jwt.jwksUrl !== undefined;
  if (jwt.anyAudience === true && audiences.length > 0) {
    throw new ConfigError('RESTGRAPH_JWT_ANY_AUDIENCE', 'is true while RESTGRAPH_JWT_AUDIENCE names audiences to require; set one or the other');
  }
  if (providerKeys && audiences.length === 0 && jwt.anyAudience !== true) {
    throw new ConfigError(
      'RESTGRAPH_JWT_AUDIENCE',
      'must be set with RESTGRAPH_JWKS_URL or RESTGRAPH_JWT_PUBLIC_KEY: without it, a token the same identity provider issued for any other ' +
        "application (an ID token included) would be accepted here. Set it to this API's audience (the aud its access tokens carry), " +
        'or set RESTGRAPH_JWT_ANY_AUDIENCE=true to accept every audience deliberately',
    );
  }
}
