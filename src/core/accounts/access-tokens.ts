import { errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { InvalidTokenError } from '../../errors.js';
import { ADMIN_SCOPE, type Principal } from '../principal.js';
import type { AccountStates } from './account-states.js';
import { ACCOUNT_TOKEN_ALGORITHM, type SigningKeys } from './signing-keys.js';

/** The `iss` of every access token restgraph signs. */
export const ACCOUNT_TOKEN_ISSUER = 'restgraph';

/** What an access token says: its subject (the record's id), its session and the claim fields' values. */
export interface AccessTokenContent {
  subject: string;
  /** The refresh-token family of the sign-in it came from (`sid`). */
  session: string;
  claims: Readonly<Record<string, unknown>>;
  /** The account is an admin (`accounts.admin` held at sign-in or refresh): the token carries `scope: admin`. */
  admin?: boolean;
}

/** Signs and verifies the access tokens of accounts: JWTs (RFC 7519) signed with EdDSA by the current key. */
export class AccessTokens {
  readonly #keys: SigningKeys;
  /** Lifetime, in seconds. */
  readonly lifetimeSeconds: number;

  readonly #states: AccountStates | undefined;

  /** @param states when given, a verified token is also refused when its account is disabled or its sessions ended after it was issued. */
  constructor(keys: SigningKeys, lifetimeSeconds: number, states?: AccountStates) {
    this.#keys = keys;
    this.lifetimeSeconds = lifetimeSeconds;
    this.#states = states;
  }

  async sign(content: AccessTokenContent): Promise<string> {
    const { kid, privateKey } = await this.#keys.current();
    const now = Date.now();
    // `iat_ms`, the issue time in milliseconds: a revocation refuses the tokens issued before it,
    // never one issued just after in the same second. (No field name has an underscore, so no
    // claim field can take it; `iat` stays whole seconds, as every JWT library reads it.)
    return new SignJWT({ ...content.claims, sid: content.session, iat_ms: now, ...(content.admin === true ? { scope: ADMIN_SCOPE } : {}) })
      .setProtectedHeader({ alg: ACCOUNT_TOKEN_ALGORITHM, kid, typ: 'at+jwt' })
      .setIssuer(ACCOUNT_TOKEN_ISSUER)
      .setSubject(content.subject)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(now / 1000) + this.lifetimeSeconds)
      .sign(privateKey);
  }

  /**
   * The principal of an access token: kind `jwt`, its `sub` the record's id, its claims the
   * payload, scope `admin` when the token says so (only restgraph signs these), else none.
   * Refused too when its account is disabled or was signed out after the token was issued.
   * @throws InvalidTokenError
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
    if (this.#states !== undefined) await this.#states.assertTokenCurrent(subject, issuedAtMs(payload));
    const scopes = payload.scope === ADMIN_SCOPE ? ADMIN_SCOPES : NO_SCOPES;
    return { kind: 'jwt', account: true, subject, scopes, claims: Object.freeze(payload), credentialId: `account:${subject}` };
  }
}

const NO_SCOPES: ReadonlySet<string> = Object.freeze(new Set<string>());
const ADMIN_SCOPES: ReadonlySet<string> = Object.freeze(new Set<string>([ADMIN_SCOPE]));

/** When a token was issued, in milliseconds: `iat_ms`, or `iat` for a token signed before it existed. */
function issuedAtMs(payload: JWTPayload): number {
  if (typeof payload.iat_ms === 'number') return payload.iat_ms;
  return typeof payload.iat === 'number' ? payload.iat * 1000 : 0;
}
