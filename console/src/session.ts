/**
 * The token (an API key, the admin token, or an account's access token), kept in this tab's sessionStorage only: it goes when the tab closes or on Sign out,
 * is never written to localStorage or a cookie, and is sent only as an Authorization header.
 */
const KEY = 'restgraph.console.token';

export function storedToken(): string | undefined {
  try {
    return sessionStorage.getItem(KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function storeToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(REFRESH_KEY);
}

/**
 * An account's session (signed in with email and password): the access token is kept as the
 * token above; its refresh token and when the access token expires are kept beside it, in this
 * tab's sessionStorage too.
 */
const REFRESH_KEY = 'restgraph.console.refresh';

export interface StoredRefresh {
  refreshToken: string;
  /** When the access token expires (ms since the epoch). */
  expiresAt: number;
}

export function storedRefresh(): StoredRefresh | undefined {
  try {
    const text = sessionStorage.getItem(REFRESH_KEY);
    const parsed = text === null ? undefined : (JSON.parse(text) as Partial<StoredRefresh>);
    return typeof parsed?.refreshToken === 'string' && typeof parsed.expiresAt === 'number' ? { refreshToken: parsed.refreshToken, expiresAt: parsed.expiresAt } : undefined;
  } catch {
    return undefined;
  }
}

export function storeRefresh(refresh: StoredRefresh): void {
  sessionStorage.setItem(REFRESH_KEY, JSON.stringify(refresh));
}
