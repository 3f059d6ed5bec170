import { useEffect, useState } from 'preact/hooks';
import { accountTokenStale, keepAccountFresh, refreshAccount, signInWithPassword, signOutAccount } from './account-session.js';
import { Api, ApiError } from './api.js';
import { SessionContext, type AccessSummary, type Session } from './context.js';
import { schemaForToken } from './field-access.js';
import { schemaInfo, type OpenApiDocument } from './schema.js';
import { forgetToken, storedRefresh, storedToken, storeToken } from './session.js';
import { Shell } from './shell.js';
import { SignIn } from './sign-in.js';

/** Checks a token with `GET /v1/auth/me` and reads the schema from `GET /openapi.json`. */
async function openSession(token: string, signOut: Session['signOut']): Promise<Session> {
  const api = new Api(token);
  const [me, document] = await Promise.all([api.get<AccessSummary>('/v1/auth/me'), api.get<OpenApiDocument>('/openapi.json')]);
  return { api, me, schema: schemaForToken(schemaInfo(document), me), signOut };
}

/** The console: the sign-in form until a token (or an account's password) is accepted, then the console itself. */
export function App() {
  const [session, setSession] = useState<Session | undefined>();
  const [restoring, setRestoring] = useState(storedToken() !== undefined);
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string | undefined>();

  const signOut = (said?: string): void => {
    // An account's session ends on the server too (its refresh token); the tab forgets it at once.
    void signOutAccount();
    forgetToken();
    setSession(undefined);
    setError(undefined);
    setNotice(said);
    location.hash = '';
  };
  const open = async (token: string): Promise<void> => {
    const opened = await openSession(token, signOut);
    storeToken(token);
    setSession(opened);
  };
  const signIn = async (token: string): Promise<void> => {
    setError(undefined);
    setNotice(undefined);
    try {
      await open(token);
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 401) forgetToken();
      setError(failure);
    }
  };
  const signInWithAccount = async (identifier: string, value: string, password: string): Promise<void> => {
    setError(undefined);
    setNotice(undefined);
    try {
      await open(await signInWithPassword(identifier, value, password));
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 401) forgetToken();
      setError(failure);
    }
  };
  useEffect(() => {
    const token = storedToken();
    if (token === undefined) return;
    // An account's access token that has expired meanwhile (a reload later) is renewed first.
    const restore = async (): Promise<void> => {
      const fresh = accountTokenStale() ? await refreshAccount().catch(() => undefined) : token;
      if (fresh === undefined) {
        forgetToken();
        setNotice('Your session has ended: sign in again.');
        return;
      }
      await signIn(fresh);
    };
    void restore().finally(() => setRestoring(false));
  }, []);
  // An account's session is renewed before its access token expires, while the console is open.
  useEffect(() => {
    if (session === undefined || storedRefresh() === undefined) return undefined;
    return keepAccountFresh(session.api, () => signOut('Your session has ended (signed out elsewhere, or the account was disabled): sign in again.'));
  }, [session]);

  if (session !== undefined) {
    return (
      <SessionContext.Provider value={session}>
        <Shell onSignOut={() => signOut()} />
      </SessionContext.Provider>
    );
  }
  if (restoring) return <p class="loading">Signing in…</p>;
  return <SignIn onSignIn={signIn} onSignInWithAccount={signInWithAccount} error={error} notice={notice} />;
}
