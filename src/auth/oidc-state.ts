import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** What the callback of one sign-in needs from its start: kept by the browser, sealed. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  /** The PKCE code verifier (RFC 7636); only its S256 challenge went to the provider. */
  codeVerifier: string;
  /** The redirect_uri sent to the provider: the token request must send the same. */
  redirectUri: string;
  /** Epoch milliseconds after which the callback is refused. */
  expiresAt: number;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals a pending sign-in into a cookie value with AES-256-GCM, so that no instance keeps state
 * between `/start` and `/callback` and every instance configured alike can open it. The key is
 * derived (HKDF-SHA256) from the provider's client secret, and the provider's name is bound as
 * associated data: a cookie sealed for one provider does not open for another, and a browser can
 * neither read the verifier nor change anything.
 */
export class PendingSignInSeal {
  readonly #key: Buffer;
  readonly #provider: Buffer;

  constructor(provider: string, clientSecret: string) {
    this.#provider = Buffer.from(provider, 'utf8');
    this.#key = Buffer.from(hkdfSync('sha256', clientSecret, 'restgraph oidc state', `restgraph oidc state cookie: ${provider}`, 32));
  }

  seal(pending: PendingSignIn): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(this.#provider);
    const body = Buffer.concat([cipher.update(JSON.stringify(pending), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The pending sign-in, or undefined for a value this seal did not make (altered, another provider's, garbage). */
  open(value: string): PendingSignIn | undefined {
    const bytes = Buffer.from(value, 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(this.#provider);
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      return pendingSignIn(JSON.parse(text));
    } catch {
      return undefined;
    }
  }
}

function pendingSignIn(value: unknown): PendingSignIn | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { state, nonce, codeVerifier, redirectUri, expiresAt } = value as Record<string, unknown>;
  if (typeof state !== 'string' || typeof nonce !== 'string' || typeof codeVerifier !== 'string' || typeof redirectUri !== 'string' || typeof expiresAt !== 'number') return undefined;
  return { state, nonce, codeVerifier, redirectUri, expiresAt };
}
