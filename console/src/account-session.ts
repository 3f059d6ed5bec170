import { Api, ApiError } from './api.js';
import { storedRefresh, storeRefresh, storeToken } from './session.js';

/** What `POST /v1/auth/sign-in` and `/refresh` answer (docs/accounts.md). */
interface Tokens {
  accessToken: string;
  expiresIn: number;
  refreshToken: string;
}

const anonymous = new Api(undefined);

/** Keeps an account's tokens in this tab: the access token as the console's token, the refresh token beside it. */
function keep(tokens: Tokens): string {
  storeToken(tokens.accessToken);
  storeRefresh({ refreshToken: tokens.refreshToken, expiresAt: Date.now() + tokens.expiresIn * 1000 });
  return tokens.accessToken;
}

/** Signs in with an account's identifier and password; resolves to the access token (kept with its refresh token). @throws ApiError */
export async function signInWithPassword(identifier: string, value: string, password: string): Promise<string> {
  const answer = await anonymous.call<Tokens>('/v1/auth/sign-in', { method: 'POST', body: { [identifier]: value, password } });
  return keep(answer.body);
}

/** Exchanges the kept refresh token for new tokens; resolves to the new access token, or undefined when no account is signed in. @throws ApiError */
export async function refreshAccount(): Promise<string | undefined> {
  const stored = storedRefresh();
  if (stored === undefined) return undefined;
  const answer = await anonymous.call<Tokens>('/v1/auth/refresh', { method: 'POST', body: { refreshToken: stored.refreshToken } });
  return keep(answer.body);
}

/** Whether the kept access token is about to expire (or has): then it is refreshed before use. */
export function accountTokenStale(): boolean {
  const stored = storedRefresh();
  return stored !== undefined && stored.expiresAt - Date.now() < 10_000;
}

/** Ends the account's session on the server (its refresh token family); failures are ignored: the tab forgets the tokens anyway. */
export async function signOutAccount(): Promise<void> {
  const stored = storedRefresh();
  if (stored === undefined) return;
  try {
    await anonymous.call('/v1/auth/sign-out', { method: 'POST', body: { refreshToken: stored.refreshToken } });
  } catch {
    // Signed out here regardless.
  }
}

/**
 * Renews the access token of an account's session before it expires (at four fifths of its
 * remaining life), for as long as the console is open: each new token goes to `api`. A refusal
 * (the session was ended: signed out elsewhere, the account disabled) calls `onEnded`; a network
 * failure tries again shortly. Returns the function that stops it.
 */
export function keepAccountFresh(api: Api, onEnded: () => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const schedule = (delayMs: number): void => {
    timer = setTimeout(() => void renew(), delayMs);
  };
  const renew = async (): Promise<void> => {
    try {
      const token = await refreshAccount();
      if (stopped || token === undefined) return;
      api.useToken(token);
      next();
    } catch (error) {
      if (stopped) return;
      if (error instanceof ApiError && error.status !== 0 && error.status !== 429 && error.status < 500) onEnded();
      else schedule(10_000);
    }
  };
  const next = (): void => {
    const stored = storedRefresh();
    if (stored !== undefined) schedule(Math.max(1_000, 0.8 * (stored.expiresAt - Date.now())));
  };
  next();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}
