import { OidcEmailNotVerifiedError } from '../errors.js';
import type { VerifiedIdentity } from './oidc-settings.js';

/**
 * The host of Microsoft Entra ID's issuers (`https://login.microsoftonline.com/<tenant id>/v2.0`):
 * only ID tokens of these issuers are read for `xms_edov`.
 */
export const MICROSOFT_ISSUER_HOST = 'login.microsoftonline.com';

/** The identity of verified claims; refuses a missing or unverified email address. */
export function verifiedIdentity(provider: string, issuer: string, subject: string, claims: Record<string, unknown>): VerifiedIdentity {
  const email = claims.email;
  const microsoft = isMicrosoftIssuer(issuer);
  const verified = isTrue(claims.email_verified) || (microsoft && isTrue(claims.xms_edov));
  if (typeof email !== 'string' || email === '') throw new OidcEmailNotVerifiedError(`${provider} gave no email address: an account is linked by its verified email address.`);
  if (!verified && microsoft) {
    throw new OidcEmailNotVerifiedError(
      `${provider} (Microsoft Entra ID) did not say that ${email} is verified: the app's registration must send the optional claim xms_edov (docs/oidc.md#microsoft-entra-id), and the address's domain must be verified by its tenant.`,
    );
  }
  if (!verified) throw new OidcEmailNotVerifiedError(`${provider} has not verified ${email}: verify it there, then sign in again.`);
  const name = typeof claims.name === 'string' && claims.name !== '' ? claims.name : null;
  return { provider, issuer, subject, email, emailVerified: true, name };
}

/**
 * Microsoft Entra ID sends no `email_verified`. Its optional claim `xms_edov` (email domain owner
 * verified) is true when the tenant that owns the address's domain has verified it: the address
 * cannot be set to someone else's domain. It is read from Entra's issuers only (any other issuer
 * could send a claim of that name).
 */
function isMicrosoftIssuer(issuer: string): boolean {
  try {
    const url = new URL(issuer);
    return url.protocol === 'https:' && url.hostname === MICROSOFT_ISSUER_HOST;
  } catch {
    return false;
  }
}

/** Some providers send booleans as strings. */
function isTrue(value: unknown): boolean {
  return value === true || value === 'true';
}
