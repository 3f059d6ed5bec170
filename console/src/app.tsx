import { useEffect, useRef, useState } from 'preact/hooks';
import { Api, ApiError } from './api.js';
import { SessionContext, type AccessSummary, type Session } from './context.js';
import { schemaForToken } from './field-access.js';
import { schemaInfo, type OpenApiDocument } from './schema.js';
import { forgetToken, storedToken, storeToken } from './session.js';
import { Shell } from './shell.js';
import { ErrorMessage } from './ui.js';

/** Checks a token with `GET /v1/auth/me` and reads the schema from `GET /openapi.json`. */
async function openSession(token: string, signOut: Session['signOut']): Promise<Session> {
  const api = new Api(token);
  const [me, document] = await Promise.all([api.get<AccessSummary>('/v1/auth/me'), api.get<OpenApiDocument>('/openapi.json')]);
  return { api, me, schema: schemaForToken(schemaInfo(document), me), signOut };
}

/** The console: the sign-in form until a token is accepted, then the console itself. */
export function App() {
  const [session, setSession] = useState<Session | undefined>();
  const [restoring, setRestoring] = useState(storedToken() !== undefined);
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string | undefined>();

  const signOut = (said?: string): void => {
    forgetToken();
    setSession(undefined);
    setError(undefined);
    setNotice(said);
    location.hash = '';
  };
  const signIn = async (token: string): Promise<void> => {
    setError(undefined);
    setNotice(undefined);
    try {
      const opened = await openSession(token, signOut);
      storeToken(token);
      setSession(opened);
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 401) forgetToken();
      setError(failure);
    }
  };
  useEffect(() => {
    const token = storedToken();
    if (token === undefined) return;
    void signIn(token).finally(() => setRestoring(false));
  }, []);

  if (session !== undefined) {
    return (
      <SessionContext.Provider value={session}>
        <Shell onSignOut={() => signOut()} />
      </SessionContext.Provider>
    );
  }
  if (restoring) return <p class="loading">Signing in…</p>;
  return <SignIn onSignIn={signIn} error={error} notice={notice} />;
}

function SignIn({ onSignIn, error, notice }: { onSignIn: (token: string) => Promise<void>; error: unknown; notice: string | undefined }) {
  const [token, setToken] = useState('');
  const field = useRef<HTMLInputElement>(null);
  // Signed out with something to say: the form is where the person now is.
  useEffect(() => {
    if (notice !== undefined) field.current?.focus();
  }, [notice]);
  const [busy, setBusy] = useState(false);
  const [empty, setEmpty] = useState(false);
  const submit = (event: Event): void => {
    event.preventDefault();
    const value = token.trim();
    setEmpty(value === '');
    if (value === '') return;
    setBusy(true);
    void onSignIn(value).finally(() => setBusy(false));
  };
  return (
    <main class="sign-in">
      <h1>restgraph admin console</h1>
      <form onSubmit={submit} noValidate>
        <div role="status">{notice !== undefined && <p class="ok">{notice}</p>}</div>
        <p>Sign in with an API key or the admin token. It is kept in this browser tab only (sessionStorage) and sent as <code>Authorization: Bearer</code> on each call.</p>
        <label for="token">Token</label>
        <input id="token" ref={field} name="token" type="password" autoComplete="off" spellcheck={false} value={token} onInput={(event) => setToken(event.currentTarget.value)} aria-describedby="token-error" aria-invalid={empty || error !== undefined} />
        <div id="token-error">
          {empty ? (
            <p class="error" role="alert">
              Enter a token.
            </p>
          ) : (
            <ErrorMessage error={error} />
          )}
        </div>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p class="hint">
        No key yet? <code>{tokenCommand()}</code> makes one, run where the server runs (docs/auth.md). Also here: <a href="/graphql">GraphiQL</a> · <a href="/docs">API reference</a>
      </p>
    </main>
  );
}

/** The command that makes an admin key for this server (its schema file and database), as the server put it in the page. */
function tokenCommand(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="restgraph-token-command"]')?.content ?? 'npx restgraph token create --scopes admin';
}
