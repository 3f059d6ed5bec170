import { OidcEmailNotVerifiedError } from '../errors.js';
import type { VerifiedIdentity } from './oidc-settings.js';

/** The identity of verified claims; refuses a missing or unverified email address. */
export function verifiedIdentity(provider: string, issuer: string, subject: string, claims: Record<string, unknown>): VerifiedIdentity {
  const email = claims.email;
  // Some providers send the boolean as a string.
  const verified = claims.email_verified === true || claims.email_verified === 'true';
  if (typeof email !== 'string' || email === '') throw new OidcEmailNotVerifiedError(`${provider} gave no email address: an account is linked by its verified email address.`);
  if (!verified) throw new OidcEmailNotVerifiedError(`${provider} has not verified ${email}: verify it there, then sign in again.`);
  const name = typeof claims.name === 'string' && claims.name !== '' ? claims.name : null;
  return { provider, issuer, subject, email, emailVerified: true, name };
}
