import { afterEach, beforeEach, expect } from 'vitest';
import { freePort, killAll, startCli, waitReady, type Running } from './cli-process.js';
import { TEST_ADMIN_TOKEN, tempDir } from './test-app.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import type { DeliveryView, WebhookReceiver } from './webhook-receiver.js';

/**
 * `restgraph serve` as a child process on a new database of the suite's kind per test (SQLite file or PostgreSQL schema),
 * for webhook tests that kill and restart the server. Call at the top level of a test file: it
 * registers the hooks that give each test its folder and stop its servers and receivers.
 */
export function webhookCli(prefix: string, env: Record<string, string>) {
  let dir: ReturnType<typeof tempDir>;
  let database: TestDatabase;
  let children: Running[] = [];
  const receivers: WebhookReceiver[] = [];
  beforeEach(async () => {
    dir = tempDir(prefix);
    database = await createTestDatabase(dir.path, 'webhooks');
    children = [];
    receivers.length = 0;
  });
  afterEach(async () => {
    await killAll(children);
    for (const receiver of receivers) await receiver.close();
    await database.drop();
    dir.cleanup();
  });
  /** The test's database, to read (or, with the server stopped, change) what the server stored. */
  const db = (): TestDatabase => database;

  /** Starts `restgraph serve` (admin token, then `env`, then `extra`) on `port`, without waiting. */
  const spawn = (port: number, extra: Record<string, string> = {}): Running =>
    startCli(dir.path, ['serve'], { DATABASE_URL: database.url, PORT: String(port), RESTGRAPH_ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...env, ...extra }, children);

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

  return { receivers, db, spawn, serve, call, deliveries, outbox, kill };
}
