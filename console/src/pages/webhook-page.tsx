import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../context.js';
import { shortTime } from '../format.js';
import { ConfirmDialog, ErrorMessage, PageHeading, ShownOnce, TableBox } from '../ui.js';
import type { Delivery, Webhook } from './webhook-types.js';

/** How often the deliveries log is read again while the page is open. */
const REFRESH_MS = 1000;

/**
 * One webhook endpoint: pause, resume, rotate the secret (shown once), delete; and its deliveries,
 * each with every attempt (status, response code, duration, error) and a Retry button. The log is
 * read again every second while the page is open.
 */
export function WebhookPage({ id }: { id: string }) {
  const { api } = useSession();
  const path = `/v1/webhooks/${encodeURIComponent(id)}`;
  const [webhook, setWebhook] = useState<Webhook | undefined>();
  const [deliveries, setDeliveries] = useState<Delivery[] | undefined>();
  const [error, setError] = useState<unknown>();
  const [secret, setSecret] = useState<string | undefined>();
  const [confirm, setConfirm] = useState<'rotate' | 'delete' | undefined>();
  const [notice, setNotice] = useState('');

  const load = async (): Promise<void> => {
    try {
      const [endpoint, log] = await Promise.all([api.get<Webhook>(path), api.get<Delivery[]>(`${path}/deliveries`)]);
      setWebhook(endpoint);
      setDeliveries(log);
      setError(undefined);
    } catch (failure) {
      setError(failure);
    }
  };
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [path]);

  const act = async (what: () => Promise<void>, done: string): Promise<void> => {
    setConfirm(undefined);
    setError(undefined);
    setNotice('');
    try {
      await what();
      setNotice(done);
      await load();
    } catch (failure) {
      setError(failure);
    }
  };
  const post = (suffix: string) => async (): Promise<void> => {
    await api.call(`${path}/${suffix}`, { method: 'POST' });
  };
  const rotate = async (): Promise<void> => {
    const rotated = await api.call<Webhook>(`${path}/rotate-secret`, { method: 'POST' });
    setSecret(rotated.body.secret);
  };
  const remove = async (): Promise<void> => {
    setConfirm(undefined);
    try {
      await api.call(path, { method: 'DELETE' });
      location.hash = '#/webhooks';
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <>
      <p class="crumbs">
        <a href="#/webhooks">Webhooks</a> /
      </p>
      <PageHeading>Webhook {id}</PageHeading>
      <ErrorMessage error={error} />
      <p role="status" class="ok">
        {notice}
      </p>
      {secret !== undefined && <ShownOnce label={`The new signing secret of webhook ${id}`} value={secret} onDone={() => setSecret(undefined)} />}
      {webhook !== undefined && (
        <>
          <dl class="record">
            <div>
              <dt>url</dt>
              <dd>{webhook.url}</dd>
            </div>
            <div>
              <dt>events</dt>
              <dd>{webhook.events.join(', ')}</dd>
            </div>
            <div>
              <dt>description</dt>
              <dd>{webhook.description ?? <span class="null">—</span>}</dd>
            </div>
            <div>
              <dt>status</dt>
              <dd>
                <span class={`state state-${webhook.status}`}>{webhook.status}</span>
                {webhook.disabledReason !== null && ` (${webhook.disabledReason})`}
              </dd>
            </div>
            <div>
              <dt>failing since</dt>
              <dd>{shortTime(webhook.failingSince)}</dd>
            </div>
          </dl>
          <div class="actions">
            {webhook.status === 'active' ? (
              <button type="button" onClick={() => void act(post('pause'), 'Paused: deliveries queue up until it is resumed.')}>
                Pause
              </button>
            ) : (
              <button type="button" onClick={() => void act(post('resume'), 'Resumed.')}>
                Resume
              </button>
            )}
            <button type="button" onClick={() => setConfirm('rotate')}>
              Rotate secret
            </button>
            <button type="button" class="danger" onClick={() => setConfirm('delete')}>
              Delete
            </button>
          </div>
        </>
      )}
      <h2>Deliveries</h2>
      <p class="muted">The latest 100, newest first, each with every attempt, read again every second.</p>
      {deliveries !== undefined && deliveries.length === 0 && <p>No deliveries yet.</p>}
      {deliveries !== undefined && deliveries.length > 0 && (
        <TableBox label="Deliveries">
          <thead>
            <tr>
              <th scope="col">delivery</th>
              <th scope="col">event</th>
              <th scope="col">status</th>
              <th scope="col">attempts</th>
              <th scope="col">next attempt</th>
              <th scope="col">
                <span class="visually-hidden">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((delivery) => (
              <tr key={delivery.id} class="delivery">
                <td>{delivery.id}</td>
                <td>
                  {delivery.eventType} <span class="muted">#{delivery.eventId}</span>
                </td>
                <td>
                  <span class={`state state-${delivery.status}`}>{delivery.status}</span>
                </td>
                <td>
                  <ol class="attempts" aria-label={`Attempts of delivery ${delivery.id}`}>
                    {delivery.attemptLog.map((attempt) => (
                      <li key={attempt.id}>
                        {shortTime(attempt.attemptedAt)} · {attempt.responseStatus === null ? 'no response' : `HTTP ${attempt.responseStatus}`} · {attempt.durationMs} ms
                        {attempt.error !== null && <span class="attempt-error"> · {attempt.error}</span>}
                      </li>
                    ))}
                  </ol>
                </td>
                <td>{delivery.status === 'pending' ? shortTime(delivery.nextAttemptAt) : '—'}</td>
                <td>
                  <button
                    type="button"
                    aria-label={`Retry delivery ${delivery.id}`}
                    onClick={() => {
                      // The attempt is made just after the 202: look again soon rather than at the next refresh.
                      void act(post(`deliveries/${delivery.id}/retry`), `Delivery ${delivery.id} will be attempted again now.`).then(() => setTimeout(() => void load(), 300));
                    }}
                  >
                    Retry
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      )}
      {confirm === 'rotate' && (
        <ConfirmDialog title="Rotate the signing secret?" confirm="Rotate secret" onConfirm={() => void act(rotate, 'The secret was rotated.')} onCancel={() => setConfirm(undefined)}>
          <p>The current secret stops signing at once: the receiver must be given the new one, shown next.</p>
        </ConfirmDialog>
      )}
      {confirm === 'delete' && (
        <ConfirmDialog title={`Delete webhook ${id}?`} confirm="Delete webhook" onConfirm={() => void remove()} onCancel={() => setConfirm(undefined)}>
          <p>Its deliveries and their log go with it. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
