import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { SigningKeyRecord, SigningKeyStore } from '../../store/signing-key-store.js';

/** Every key id restgraph makes starts with this: a token whose `kid` has it is an account token. */
export const ACCOUNT_KEY_ID_PREFIX = 'rg-';
/** The one algorithm of account tokens: EdDSA over Ed25519 (RFC 8037). */
export const ACCOUNT_TOKEN_ALGORITHM = 'EdDSA';
/** How long an instance trusts the keys it read before reading them again. */
const KEYS_CACHE_MS = 60_000; // 1 min
/** At most one read of the keys per this time for unknown `kid`s (tokens signed by a key made since, or forged). */
const UNKNOWN_KID_RELOAD_MS = 1_000; // 1 s

interface LoadedKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicJwk: JWK;
  retiredAt: number | undefined;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A new Ed25519 key pair as stored. */
export function newSigningKey(): Omit<SigningKeyRecord, 'retiredAt'> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const kid = `${ACCOUNT_KEY_ID_PREFIX}${randomBytes(12).toString('base64url')}`;
  return {
    kid,
    algorithm: ACCOUNT_TOKEN_ALGORITHM,
    privateKey: JSON.stringify(privateKey.export({ format: 'jwk' })),
    publicKey: JSON.stringify({ ...publicKey.export({ format: 'jwk' }), kid, alg: ACCOUNT_TOKEN_ALGORITHM, use: 'sig' }),
    createdAt: new Date().toISOString(),
  };
}

/** Makes a new signing key the current one; the keys before it keep verifying the tokens they signed until those expire. */
export async function rotateSigningKey(store: SigningKeyStore): Promise<string> {
  const key = newSigningKey();
  await store.add(key, true);
  return key.kid;
}

/**
 * The keys of account tokens as every instance sees them: read from the database (where the first
 * start stored one), cached for a minute, read again at once (at most once a second) when a token
 * names a key not yet seen. A retired key verifies for `verifyRetiredMs` after its retirement:
 * the longest a token it signed can live, plus the cache time of instances that still signed with it.
 */
export class SigningKeys {
  readonly #store: SigningKeyStore;
  readonly #verifyRetiredMs: number;
  #keys: LoadedKey[] = [];
  #loadedAt = -Infinity;
  #loading: Promise<void> | undefined;
  #unknownKidReload: Promise<void> | undefined;

  constructor(store: SigningKeyStore, accessTokenMs: number) {
    this.#store = store;
    this.#verifyRetiredMs = accessTokenMs + 2 * KEYS_CACHE_MS;
  }

  /** Makes the first key when the database has none (the first start). */
  async ensureKey(): Promise<void> {
    await this.#reload();
    if (this.#keys.length > 0) return;
    await this.#store.add(newSigningKey(), false);
    await this.#reload();
  }

  /** The key to sign with: the newest not retired. */
  async current(): Promise<{ kid: string; privateKey: KeyObject }> {
    if (Date.now() - this.#loadedAt > KEYS_CACHE_MS) await this.#reload();
    let key = this.#keys.find((k) => k.retiredAt === undefined);
    if (key === undefined) {
      await this.ensureKey();
      key = this.#keys.find((k) => k.retiredAt === undefined) ?? this.#keys[0];
    }
    if (key === undefined) throw new Error('no signing key');
    return key;
  }

  /** The public key of `kid`, when it may still verify tokens. */
  async verificationKey(kid: string): Promise<KeyObject | undefined> {
    const now = Date.now();
    if (now - this.#loadedAt > KEYS_CACHE_MS) await this.#reload();
    let key = this.#keys.find((k) => k.kid === kid);
    if (key === undefined) {
      // A key made since the last read (a rotation on another instance): read again, but at most
      // once a second however many such tokens come (they wait for that read).
      const wait = this.#loadedAt + UNKNOWN_KID_RELOAD_MS - now;
      this.#unknownKidReload ??= (wait > 0 ? delay(wait) : Promise.resolve()).then(() => this.#reload()).finally(() => {
        this.#unknownKidReload = undefined;
      });
      await this.#unknownKidReload;
      key = this.#keys.find((k) => k.kid === kid);
    }
    return key !== undefined && this.#verifies(key, now) ? key.publicKey : undefined;
  }

  /** The public keys that verify tokens now: the JSON Web Key Set of `/.well-known/jwks.json` (RFC 7517, section 5). */
  async jwks(): Promise<{ keys: JWK[] }> {
    const now = Date.now();
    if (now - this.#loadedAt > KEYS_CACHE_MS) await this.#reload();
    return { keys: this.#keys.filter((key) => this.#verifies(key, now)).map((key) => key.publicJwk) };
  }

  #verifies(key: LoadedKey, now: number): boolean {
    return key.retiredAt === undefined || now - key.retiredAt < this.#verifyRetiredMs;
  }

  /** Reads the keys again; concurrent callers share one read. */
  async #reload(): Promise<void> {
    this.#loading ??= this.#store
      .list()
      .then((records) => {
        this.#keys = records.map((record) => {
          const publicJwk = JSON.parse(record.publicKey) as JWK;
          return {
            kid: record.kid,
            privateKey: createPrivateKey({ key: JSON.parse(record.privateKey) as JWK & { kty: string }, format: 'jwk' }),
            publicKey: createPublicKey({ key: publicJwk as JWK & { kty: string }, format: 'jwk' }),
            publicJwk,
            retiredAt: record.retiredAt === null ? undefined : Date.parse(record.retiredAt),
          };
        });
        this.#loadedAt = Date.now();
      })
      .finally(() => {
        this.#loading = undefined;
      });
    return this.#loading;
  }
}
