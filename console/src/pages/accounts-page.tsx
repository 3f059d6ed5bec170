import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../context.js';
import { shortTime } from '../format.js';
import { ConfirmDialog, ErrorMessage, PageHeading, TableBox } from '../ui.js';

interface Account {
  id: number;
  identifier: string | null;
  emailVerified: boolean;
  disabled: boolean;
  createdAt: string;
  activeSessions: number;
}

interface AccountPage {
  items: Account[];
  next: string | null;
}

type Action = 'disable' | 'enable' | 'sign-out' | 'resend-verification';

const DONE: Readonly<Record<Action, string>> = {
  disable: 'is disabled: it cannot sign in, and its sessions have ended.',
  enable: 'is enabled: it can sign in again.',
  'sign-out': 'is signed out everywhere.',
  'resend-verification': 'is being sent its verification email again.',
};

/**
 * Accounts (`/v1/auth/accounts`, docs/accounts.md#account-administration), admins only: the list
 * newest first with a search by the start of the identifier, and per account disable or enable,
 * force sign-out, and resend the verification email.
 */
export function AccountsPage({ identifier }: { identifier: string }) {
  const { api } = useSession();
  const [query, setQuery] = useState('');
  const [applied, setApplied] = useState('');
  const [pages, setPages] = useState<string[]>([]);
  const [page, setPage] = useState<AccountPage | undefined>();
  const [error, setError] = useState<unknown>();
  const [said, setSaid] = useState<string | undefined>();
  const [confirming, setConfirming] = useState<{ account: Account; action: 'disable' | 'sign-out' } | undefined>();

  const after = pages.at(-1);
  const load = async (): Promise<void> => {
    const params = new URLSearchParams({ limit: '25' });
    if (applied !== '') params.set('q', applied);
    if (after !== undefined) params.set('after', after);
    try {
      setPage(await api.get<AccountPage>(`/v1/auth/accounts?${params.toString()}`));
    } catch (failure) {
      setError(failure);
    }
  };
  useEffect(() => {
    void load();
  }, [applied, after]);

  const act = async (account: Account, action: Action): Promise<void> => {
    setConfirming(undefined);
    setError(undefined);
    setSaid(undefined);
    try {
      const answer = await api.call<{ status?: string }>(`/v1/auth/accounts/${account.id}/${action}`, { method: 'POST' });
      const name = account.identifier ?? `Account ${account.id}`;
      setSaid(action === 'resend-verification' && answer.body.status === 'already-verified' ? `${name} is verified already: nothing was sent.` : `${name} ${DONE[action]}`);
      await load();
    } catch (failure) {
      setError(failure);
    }
  };

  const search = (event: Event): void => {
    event.preventDefault();
    setPages([]);
    setApplied(query.trim());
  };

  return (
    <>
      <PageHeading>Accounts</PageHeading>
      <form class="filter-bar" onSubmit={search} role="search" aria-label="Search accounts">
        <div>
          <label for="account-search">{`Search by ${identifier}`}</label>
          <input id="account-search" type="search" value={query} maxLength={320} placeholder={`the start of the ${identifier}`} onInput={(event) => setQuery(event.currentTarget.value)} />
        </div>
        <button type="submit">Search</button>
      </form>
      <div role="status">{said !== undefined && <p class="ok">{said}</p>}</div>
      <ErrorMessage error={error} />
      {page !== undefined && (
        <TableBox label="Accounts">
          <thead>
            <tr>
              <th scope="col">id</th>
              <th scope="col">{identifier}</th>
              <th scope="col">state</th>
              <th scope="col">sessions</th>
              <th scope="col">created</th>
              <th scope="col">
                <span class="visually-hidden">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {page.items.length === 0 && (
              <tr>
                <td colSpan={6}>{applied === '' ? 'No accounts.' : `No account's ${identifier} starts with "${applied}".`}</td>
              </tr>
            )}
            {page.items.map((account) => {
              const name = account.identifier ?? `account ${account.id}`;
              return (
                <tr key={account.id}>
                  <td>{account.id}</td>
                  <td>{account.identifier ?? <span class="null">—</span>}</td>
                  <td>
                    <span class={`state state-${account.disabled ? 'disabled' : 'active'}`}>{account.disabled ? 'disabled' : 'active'}</span>{' '}
                    <span class={`state state-${account.emailVerified ? 'succeeded' : 'pending'}`}>{account.emailVerified ? 'verified' : 'not verified'}</span>
                  </td>
                  <td>{account.activeSessions}</td>
                  <td>{shortTime(account.createdAt)}</td>
                  <td class="actions">
                    {account.disabled ? (
                      <button type="button" aria-label={`Enable ${name}`} onClick={() => void act(account, 'enable')}>
                        Enable
                      </button>
                    ) : (
                      <button type="button" class="danger" aria-label={`Disable ${name}`} onClick={() => setConfirming({ account, action: 'disable' })}>
                        Disable
                      </button>
                    )}
                    <button type="button" aria-label={`Sign out ${name} everywhere`} onClick={() => setConfirming({ account, action: 'sign-out' })}>
                      Sign out
                    </button>
                    {!account.emailVerified && (
                      <button type="button" aria-label={`Resend the verification email to ${name}`} onClick={() => void act(account, 'resend-verification')}>
                        Resend verification
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </TableBox>
      )}
      <div class="actions">
        <button type="button" disabled={pages.length === 0} onClick={() => setPages(pages.slice(0, -1))}>
          Previous
        </button>
        <button type="button" disabled={page?.next === null || page === undefined} onClick={() => page?.next != null && setPages([...pages, page.next])}>
          Next
        </button>
      </div>
      {confirming !== undefined && (
        <ConfirmDialog
          title={`${confirming.action === 'disable' ? 'Disable' : 'Sign out'} ${confirming.account.identifier ?? `account ${confirming.account.id}`}?`}
          confirm={confirming.action === 'disable' ? 'Disable account' : 'Sign out everywhere'}
          onConfirm={() => void act(confirming.account, confirming.action)}
          onCancel={() => setConfirming(undefined)}
        >
          <p>
            {confirming.action === 'disable'
              ? 'The account cannot sign in until it is enabled again. Every session ends: refreshing is refused at once, its access tokens within 10 seconds.'
              : 'Every session of the account ends: refreshing is refused at once, its access tokens within 10 seconds. It can sign in again.'}
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
