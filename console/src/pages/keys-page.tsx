import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../context.js';
import { shortTime } from '../format.js';
import { ConfirmDialog, ErrorMessage, PageHeading, ShownOnce, TableBox } from '../ui.js';

interface Token {
  id: number;
  name: string;
  prefix: string;
  scopes: string[];
  subject: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  state: 'active' | 'expired' | 'revoked';
  key?: string;
}

/** API keys (`/v1/tokens`, docs/auth.md): the list, a new key shown once, revoking. Admins only. */
export function KeysPage() {
  const { api, schema, me, signOut } = useSession();
  const [tokens, setTokens] = useState<Token[] | undefined>();
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<Token | undefined>();
  const [revoking, setRevoking] = useState<Token | undefined>();

  const load = async (): Promise<void> => {
    try {
      setTokens(await api.get<Token[]>('/v1/tokens'));
    } catch (failure) {
      setError(failure);
    }
  };
  useEffect(() => {
    void load();
  }, []);

  // The key this console is signed in with: revoking it ends this session too.
  const isOwn = (token: Token): boolean => me.kind === 'api-key' && api.isKeyWithPrefix(token.prefix);
  const revoke = async (token: Token): Promise<void> => {
    setRevoking(undefined);
    setError(undefined);
    try {
      await api.call(`/v1/tokens/${token.id}`, { method: 'DELETE' });
      if (isOwn(token)) {
        signOut('You revoked the key this console was signed in with, and are signed out.');
        return;
      }
      await load();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <>
      <PageHeading>API keys</PageHeading>
      <ErrorMessage error={error} />
      {created?.key !== undefined && (
        <ShownOnce
          label={`The new key "${created.name}"`}
          value={created.key}
          onDone={() => {
            setCreated(undefined);
          }}
        />
      )}
      {tokens !== undefined && (
        <TableBox label="API keys">
          <thead>
            <tr>
              <th scope="col">name</th>
              <th scope="col">prefix</th>
              <th scope="col">scopes</th>
              <th scope="col">subject</th>
              <th scope="col">last used</th>
              <th scope="col">expires</th>
              <th scope="col">state</th>
              <th scope="col">
                <span class="visually-hidden">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.length === 0 && (
              <tr>
                <td colSpan={8}>No API keys.</td>
              </tr>
            )}
            {tokens.map((token) => (
              <tr key={token.id}>
                <td>
                  {token.name}
                  {isOwn(token) && <span class="muted"> (this console’s key)</span>}
                </td>
                <td>
                  <code>{token.prefix}</code>
                </td>
                <td>{token.scopes.join(', ')}</td>
                <td>{token.subject ?? <span class="null">—</span>}</td>
                <td>{token.lastUsedAt === null ? 'never' : shortTime(token.lastUsedAt)}</td>
                <td>{token.expiresAt === null ? 'never' : shortTime(token.expiresAt)}</td>
                <td>
                  <span class={`state state-${token.state}`}>{token.state}</span>
                </td>
                <td>
                  {token.state === 'active' && (
                    <button type="button" class="danger" aria-label={`Revoke ${token.name} (${token.prefix})`} onClick={() => setRevoking(token)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      )}
      <NewKeyForm
        scopes={schema.scopes}
        onCreated={(token) => {
          setCreated(token);
          void load();
        }}
      />
      {revoking !== undefined && (
        <ConfirmDialog title={`Revoke ${revoking.name}?`} confirm={isOwn(revoking) ? 'Revoke key and sign out' : 'Revoke key'} onConfirm={() => void revoke(revoking)} onCancel={() => setRevoking(undefined)}>
          {isOwn(revoking) && (
            <p class="warning">
              <strong>This console is signed in with this key: revoking it signs you out.</strong> Sign in again with another key or the admin token.
            </p>
          )}
          <p>
            Requests with the key <code>{revoking.prefix}…</code> are refused from now on (on other instances within the key cache time). Revoking is final.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

function NewKeyForm({ scopes, onCreated }: { scopes: string[]; onCreated: (token: Token) => void }) {
  const { api } = useSession();
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [otherScopes, setOtherScopes] = useState('');
  const [subject, setSubject] = useState('');
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setError(undefined);
    const all = [...chosen, ...otherScopes.split(',').map((scope) => scope.trim()).filter((scope) => scope !== '')];
    const body: Record<string, unknown> = { scopes: all };
    if (name.trim() !== '') body.name = name.trim();
    if (subject.trim() !== '') body.subject = subject.trim();
    if (expires.trim() !== '') body.expires = expires.trim();
    setBusy(true);
    try {
      const created = await api.call<Token>('/v1/tokens', { method: 'POST', body });
      setName('');
      setChosen([]);
      setOtherScopes('');
      setSubject('');
      setExpires('');
      onCreated(created.body);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const toggle = (scope: string, on: boolean): void => setChosen(on ? [...chosen, scope] : chosen.filter((other) => other !== scope));

  return (
    <form class="panel" onSubmit={(event) => void submit(event)} noValidate aria-labelledby="new-key-title">
      <h2 id="new-key-title">New API key</h2>
      <ErrorMessage error={error} />
      <div class="field">
        <label for="key-name">Name</label>
        <input id="key-name" value={name} maxLength={100} onInput={(event) => setName(event.currentTarget.value)} />
      </div>
      <fieldset>
        <legend>Scopes</legend>
        <div class="checks">
          {scopes.map((scope) => (
            <label key={scope} class="check">
              <input type="checkbox" checked={chosen.includes(scope)} onInput={(event) => toggle(scope, event.currentTarget.checked)} /> {scope}
            </label>
          ))}
        </div>
        <label for="key-other-scopes">Other scopes (comma-separated)</label>
        <input id="key-other-scopes" value={otherScopes} onInput={(event) => setOtherScopes(event.currentTarget.value)} />
      </fieldset>
      <div class="field">
        <label for="key-subject">Subject</label>
        <input id="key-subject" value={subject} aria-describedby="key-subject-hint" onInput={(event) => setSubject(event.currentTarget.value)} />
        <p id="key-subject-hint" class="hint">
          What owner rules compare with (a user id, say); none for a key that acts for no one.
        </p>
      </div>
      <div class="field">
        <label for="key-expires">Expires</label>
        <input id="key-expires" value={expires} placeholder="90d" aria-describedby="key-expires-hint" onInput={(event) => setExpires(event.currentTarget.value)} />
        <p id="key-expires-hint" class="hint">
          A duration (30d, 12h, 1y) or a date-time; empty: never.
        </p>
      </div>
      <button type="submit" disabled={busy}>
        Create key
      </button>
    </form>
  );
}
