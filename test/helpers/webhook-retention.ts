import { expect } from 'vitest';
import type { Running } from './cli-process.js';
import { webhookCli, type WebhookCli } from './webhook-cli.js';
import { waitUntil, type DeliveryView, type WebhookBody } from './webhook-receiver.js';

/**
 * For the webhook tests over time (test/webhooks-retention.test.ts, webhooks-feeder-position.test.ts,
 * webhooks-settings.test.ts): `restgraph serve` as a child process, one immediate retry then failed
 * (failed deliveries come quickly), and helpers bound to a test's `cli`.
 */

// Each test has its own folder, database, servers and receivers: the tests run concurrently.
export const retentionTest = webhookCli('restgraph-webhooks-retention-', {
  RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  RESTGRAPH_WEBHOOK_RETRY_SCHEDULE: '0',
  RESTGRAPH_WEBHOOK_TIMEOUT_MS: '1000',
});

/** The test's `cli`, with the helpers below bound to it. */
export function helpers(cli: WebhookCli) {
  const { call, deliveries, db } = cli;
  async function register(base: string, url: string, events: string[]): Promise<WebhookBody & { secret: string }> {
    const created = await call(base, 'POST', '/v1/webhooks', { url, events });
    expect(created.status).toBe(201);
    return created.json as WebhookBody & { secret: string };
  }

  async function createUser(base: string, name: string): Promise<number> {
    const response = await call(base, 'POST', '/users', { name });
    expect(response.status).toBe(201);
    return (response.json as { id: number }).id;
  }

  /** Waits until the webhook's deliveries satisfy `condition`; resolves to them. */
  async function deliveriesWhen(base: string, id: number, condition: (ds: DeliveryView[]) => boolean, what: string, timeoutMs = 20_000): Promise<DeliveryView[]> {
    let last: DeliveryView[] = [];
    await waitUntil(
      async () => condition((last = await deliveries(base, id))),
      () => `${what} (last seen: ${JSON.stringify(last.map((d) => [d.id, d.eventId, d.status, d.attempts]))})`,
      timeoutMs,
    );
    return last;
  }

  const count = async (sql: string, parameters: readonly unknown[] = []): Promise<number> => Number((await db().query<{ n: number }>(sql, parameters))[0]?.n);
  const lastEventId = async (): Promise<number> => (await db().query<{ id: number | null }>('select max("id") as "id" from "_restgraph_events"'))[0]?.id ?? 0;
  const savedCursor = async (): Promise<number | undefined> => {
    const row = (await db().query<{ value: string }>('select "value" from "_restgraph_state" where "key" = ?', ['webhooks.cursor']))[0];
    return row === undefined ? undefined : Number(row.value);
  };
  return { ...cli, register, createUser, deliveriesWhen, count, lastEventId, savedCursor };
}

/** Stops `restgraph serve` with SIGTERM; it exits 0. */
export async function stop(running: Running): Promise<void> {
  running.child.kill('SIGTERM');
  expect(await running.exited).toEqual({ code: 0, signal: null });
}
