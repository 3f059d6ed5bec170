/**
 * The token, kept in this tab's sessionStorage only: it goes when the tab closes or on Sign out,
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
}
