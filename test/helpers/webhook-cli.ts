import { expect, test } from 'vitest';
import { freePort, killAll, startCli, waitReady, type Running } from './cli-process.js';
import { TEST_ADMIN_TOKEN, tempDir } from './test-app.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import type { DeliveryView, WebhookReceiver } from './webhook-receiver.js';

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

  /** Every event in the outbox, read from the database. */
  const outbox = (): Promise<{ id: number; type: string; recordId: number }[]> =>
    database.query('select "id", "type", "recordId" from "_restgraph_events" order by "id"');

  async function kill(running: Running): Promise<void> {
    running.child.kill('SIGKILL');
    expect(await running.exited).toEqual({ code: null, signal: 'SIGKILL' });
  }

  return { children, receivers, db, spawn, serve, call, deliveries, outbox, kill };
}
