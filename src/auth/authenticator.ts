import { hash, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { InvalidTokenError } from '../errors.js';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import { API_KEY_PREFIX, hashApiKey, type ApiKeyStore } from '../store/api-key-store.js';
import { checkCredentialSettings, type JwtOptions } from './credential-settings.js';
import { isPassingTrouble } from './credential-recheck.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

export type { JwtOptions };

export interface AuthenticatorOptions {
  /** A static credential granting `admin` (RESTGRAPH_ADMIN_TOKEN). */
  adminToken?: string;
  jwt?: JwtOptions;
  /**
   * How long a verified API key is trusted without asking the database again: the bound on how
   * late a revocation takes effect. @default 10_000 (10 s)
   */
  apiKeyCacheMs?: number;
  /** Called when recording a key's last use fails (it never fails a request). */
  onBackgroundError?: (error: unknown) => void;
  /** Verifies the access tokens restgraph signs for accounts (those whose `kid` starts `rg-`): src/core/accounts. */
  accountTokens?: AccountTokenVerifier;
}

/** What the authenticator needs of account tokens: their principal, or an InvalidTokenError. */
export interface AccountTokenVerifier {
  principal(token: string): Promise<Principal>;
}

/** The `kid` prefix of the keys restgraph signs account tokens with. */
const ACCOUNT_KEY_ID_PREFIX = 'rg-';

interface CachedKey {
  principal: Principal;
  /** When the cache entry must be re-checked (ms). */
  checkAfter: number;
  /** When the key itself expires (ms), or Infinity. */
  expiresAt: number;
  id: number;
  /** What the entry costs the cache besides its header (estimate): overhead, scopes and claims. */
  bytes: number;
}

const HS_ALGORITHMS = ['HS256', 'HS384', 'HS512'];
const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const LAST_USED_RESOLUTION_MS = 60_000; // 1 min
/**
 * Bytes the verified-key cache may hold. It is keyed by the whole Authorization header, which a
 * holder of one valid key can vary at will (spaces after the token, up to the header limit): the
 * bound is on bytes, not entries, so such a client only evicts the least recently used entries.
 */
const KEY_CACHE_BYTES = 4 * 1024 * 1024; // 4 MiB
/** What an entry costs besides its header's characters, its scopes and its claims: the entry and its principal (estimate). */
const KEY_ENTRY_OVERHEAD_BYTES = 512;
/** Bytes of the last-use marks (one per key id, a fixed size each). */
const LAST_TOUCHED_BYTES = 1024 * 1024; // 1 MiB
const LAST_TOUCHED_ENTRY_BYTES = 64;

/**
 * Turns a request's `Authorization` header into a {@link Principal}. Stateless: every request is
 * judged on its own credential: the admin token, an API key (`rg_…`), or a JWT.
 */
export class Authenticator {
  readonly #apiKeys: ApiKeyStore;
  readonly #adminToken: string | undefined;
  readonly #jwt: JwtOptions | undefined;
  readonly #secret: Uint8Array | undefined;
  readonly #publicKeys: KeyObject[];
  readonly #jwks: JWTVerifyGetKey | undefined;
  readonly #cacheMs: number;
  readonly #cache = new LRUCache<string, CachedKey>({
    maxSize: KEY_CACHE_BYTES,
    sizeCalculation: (entry, header) => header.length + entry.bytes,
  });
  readonly #lastTouched = new LRUCache<number, number>({ maxSize: LAST_TOUCHED_BYTES, sizeCalculation: () => LAST_TOUCHED_ENTRY_BYTES });
  readonly #onBackgroundError: (error: unknown) => void;
  readonly #accountTokens: AccountTokenVerifier | undefined;
  readonly #verifiedAccountTokens: VerifiedTokenCache;

  constructor(apiKeys: ApiKeyStore, options: AuthenticatorOptions = {}) {
    this.#apiKeys = apiKeys;
    const checked = checkCredentialSettings(options);
    this.#adminToken = options.adminToken;
    this.#jwt = options.jwt;
    const jwt = options.jwt;
    this.#secret = jwt?.secret === undefined ? undefined : new TextEncoder().encode(jwt.secret);
    this.#publicKeys = checked.publicKeys;
    if (checked.jwksUrl !== undefined) {
      this.#jwks = createRemoteJWKSet(checked.jwksUrl, { cacheMaxAge: 10 * 60_000, cooldownDuration: jwt?.jwksCooldownMs ?? 30_000, timeoutDuration: 5_000 });
    }
    this.#cacheMs = options.apiKeyCacheMs ?? 10_000;
    this.#onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.#accountTokens = options.accountTokens;
    this.#verifiedAccountTokens = new VerifiedTokenCache(this.#cacheMs);
  }

  /** Whether any JWT verification is configured. */
  get acceptsJwts(): boolean {
    return this.#secret !== undefined || this.#publicKeys.length > 0 || this.#jwks !== undefined;
  }

  /**
   * The principal a header stands for: anonymous when absent.
   * @throws InvalidTokenError when a credential is present but not valid.
   */
  async authenticate(header: string | undefined): Promise<Principal> {
    if (header === undefined) return ANONYMOUS;
    return this.#fromMemory(header) ?? this.#verify(bearerToken(header), header);
  }

  /**
   * The same answer when it needs no I/O (no header, the admin token, a recently verified API
   * key), else undefined: requests with a known credential then go on without waiting a turn.
   * @throws InvalidTokenError when the credential is certainly not valid.
   */
  authenticateCached(header: string | undefined): Principal | undefined {
    return header === undefined ? ANONYMOUS : this.#fromMemory(header);
  }

  #fromMemory(header: string): Principal | undefined {
    const now = Date.now();
    // API keys verified against the database (by SHA-256) are remembered by the whole header that
    // carried them: a request repeating one needs no parsing and no hashing. (The admin token is
    // never remembered here: it is checked before a key is looked up in the database.)
    const cached = this.#cache.get(header);
    if (cached !== undefined && cached.checkAfter > now) {
      if (cached.expiresAt <= now) throw new InvalidTokenError('The API key has expired.');
      this.#touch(cached.id, now);
      return cached.principal;
    }
    const token = bearerToken(header);
    if (this.#adminToken !== undefined && equalInConstantTime(token, this.#adminToken)) return ADMIN_TOKEN_PRINCIPAL;
    return this.#accountTokens === undefined ? undefined : this.#verifiedAccountTokens.get(token, now);
  }

  /** Verifies what memory could not: an API key against the database, or a JWT. */
  async #verify(token: string, header: string): Promise<Principal> {
    if (token.startsWith(API_KEY_PREFIX)) return this.#apiKey(token, header);
    if (token.split('.').length === 3) return this.#accountTokens !== undefined && isAccountToken(token) ? this.#accountToken(token, this.#accountTokens) : this.#verifyJwt(token);
    throw new InvalidTokenError('The token is not a known credential.');
  }

  /** Verifies an account's access token (EdDSA) and remembers it (VerifiedTokenCache). */
  async #accountToken(token: string, verifier: AccountTokenVerifier): Promise<Principal> {
    const principal = await verifier.principal(token);
    this.#verifiedAccountTokens.remember(token, principal, Date.now());
    return principal;
  }

  /** Called after a memory miss: asks the database, which holds only the key's SHA-256. */
  async #apiKey(token: string, header: string): Promise<Principal> {
    const now = Date.now();
    const record = await this.#apiKeys.findByHash(hashApiKey(token));
    if (record === undefined) {
      this.#cache.delete(header);
      throw new InvalidTokenError('The API key is unknown or revoked.');
    }
    const claims = record.claims;
    const cached: CachedKey = {
      id: record.id,
      principal: {
        kind: 'api-key',
        scopes: new Set(record.scopes),
        credentialId: apiKeyCredentialId(record.id),
        ...(record.subject === null ? {} : { subject: record.subject }),
        ...(claims === undefined ? {} : { claims: Object.freeze(claims) }),
      },
      checkAfter: now + this.#cacheMs,
      expiresAt: record.expiresAt === null ? Infinity : Date.parse(record.expiresAt),
      // Claims held as objects take about twice their JSON's characters (UTF-16 strings, headers).
      bytes:
        KEY_ENTRY_OVERHEAD_BYTES +
        record.scopes.reduce((n, scope) => n + scope.length, 0) +
        (record.subject?.length ?? 0) +
        (claims === undefined ? 0 : 2 * JSON.stringify(claims).length),
    };
    this.#cache.set(header, cached);
    if (cached.expiresAt <= now) throw new InvalidTokenError('The API key has expired.');
    this.#touch(cached.id, now);
    return cached.principal;
  }

  /**
   * Of the credentials of open streams, those that no longer authenticate (revoked, expired),
   * asking the database rather than trusting the key cache: one statement for all the API keys;
   * JWTs are verified again. Refuted keys leave the cache, so requests with them are refused from
   * now on too. A database that cannot answer just now proves nothing: no key is refuted then.
   */
  async refuted(headers: readonly string[]): Promise<Set<string>> {
    const refuted = new Set<string>();
    const keys = new Map<string, string>();
    const checks: Promise<void>[] = [];
    for (const header of headers) {
      let token: string;
      try {
        token = bearerToken(header);
      } catch {
        refuted.add(header);
        continue;
      }
      if (this.#adminToken !== undefined && equalInConstantTime(token, this.#adminToken)) continue;
      if (token.startsWith(API_KEY_PREFIX)) keys.set(header, hashApiKey(token));
      else checks.push(this.#verify(token, header).then(() => undefined, () => void refuted.add(header)));
    }
    if (keys.size > 0) {
      let active: Map<string, string | null> | undefined;
      try {
        active = await this.#apiKeys.activeByHashes([...new Set(keys.values())]);
      } catch (error) {
        if (!isPassingTrouble(error)) throw error;
      }
      const now = Date.now();
      for (const [header, keyHash] of active === undefined ? [] : keys) {
        const expiresAt = active?.get(keyHash);
        if (expiresAt === undefined || (expiresAt !== null && Date.parse(expiresAt) <= now)) {
          refuted.add(header);
          // A revoked key leaves the cache under every header it was cached by (other spacing, say);
          // an expired one is refused from memory already.
          const cached = expiresAt === undefined ? this.#cache.peek(header) : undefined;
          if (cached !== undefined) this.forgetApiKey(cached.id);
        }
      }
    }
    await Promise.all(checks);
    return refuted;
  }

  /** Forgets a cached key at once (after a revocation through this server). */
  forgetApiKey(id: number): void {
    const headers = [...this.#cache.entries()].filter(([, cached]) => cached.id === id).map(([header]) => header);
    for (const header of headers) this.#cache.delete(header);
  }

  /** Forgets the verified access tokens of account `subject` at once (after its sessions were ended through this server). */
  forgetAccount(subject: string): void {
    this.#verifiedAccountTokens.forgetAccount(subject);
  }

  /** Records last use at most once a minute per key, off the request's path. */
  #touch(id: number, now: number): void {
    const last = this.#lastTouched.get(id);
    if (last !== undefined && now - last < LAST_USED_RESOLUTION_MS) return;
    this.#lastTouched.set(id, now);
    this.#apiKeys.touch(id, new Date(now).toISOString()).catch(this.#onBackgroundError);
  }

  async #verifyJwt(token: string): Promise<Principal> {
    const jwt = this.#jwt;
    if (jwt === undefined || !this.acceptsJwts) throw new InvalidTokenError('This server does not accept JWTs.');
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw new InvalidTokenError('The token is malformed.');
    }
    const options = {
      clockTolerance: jwt.clockToleranceSeconds ?? 5,
      // A token that never expires cannot be taken back: refuse it.
      requiredClaims: ['exp'],
      ...(jwt.issuer === undefined ? {} : { issuer: jwt.issuer }),
      ...(jwt.audience === undefined ? {} : { audience: typeof jwt.audience === 'string' ? jwt.audience : [...jwt.audience] }),
    };
    let payload: JWTPayload;
    try {
      // The algorithm family picks the key: an HS token is only ever checked with the secret and an
      // asymmetric one only with public keys, so no public key can be used as an HMAC secret.
      if (alg !== undefined && HS_ALGORITHMS.includes(alg)) {
        if (this.#secret === undefined) throw new InvalidTokenError(`This server does not accept ${alg} tokens.`);
        ({ payload } = await jwtVerify(token, this.#secret, { ...options, algorithms: HS_ALGORITHMS }));
      } else if (alg !== undefined && ASYMMETRIC_ALGORITHMS.includes(alg)) {
        payload = await this.#verifyAsymmetric(token, alg, { ...options, algorithms: ASYMMETRIC_ALGORITHMS });
      } else {
        throw new InvalidTokenError(`The token's algorithm ${alg ?? '(none)'} is not accepted.`);
      }
    } catch (error) {
      throw error instanceof InvalidTokenError ? error : new InvalidTokenError(describeJoseError(error));
    }
    const scopes = readScopes(payload, jwt.scopesClaim ?? 'scope');
    const subject = readSubject(payload);
    return { kind: 'jwt', scopes, claims: payload, credentialId: jwtCredentialId(token, subject, payload.jti), ...(subject === undefined ? {} : { subject }) };
  }

  async #verifyAsymmetric(token: string, alg: string, options: Parameters<typeof jwtVerify>[2]): Promise<JWTPayload> {
    let lastError: unknown = new InvalidTokenError('This server has no public key for this token.');
    // Only the keys of the token's algorithm's type are tried (an RSA key cannot check an ES256
    // token; how jose says so differs between Node versions).
    for (const key of this.#publicKeys) {
      if (!keyFits(alg, key)) continue;
      try {
        return (await jwtVerify(token, key, options)).payload;
      } catch (error) {
        // The signature checked out, the claims did not (expired, wrong audience): that is the answer.
        if (error instanceof joseErrors.JWTClaimValidationFailed || error instanceof joseErrors.JWTExpired) throw error;
        // Not this key (another of the same type signed it, or jose cannot use this one): the next.
        lastError = error;
      }
    }
    if (this.#jwks !== undefined) return (await jwtVerify(token, this.#jwks, options)).payload;
    throw lastError;
  }
}

/** Whether a JWT names one of restgraph's own keys (then only they may verify it, never a configured issuer's). */
function isAccountToken(token: string): boolean {
  try {
    return decodeProtectedHeader(token).kid?.startsWith(ACCOUNT_KEY_ID_PREFIX) === true;
  } catch {
    return false;
  }
}

/**
 * Whether `key` is of the type `alg` signs with: RS and PS, an RSA key; ES, an EC key on the
 * algorithm's curve; EdDSA, an Ed25519 or Ed448 key; Ed25519, an Ed25519 key.
 */
function keyFits(alg: string, key: KeyObject): boolean {
  const type = key.asymmetricKeyType;
  if (alg.startsWith('RS') || alg.startsWith('PS')) return type === 'rsa';
  if (alg.startsWith('ES')) return type === 'ec' && key.asymmetricKeyDetails?.namedCurve === EC_CURVES[alg];
  if (alg === 'Ed25519') return type === 'ed25519';
  return type === 'ed25519' || type === 'ed448';
}

/** The curve of each ECDSA algorithm (RFC 7518, section 3.4), as Node names it. */
const EC_CURVES: Readonly<Record<string, string>> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };

/** The identity an API key counts as (its `Principal.credentialId`), by the key's id. */
export function apiKeyCredentialId(id: number): string {
  return `key:${id}`;
}

/**
 * The identity a JWT counts as for rate limits and idempotency keys: its subject, else its `jti`,
 * else the token itself (by hash), so that tokens with neither never share one identity.
 */
function jwtCredentialId(token: string, subject: string | undefined, jti: string | undefined): string {
  if (subject !== undefined) return `jwt:sub:${subject}`;
  if (typeof jti === 'string') return `jwt:jti:${jti}`;
  return `jwt:token:${hash('sha256', token, 'base64url')}`;
}

const ADMIN_TOKEN_PRINCIPAL: Principal = Object.freeze({ kind: 'admin-token', scopes: new Set(['admin']), credentialId: 'admin-token' });

/**
 * Compares a presented token with the secret in time that depends only on the presented token's
 * length: no early exit, and the secret's length is not revealed by when the loop stops.
 */
function equalInConstantTime(presented: string, secret: string): boolean {
  let difference = presented.length ^ secret.length;
  for (let i = 0; i < presented.length; i++) difference |= presented.charCodeAt(i) ^ (secret.charCodeAt(i % secret.length) | 0);
  return difference === 0;
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750, section 2.1). */
function bearerToken(header: string): string {
  const token = /^Bearer +([\x21-\x7e]+) *$/i.exec(header)?.[1];
  if (token === undefined) throw new InvalidTokenError('Send the credential as Authorization: Bearer <token>.');
  return token;
}

/**
 * The token's subject: its `sub`, or undefined when it has none (it then acts for no one and owns
 * nothing). A `sub` that is there but empty, or not a string (RFC 7519, section 4.1.2: a
 * StringOrURI), names no one: the token is refused rather than read as having no subject, or as
 * the subject "" that would own the rows whose owner field is empty.
 * @throws InvalidTokenError for such a `sub`
 */
function readSubject(payload: JWTPayload): string | undefined {
  const sub: unknown = payload.sub;
  if (sub === undefined) return undefined;
  if (typeof sub !== 'string') throw new InvalidTokenError("The token's sub claim is not a string; a subject names someone, or the claim is left out.");
  if (sub === '') throw new InvalidTokenError("The token's sub claim is empty; a subject names someone, or the claim is left out.");
  return sub;
}

function readScopes(payload: JWTPayload, claim: string): Set<string> {
  const value = payload[claim];
  if (typeof value === 'string') return new Set(value.split(' ').filter((s) => s !== ''));
  if (Array.isArray(value)) return new Set(value.filter((s): s is string => typeof s === 'string'));
  return new Set();
}

function describeJoseError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The token has expired.';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `The token's ${error.claim} claim is not accepted (${error.reason}).`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'The token signature is not valid.';
  if (error instanceof joseErrors.JWKSNoMatchingKey) return 'No key of the issuer matches the token.';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "The token's algorithm is not accepted.";
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JOSEError) return `The token could not be verified (${error.code}).`;
  return 'The token could not be verified.';
}
