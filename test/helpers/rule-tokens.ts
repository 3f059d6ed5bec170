import { SignJWT, type JWTPayload } from 'jose';

/** The HS256 secret of the access-rules tests' apps (`jwt: { secret: RULES_JWT_SECRET }`), which {@link bearerJwt} signs with. */
export const RULES_JWT_SECRET = 'access-rules-secret-0123456789-abcdef';

const key = new TextEncoder().encode(RULES_JWT_SECRET);

/** An Authorization header value, `Bearer <JWT>`: `claims`, issued now, valid for an hour, signed with {@link RULES_JWT_SECRET}. */
export async function bearerJwt(claims: JWTPayload): Promise<string> {
  return `Bearer ${await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(key)}`;
}
