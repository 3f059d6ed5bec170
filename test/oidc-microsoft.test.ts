import { describe, expect, it } from 'vitest';
import { verifiedIdentity } from '../src/auth/verified-identity.js';
import { OidcEmailNotVerifiedError } from '../src/errors.js';

/**
 * Microsoft Entra ID sends no `email_verified`: its optional claim `xms_edov` (email domain owner
 * verified) stands for it, from Entra's issuers only (docs/oidc.md#microsoft-entra-id). The ID
 * token's issuer cannot be Entra's in a local test (openid-client checks it against the issuer it
 * discovered), so this checks the rule on the claims the callback hands over; the end-to-end
 * refusal of xms_edov from another issuer is in oidc-sign-in.test.ts (dora).
 */

const ENTRA = 'https://login.microsoftonline.com/0f1e2d3c-aaaa-bbbb-cccc-0123456789ab/v2.0';

describe('Microsoft Entra ID', () => {
  it('accepts an email with xms_edov true (a boolean, or the string Entra may send) from an Entra issuer', () => {
    for (const xms_edov of [true, 'true']) {
      expect(verifiedIdentity('microsoft', ENTRA, 'sub-1', { email: 'ann@contoso.com', xms_edov, name: 'Ann' })).toEqual({
        provider: 'microsoft',
        issuer: ENTRA,
        subject: 'sub-1',
        email: 'ann@contoso.com',
        emailVerified: true,
        name: 'Ann',
      });
    }
  });

  it('refuses an Entra email without xms_edov, or with it false, saying how to turn the claim on', () => {
    for (const claims of [{ email: 'ann@contoso.com' }, { email: 'ann@contoso.com', xms_edov: false }, { email: 'ann@contoso.com', xms_edov: 'false' }]) {
      expect(() => verifiedIdentity('microsoft', ENTRA, 'sub-1', claims)).toThrow(OidcEmailNotVerifiedError);
      expect(() => verifiedIdentity('microsoft', ENTRA, 'sub-1', claims)).toThrow(/optional claim xms_edov/);
    }
  });

  it('reads xms_edov from Entra issuers only: another issuer, or Entra over http, or a look-alike host, is not Entra', () => {
    for (const issuer of ['https://accounts.example.com', 'http://login.microsoftonline.com/tenant/v2.0', 'https://login.microsoftonline.com.example.com/tenant/v2.0', 'not a url']) {
      expect(() => verifiedIdentity('other', issuer, 'sub-1', { email: 'ann@contoso.com', xms_edov: true }), issuer).toThrow(OidcEmailNotVerifiedError);
    }
  });

  it('email_verified still counts, from any issuer', () => {
    expect(verifiedIdentity('microsoft', ENTRA, 's', { email: 'ann@contoso.com', email_verified: true }).emailVerified).toBe(true);
    expect(verifiedIdentity('google', 'https://accounts.google.com', 's', { email: 'ann@gmail.com', email_verified: 'true' }).emailVerified).toBe(true);
  });
});
