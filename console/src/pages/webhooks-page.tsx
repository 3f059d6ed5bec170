import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../context.js';
import { shortTime } from '../format.js';
import { href } from '../route.js';
import { ErrorMessage, PageHeading, ShownOnce, TableBox } from '../ui.js';
import type { Webhook } from './webhook-types.js';

/** Webhook endpoints: the list, and a new one (its signing secret shown once). Admins only. */
export function WebhooksPage() {
  const { api } = useSession();
  const [webhooks, setWebhooks] = useState<Webhook[] | undefined>();
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<Webhook | undefined>();

  const load = async (): Promise<void> => {
    try {
      setWebhooks(await api.get<Webhook[]>('/v1/webhooks'));
    } catch (failure) {
      setError(failure);
    }
  };
  useEffect(() => {
    void load();
  }, []);

  return (
    <>
      <PageHeading>Webhooks</PageHeading>
      <ErrorMessage error={error} />
      {created?.secret !== undefined && <ShownOnce label={`The signing secret of webhook ${created.id}`} value={created.secret} onDone={() => setCreated(undefined)} />}
      {webhooks !== undefined && (
        <TableBox label="Webhook endpoints">
          <thead>
            <tr>
              <th scope="col">id</th>
              <th scope="col">url</th>
              <th scope="col">events</th>
              <th scope="col">description</th>
              <th scope="col">status</th>
              <th scope="col">failing since</th>
            </tr>
          </thead>
          <tbody>
            {webhooks.length === 0 && (
              <tr>
                <td colSpan={6}>No webhook endpoints.</td>
              </tr>
            )}
            {webhooks.map((webhook) => (
              <tr key={webhook.id}>
                <td>
                  <a href={href.webhook(webhook.id)}>{webhook.id}</a>
                </td>
                <td>
                  <a href={href.webhook(webhook.id)}>{webhook.url}</a>
                </td>
                <td>{webhook.events.join(', ')}</td>
                <td>{webhook.description ?? <span class="null">—</span>}</td>
                <td>
                  <span class={`state state-${webhook.status}`}>{webhook.status}</span>
                </td>
                <td>{shortTime(webhook.failingSince)}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      )}
      <NewWebhookForm
        onCreated={(webhook) => {
          setCreated(webhook);
          void load();
        }}
      />
    </>
  );
}

function NewWebhookForm({ onCreated }: { onCreated: (webhook: Webhook) => void }) {
  const { api, schema } = useSession();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const [description, setDescription] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const body: Record<string, unknown> = { url: url.trim(), events };
      if (description.trim() !== '') body.description = description.trim();
      const created = await api.call<Webhook>('/v1/webhooks', { method: 'POST', body });
      setUrl('');
      setEvents([]);
      setDescription('');
      onCreated(created.body);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const toggle = (type: string, on: boolean): void => setEvents(on ? [...events, type] : events.filter((other) => other !== type));
  return (
    <form class="panel" onSubmit={(event) => void submit(event)} noValidate aria-labelledby="new-webhook-title">
      <h2 id="new-webhook-title">New webhook</h2>
      <ErrorMessage error={error} />
      <div class="field">
        <label for="webhook-url">URL</label>
        <input id="webhook-url" type="url" value={url} placeholder="https://hooks.example.com/restgraph" onInput={(event) => setUrl(event.currentTarget.value)} />
      </div>
      <fieldset>
        <legend>Events</legend>
        <div class="checks">
          {['*', ...schema.eventTypes].map((type) => (
            <label key={type} class="check">
              <input type="checkbox" checked={events.includes(type)} onInput={(event) => toggle(type, event.currentTarget.checked)} /> {type === '*' ? 'every event (*)' : type}
            </label>
          ))}
        </div>
      </fieldset>
      <div class="field">
        <label for="webhook-description">Description</label>
        <input id="webhook-description" value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
      </div>
      <button type="submit" disabled={busy}>
        Create webhook
      </button>
    </form>
  );
}
