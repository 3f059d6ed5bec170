/**
 * Who a request acts for, as established from its own credential (no sessions). Adapters
 * authenticate; the core authorises, from this alone.
 */
export interface Principal {
  /** How the credential was presented. */
  readonly kind: 'anonymous' | 'api-key' | 'jwt' | 'admin-token';
  /** The subject (JWT `sub`, or the API key's subject): what owner fields are compared with. */
  readonly subject?: string;
  readonly scopes: ReadonlySet<string>;
  /**
   * Values access rules may read as `@auth.claims.<name>`: a JWT's payload, an API key's claims
   * (docs/auth.md#rules). Absent: none.
   */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** An access token restgraph signed for an account (docs/accounts.md): its subject is the record's id. */
  readonly account?: boolean;
  /** Stable id of the credential (API key id, JWT `jti`/`sub`), for rate limits and idempotency scopes. */
  readonly credentialId: string;
}

/** The scope that passes every access rule. */
export const ADMIN_SCOPE = 'admin';

export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous', scopes: new Set<string>(), credentialId: 'anonymous' });

export function isAdmin(principal: Principal): boolean {
  return principal.scopes.has(ADMIN_SCOPE);
}

/** Who asks (authenticated by the adapter), and on behalf of which request. */
export interface OperationContext {
  principal: Principal;
  requestId?: string;
  /** Where the request came from: anonymous clients are rate-limited by it. */
  clientAddress?: string;
  /** The request's origin (`https://api.example.com`): the base of account email links when no public URL is set. */
  origin?: string;
}
