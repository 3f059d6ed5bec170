import { errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { InvalidTokenError } from '../../errors.js';
import type { Principal } from '../principal.js';
import { ACCOUNT_TOKEN_ALGORITHM, type SigningKeys } from './signing-keys.js';

/** The `iss` of every access token restgraph signs. */
export const ACCOUNT_TOKEN_ISSUER = 'restgraph';

/** What an access token says: its subject (the record's id), its session and the claim fields' values. */
export interface AccessTokenContent {
  subject: string;
  /** The refresh-token family of the sign-in it came from (`sid`). */
  session: string;
  claims: Readonly<Record<string, unknown>>;
}

/** Signs and verifies the access tokens of accounts: JWTs (RFC 7519) signed with EdDSA by the current key. */
export class AccessTokens {
  readonly #keys: SigningKeys;
  /** Lifetime, in seconds. */
  readonly lifetimeSeconds: number;

  constructor(keys: SigningKeys, lifetimeSeconds: number) {
    this.#keys = keys;
    this.lifetimeSeconds = lifetimeSeconds;
  }

  async sign(content: AccessTokenContent): Promise<string> {
    const { kid, privateKey } = await this.#keys.current();
    return new SignJWT({ ...content.claims, sid: content.session })
      .setProtectedHeader({ alg: ACCOUNT_TOKEN_ALGORITHM, kid, typ: 'at+jwt' })
      .setIssuer(ACCOUNT_TOKEN_ISSUER)
      .setSubject(content.subject)
      .setIssuedAt()
      .setExpirationTime(`${this.lifetimeSeconds}s`)
      .sign(privateKey);
  }

  /**
   * The principal of an access token: kind `jwt`, its `sub` the record's id, its claims the
   * payload, no scopes. @throws InvalidTokenError
   */
  async principal(token: string): Promise<Principal> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(
        token,
        async (header) => {
          const key = header.kid === undefined ? undefined : await this.#keys.verificationKey(header.kid);
          if (key === undefined) throw new InvalidTokenError('The token was signed by a key this server no longer accepts.');
          return key;
        },
        { issuer: ACCOUNT_TOKEN_ISSUER, algorithms: [ACCOUNT_TOKEN_ALGORITHM], requiredClaims: ['exp', 'sub', 'sid'], clockTolerance: 5 },
      ));
    } catch (error) {
      if (error instanceof InvalidTokenError) throw error;
      throw new InvalidTokenError(error instanceof joseErrors.JWTExpired ? 'The token has expired.' : 'The token could not be verified.');
    }
    const subject = payload.sub ?? '';
    return { kind: 'jwt', account: true, subject, scopes: NO_SCOPES, claims: Object.freeze(payload), credentialId: `account:${subject}` };
  }
}

const NO_SCOPES: ReadonlySet<string> = Object.freeze(new Set<string>());
