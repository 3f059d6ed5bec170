import { expect, test } from 'vitest';
import { freePort, killAll, startCli, waitReady, type Running } from './cli-process.js';
import { TEST_ADMIN_TOKEN, tempDir } from './test-app.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import { waitUntil, type DeliveryView, type WebhookReceiver } from './webhook-receiver.js';

/**
 * `it` whose tests get `cli`: `restgraph serve` as a child process on a new database of the suite's
 * kind (SQLite file or PostgreSQL schema), for webhook tests that kill and restart the server. Each
 * test has its own folder, database, servers and receivers (stopped when it ends), so tests can run
 * concurrently (`describe.concurrent`).
 */
export function webhookCli(prefix: string, env: Record<string, string>) {
  return test.extend<{ cli: WebhookCli }>({
    // eslint-disable-next-line no-empty-pattern -- vitest reads the fixtures a fixture needs from this pattern
    cli: async ({}, use) => {
      const dir = tempDir(prefix);
      const database = await createTestDatabase(dir.path, 'webhooks');
      const cli = webhookCliIn(dir.path, database, env);
      try {
        await use(cli);
      } finally {
        await killAll(cli.children);
        for (const receiver of cli.receivers) await receiver.close();
        await database.drop();
        dir.cleanup();
      }
    },
  });
}

/**
 * The settings of the webhook crash tests (test/webhooks-durability-*.test.ts): one-second retries,
 * and short attempts with a short lease margin, so that a lease left by a killed attempt expires
 * soon (timeout + margin: 2 s, instead of 6 s with the default 5 s margin). The receivers of
 * these tests answer within milliseconds: a second is ample to record an outcome.
 */
export const CRASH_TEST_ENV: Record<string, string> = {
  RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  RESTGRAPH_WEBHOOK_RETRY_SCHEDULE: '1,1,1',
  RESTGRAPH_WEBHOOK_TIMEOUT_MS: '1000',
  RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS: '1000',
};

export type WebhookCli = ReturnType<typeof webhookCliIn>;

function webhookCliIn(folder: string, database: TestDatabase, env: Record<string, string>) {
  const children: Running[] = [];
  const receivers: WebhookReceiver[] = [];
  /** The test's database, to read (or, with the server stopped, change) what the server stored. */
  const db = (): TestDatabase => database;

  /** Starts `restgraph serve` (admin token, then `env`, then `extra`) on `port`, without waiting. */
  const spawn = (port: number, extra: Record<string, string> = {}): Running =>
    startCli(folder, ['serve'], { DATABASE_URL: database.url, PORT: String(port), RESTGRAPH_ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...env, ...extra }, children);

  /** Starts `restgraph serve` and waits until it is ready. */
  async function serve(extra: Record<string, string> = {}): Promise<{ running: Running; base: string }> {
    const port = await freePort();
    const running = spawn(port, extra);
    await waitReady(running, port);
    return { running, base: `http://127.0.0.1:${port}` };
  }

  /** One request with the admin token; the JSON body, if any. */
  async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
  }

  async function deliveries(base: string, id: number): Promise<DeliveryView[]> {
    const response = await call(base, 'GET', `/v1/webhooks/${id}/deliveries`);
    expect(response.status).toBe(200);
    return response.json as DeliveryView[];
  }

  /** Waits until the webhook has `count` deliveries, every one succeeded; resolves to them (newest first). */
  async function allSucceeded(base: string, id: number, count: number): Promise<DeliveryView[]> {
    let last: DeliveryView[] = [];
    await waitUntil(
      async () => (last = await deliveries(base, id)).length === count && last.every((d) => d.status === 'succeeded'),
      () => `every delivery to succeed (${JSON.stringify(last.map((d) => [d.eventId, d.status, d.attempts]))})`,
      45_000,
    );
    return last;
  }

  /** Every event in the outbox, read from the database. */
  const outbox = (): Promise<{ id: number; type: string; recordId: number }[]> =>
    database.query('select "id", "type", "recordId" from "_restgraph_events" order by "id"');

  async function kill(running: Running): Promise<void> {
    running.child.kill('SIGKILL');
    expect(await running.exited).toEqual({ code: null, signal: 'SIGKILL' });
  }

  return { children, receivers, db, spawn, serve, call, deliveries, allSucceeded, outbox, kill };
}
