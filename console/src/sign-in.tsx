import { useEffect, useRef, useState } from 'preact/hooks';
import { Api } from './api.js';
import { accountsOf, type OpenApiDocument } from './schema.js';
import { ErrorMessage } from './ui.js';

interface SignInProps {
  onSignIn: (token: string) => Promise<void>;
  onSignInWithAccount: (identifier: string, value: string, password: string) => Promise<void>;
  error: unknown;
  notice: string | undefined;
}

/**
 * The sign-in page: a token (an API key, the admin token), and, when the server has accounts
 * (its public OpenAPI document has `POST /v1/auth/sign-in`), an account's identifier and password.
 */
export function SignIn({ onSignIn, onSignInWithAccount, error, notice }: SignInProps) {
  const [accounts, setAccounts] = useState<{ identifier: string } | undefined>();
  const [via, setVia] = useState<'token' | 'account'>('token');
  useEffect(() => {
    new Api(undefined).get<OpenApiDocument>('/openapi.json').then(
      (document) => setAccounts(accountsOf(document)),
      () => undefined,
    );
  }, []);
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
    setVia('token');
    const value = token.trim();
    setEmpty(value === '');
    if (value === '') return;
    setBusy(true);
    void onSignIn(value).finally(() => setBusy(false));
  };
  return (
    <main class="sign-in">
      <h1>restgraph admin console</h1>
      <div role="status">{notice !== undefined && <p class="ok">{notice}</p>}</div>
      {accounts !== undefined && (
        <AccountForm
          identifier={accounts.identifier}
          error={via === 'account' ? error : undefined}
          onSubmit={(value, password) => {
            setVia('account');
            return onSignInWithAccount(accounts.identifier, value, password);
          }}
        />
      )}
      <form onSubmit={submit} noValidate>
        {accounts !== undefined && <h2 id="token-title">With a token</h2>}
        <p>Sign in with an API key or the admin token. It is kept in this browser tab only (sessionStorage) and sent as <code>Authorization: Bearer</code> on each call.</p>
        <label for="token">Token</label>
        <input id="token" ref={field} name="token" type="password" autoComplete="off" spellcheck={false} value={token} onInput={(event) => setToken(event.currentTarget.value)} aria-describedby="token-error" aria-invalid={empty || (via === 'token' && error !== undefined)} />
        <div id="token-error">
          {empty ? (
            <p class="error" role="alert">
              Enter a token.
            </p>
          ) : (
            <ErrorMessage error={via === 'token' ? error : undefined} />
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

/** An account's identifier (`email`) and password: `POST /v1/auth/sign-in`. */
function AccountForm({ identifier, error, onSubmit }: { identifier: string; error: unknown; onSubmit: (value: string, password: string) => Promise<void> }) {
  const [value, setValue] = useState('');
  const [password, setPassword] = useState('');
  const [missing, setMissing] = useState(false);
  const [busy, setBusy] = useState(false);
  const label = identifier.charAt(0).toUpperCase() + identifier.slice(1);
  const submit = (event: Event): void => {
    event.preventDefault();
    const missed = value.trim() === '' || password === '';
    setMissing(missed);
    if (missed) return;
    setBusy(true);
    void onSubmit(value.trim(), password).finally(() => setBusy(false));
  };
  return (
    <form onSubmit={submit} noValidate aria-labelledby="account-title">
      <h2 id="account-title">With an account</h2>
      <p>An account whose schema makes it an admin gets the whole console; others see what their token may do. The session is kept in this browser tab only and renewed while the console is open.</p>
      <label for="account-identifier">{label}</label>
      <input id="account-identifier" name={identifier} type="text" inputMode={identifier === 'email' ? 'email' : undefined} autoComplete="username" spellcheck={false} value={value} onInput={(event) => setValue(event.currentTarget.value)} aria-describedby="account-error" />
      <label for="account-password">Password</label>
      <input id="account-password" name="password" type="password" autoComplete="current-password" value={password} onInput={(event) => setPassword(event.currentTarget.value)} aria-describedby="account-error" aria-invalid={missing || error !== undefined} />
      <div id="account-error">
        {missing ? (
          <p class="error" role="alert">
            Enter your {identifier} and password.
          </p>
        ) : (
          <ErrorMessage error={error} />
        )}
      </div>
      <button type="submit" disabled={busy}>
        Sign in with password
      </button>
    </form>
  );
}

/** The command that makes an admin key for this server (its schema file and database), as the server put it in the page. */
function tokenCommand(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="restgraph-token-command"]')?.content ?? 'npx restgraph token create --scopes admin';
}
