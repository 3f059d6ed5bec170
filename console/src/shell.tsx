import { accessTo, useSession } from './context.js';
import { AccountsPage } from './pages/accounts-page.js';
import { EventsPage } from './pages/events-page.js';
import { KeysPage } from './pages/keys-page.js';
import { NewRecordPage } from './pages/new-record-page.js';
import { RecordPage } from './pages/record-page.js';
import { ResourceListPage } from './pages/resource-list-page.js';
import { StatusPage } from './pages/status-page.js';
import { WebhookPage } from './pages/webhook-page.js';
import { WebhooksPage } from './pages/webhooks-page.js';
import { href, useRoute, type Route } from './route.js';
import { PageHeading } from './ui.js';

/** The signed-in console: navigation by what the token may do, and the page the fragment names. */
export function Shell({ onSignOut }: { onSignOut: () => void }) {
  const { me, schema } = useSession();
  const route = useRoute();
  const readable = [...schema.resources.keys()].filter((name) => accessTo(me, name).read);
  const current = (match: boolean): { 'aria-current'?: 'page' } => (match ? { 'aria-current': 'page' } : {});
  const who = me.kind === 'admin-token' ? 'admin token' : `${me.kind}${me.subject === null ? '' : ` of ${me.subject}`}: ${me.scopes.join(', ') || 'no scopes'}`;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <a class="brand" href="#/">
          restgraph admin
        </a>
        <nav aria-label="Console">
          <ul>
            {readable.map((name) => (
              <li key={name}>
                <a href={href.list(name)} {...current((route.page === 'list' || route.page === 'new' || route.page === 'record') && route.resource === name)}>
                  {name}
                </a>
              </li>
            ))}
            {me.manage.tokens && (
              <li>
                <a href="#/keys" {...current(route.page === 'keys')}>
                  API keys
                </a>
              </li>
            )}
            {schema.accounts !== undefined && me.admin && (
              <li>
                <a href="#/accounts" {...current(route.page === 'accounts')}>
                  Accounts
                </a>
              </li>
            )}
            {me.manage.webhooks && (
              <li>
                <a href="#/webhooks" {...current(route.page === 'webhooks' || route.page === 'webhook')}>
                  Webhooks
                </a>
              </li>
            )}
            {readable.length > 0 && (
              <li>
                <a href="#/events" {...current(route.page === 'events')}>
                  Events
                </a>
              </li>
            )}
            <li>
              <a href="#/status" {...current(route.page === 'status')}>
                Status
              </a>
            </li>
            <li>
              <a href="/graphql">GraphiQL</a>
            </li>
            <li>
              <a href="/docs">API reference</a>
            </li>
          </ul>
        </nav>
        <div class="who">
          <span title={who}>{who}</span>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        <Page route={route} readable={readable} />
      </main>
    </>
  );
}

/** Why a page is not there for this token, without asking the server something it will refuse. */
function NotAllowed({ what, needs }: { what: string; needs: string }) {
  return (
    <>
      <PageHeading>{what}</PageHeading>
      <p class="error" role="alert">
        This token may not {needs}.
      </p>
    </>
  );
}

function Page({ route, readable }: { route: Route; readable: string[] }) {
  const { me, schema } = useSession();
  const resourceKey = route.page === 'list' || route.page === 'new' || route.page === 'record' ? route.resource : undefined;
  if (resourceKey !== undefined) {
    const resource = schema.resources.get(resourceKey);
    if (resource === undefined) return <NotAllowed what="Unknown resource" needs={`open "${resourceKey}": the schema has no such resource`} />;
    const access = accessTo(me, resource.name);
    if (!access.read) return <NotAllowed what={resource.name} needs={`read ${resource.name}`} />;
    if (route.page === 'list') return <ResourceListPage key={resource.name} resource={resource} query={route.query} />;
    if (route.page === 'new') return access.create ? <NewRecordPage key={resource.name} resource={resource} /> : <NotAllowed what={`New ${resource.singular}`} needs={`create ${resource.name}`} />;
    if (route.page === 'record') return <RecordPage key={`${resource.name}/${route.id}`} resource={resource} id={route.id} />;
  }
  switch (route.page) {
    case 'keys':
      return me.manage.tokens ? <KeysPage /> : <NotAllowed what="API keys" needs="manage API keys (it needs the admin scope)" />;
    case 'accounts':
      if (schema.accounts === undefined) return <NotAllowed what="Accounts" needs="manage accounts: this server's schema has no accounts" />;
      return me.admin ? <AccountsPage identifier={schema.accounts.identifier} /> : <NotAllowed what="Accounts" needs="manage accounts (it needs the admin scope)" />;
    case 'webhooks':
      return me.manage.webhooks ? <WebhooksPage /> : <NotAllowed what="Webhooks" needs="manage webhooks (it needs the admin scope)" />;
    case 'webhook':
      return me.manage.webhooks ? <WebhookPage key={route.id} id={route.id} /> : <NotAllowed what="Webhook" needs="manage webhooks (it needs the admin scope)" />;
    case 'events':
      return <EventsPage />;
    case 'status':
      return <StatusPage />;
    case 'unknown':
      return <NotAllowed what="Not found" needs={`open ${route.hash}: there is no such page`} />;
    default:
      return <Home readable={readable} />;
  }
}

function Home({ readable }: { readable: string[] }) {
  const { me, schema } = useSession();
  return (
    <>
      <PageHeading>Resources</PageHeading>
      {readable.length === 0 ? (
        <p>This token may read no resource.</p>
      ) : (
        <ul class="cards">
          {readable.map((name) => {
            const access = accessTo(me, name);
            const can = (['create', 'update', 'delete'] as const).filter((action) => access[action]);
            return (
              <li key={name}>
                <a href={href.list(name)}>{name}</a>
                <p>{schema.resources.get(name)?.description}</p>
                <p class="muted">
                  This token may read{can.length > 0 ? `, ${can.join(', ')}` : ' only'}
                  {access.owner === null ? '' : ` (its own rows: ${access.owner})`}
                  {access.rules?.list.allowed === 'rule' ? `; it sees the rows where ${access.rules.list.rule}` : ''}.
                </p>
              </li>
            );
          })}
        </ul>
      )}
    </>
  );
}
