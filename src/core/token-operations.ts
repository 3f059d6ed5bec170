import { hasNul, NUL_DETAIL } from './storable-text.js';
import { AuthenticationRequiredError, ForbiddenError, NotFoundError, ValidationError, type ErrorDetail } from '../errors.js';
import type { ApiKeyRecord, ApiKeyStore } from '../store/api-key-store.js';
import { isAdmin, type Principal } from './principal.js';
import { isPlainObject } from './merge-patch.js';
import { readTokenClaims, type TokenClaims } from './token-claims.js';

const SCOPE = /^[A-Za-z0-9_.:-]{1,100}$/;
const DURATION = /^(\d{1,6})(s|m|h|d|w|y)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };

/** A request to create an API key, as the HTTP API and the CLI take it. */
export interface TokenRequest {
  name?: unknown;
  scopes?: unknown;
  subject?: unknown;
  /** Values access rules read as `@auth.claims.<name>` (src/core/token-claims.ts). */
  claims?: unknown;
  /** A duration (`30d`, `12h`) or an RFC 3339 instant. */
  expires?: unknown;
}

/** An API key as shown to admins: everything but the key, with its state spelled out. */
export type TokenView = ApiKeyRecord & { state: 'active' | 'expired' | 'revoked' };

/** Managing API keys: admin only over HTTP; the CLI acts as admin on its own database. */
export class TokenOperations {
  readonly #store: ApiKeyStore;

  constructor(store: ApiKeyStore) {
    this.#store = store;
  }

  /** Creates a key; the result holds the key itself, shown this once. */
  async create(principal: Principal, request: unknown, now = Date.now()): Promise<{ key: string; token: TokenView }> {
    requireAdmin(principal);
    const input = parseTokenRequest(request, now);
    const { key, record } = await this.#store.create(input);
    return { key, token: view(record, now) };
  }

  async list(principal: Principal, now = Date.now()): Promise<TokenView[]> {
    requireAdmin(principal);
    return (await this.#store.list()).map((r) => view(r, now));
  }

  async get(principal: Principal, id: number, now = Date.now()): Promise<TokenView> {
    requireAdmin(principal);
    const record = await this.#store.get(id);
    if (record === undefined) throw new NotFoundError(`There is no token with id ${id}.`);
    return view(record, now);
  }

  /** Revokes by id or prefix (`rg_AbCdEfGh`). Takes effect within the key cache's lifetime. */
  async revoke(principal: Principal, idOrPrefix: string, now = Date.now()): Promise<TokenView> {
    requireAdmin(principal);
    const record = await this.#store.revoke(idOrPrefix);
    if (record === undefined) throw new NotFoundError(`No single token has the id or prefix ${idOrPrefix}.`);
    return view(record, now);
  }
}

export function requireAdmin(principal: Principal, what = 'tokens'): void {
  if (principal.kind === 'anonymous') {
    throw new AuthenticationRequiredError(`Managing ${what} needs an admin credential: send Authorization: Bearer <token>.`);
  }
  if (!isAdmin(principal)) {
    throw new ForbiddenError(`Managing ${what} needs the admin scope.`, ['admin']);
  }
}

/** Checks a token request; every problem is reported at once (422). */
export function parseTokenRequest(request: unknown, now: number): { name: string; scopes: string[]; subject?: string; claims?: TokenClaims; expiresAt?: string } {
  if (!isPlainObject(request)) throw new ValidationError('The request body must be a JSON object.', { errors: [{ pointer: '', detail: 'must be a JSON object' }] });
  const problems: ErrorDetail[] = [];
  for (const key of Object.keys(request)) {
    if (!['name', 'scopes', 'subject', 'claims', 'expires'].includes(key)) problems.push({ pointer: `/${key}`, detail: 'is not a token property (name, scopes, subject, claims, expires)' });
  }
  const name = request.name ?? 'unnamed';
  if (typeof name !== 'string' || name.length < 1 || name.length > 100) problems.push({ pointer: '/name', detail: 'must be a string of 1 to 100 characters' });
  else if (hasNul(name)) problems.push({ pointer: '/name', detail: NUL_DETAIL });
  const scopes = request.scopes;
  if (!Array.isArray(scopes) || scopes.length === 0 || scopes.length > 100 || !scopes.every((s): s is string => typeof s === 'string' && SCOPE.test(s))) {
    problems.push({ pointer: '/scopes', detail: 'must be a non-empty array of scopes like users:read (letters, digits, _ . : -)' });
  }
  const subject = request.subject;
  if (subject !== undefined && (typeof subject !== 'string' || subject.length < 1 || subject.length > 200)) {
    problems.push({ pointer: '/subject', detail: 'must be a string of 1 to 200 characters' });
  } else if (subject !== undefined && hasNul(subject)) problems.push({ pointer: '/subject', detail: NUL_DETAIL });
  const claims = request.claims === undefined ? undefined : readTokenClaims(request.claims, problems);
  let expiresAt: string | undefined;
  if (request.expires !== undefined) {
    expiresAt = typeof request.expires === 'string' ? parseExpiry(request.expires, now) : undefined;
    if (expiresAt === undefined) problems.push({ pointer: '/expires', detail: 'must be a duration like 30d, 12h, 1y, or a future RFC 3339 date-time' });
  }
  if (problems.length > 0) throw new ValidationError(problems.length === 1 ? 'One property is invalid.' : `${problems.length} properties are invalid.`, { errors: problems });
  return {
    name: name as string,
    scopes: scopes as string[],
    ...(typeof subject === 'string' ? { subject } : {}),
    ...(claims === undefined ? {} : { claims }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

/** `30d` → the instant 30 days from now; an RFC 3339 date-time → itself. Undefined when invalid or past. */
export function parseExpiry(text: string, now: number): string | undefined {
  const match = DURATION.exec(text);
  if (match !== null) {
    const ms = Number(match[1]) * (UNIT_MS[match[2] ?? 's'] ?? 1000);
    return ms > 0 ? new Date(now + ms).toISOString() : undefined;
  }
  const at = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(at) || at <= now ? undefined : new Date(at).toISOString();
}

function view(record: ApiKeyRecord, now: number): TokenView {
  const state = record.revokedAt !== null ? 'revoked' : record.expiresAt !== null && Date.parse(record.expiresAt) <= now ? 'expired' : 'active';
  return { ...record, state };
}
