import { expect, onTestFinished, test } from 'vitest';
import { freePort, killAll, startCli, waitReady, type Running } from './cli-process.js';
import { send, type Row } from './event-stream.js';
import { TEST_ADMIN_TOKEN, tempDir } from './test-app.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import { WebhookReceiver, type ReceivedRequest } from './webhook-receiver.js';

/**
 * For the scale-out test files (test/scale-out*.test.ts): several `restgraph serve` processes on
 * one PostgreSQL database. `scaleOutTest` gives each test a `cluster`: a folder and a database (a
 * schema of its own) of the test's own, on which it starts instances; they are killed, and the
 * database dropped, when the test ends.
 */
export const scaleOutTest = test.extend<{ cluster: Cluster }>({
  // eslint-disable-next-line no-empty-pattern -- vitest reads the fixtures a fixture needs from this pattern
  cluster: async ({}, use) => {
    const { cluster, close } = await newCluster();
    try {
      await use(cluster);
    } finally {
      await close();
    }
  },
});

/** A folder and a database of its own for instances; `close` kills them and drops the database. */
export async function newCluster(): Promise<{ cluster: Cluster; close: () => Promise<void> }> {
  const dir = tempDir('restgraph-scale-out-');
  const database = await createTestDatabase(dir.path, 'scale');
  const children: Running[] = [];
  const close = async (): Promise<void> => {
    await killAll(children);
    await database.drop();
    dir.cleanup();
  };
  return { cluster: clusterOn(dir.path, database, children), close };
}

export interface Instance {
  running: Running;
  base: string;
}

export type Cluster = ReturnType<typeof clusterOn>;

function clusterOn(folder: string, database: TestDatabase, children: Running[]) {
  /** Starts `restgraph serve` on the database, without waiting. */
  const spawn = (port: number, env: Record<string, string>): Running =>
    startCli(
      folder,
      ['serve'],
      { DATABASE_URL: database.url, PORT: String(port), RESTGRAPH_ADMIN_TOKEN: TEST_ADMIN_TOKEN, RESTGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
      children,
    );

  async function start(env: Record<string, string>): Promise<Instance> {
    const port = await freePort();
    const running = spawn(port, env);
    await waitReady(running, port);
    return { running, base: `http://127.0.0.1:${port}` };
  }

  /**
   * Starts `count` instances on the database, together (one of them migrates the empty database
   * while the others wait for it, as scale-out.test.ts's first test checks).
   */
  async function instances(count: number, env: Record<string, string> = {}): Promise<Instance[]> {
    return Promise.all(Array.from({ length: count }, () => start(env)));
  }

  return { database, folder, children, spawn, instances };
}

export async function create(base: string, name: string): Promise<Row> {
  const response = await send(base, 'POST', '/users', { name });
  expect(response.status, response.text).toBe(201);
  return response.json();
}

/** Runs `work` for 0..count-1 with at most `parallel` at a time. */
export async function pool(count: number, parallel: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** Each webhook-id once: the events the receiver got, and how many requests repeated one. */
export function distinct(requests: readonly ReceivedRequest[]): { ids: Set<string>; duplicates: number } {
  const ids = new Set<string>();
  let duplicates = 0;
  for (const request of requests) {
    const id = String(request.headers['webhook-id']);
    if (ids.has(id)) duplicates++;
    ids.add(id);
  }
  return { ids, duplicates };
}

/**
 * Three instances with a webhook registered (all `user.created` events) to a receiver of the test's
 * (closed when it ends). Retries every second; short attempts and lease margin: an attempt a kill
 * cuts short holds its endpoint's queue until its lease ends (2 s here, 15 s with the defaults)
 * before another instance makes it.
 */
export async function webhookTrio(cluster: Cluster): Promise<{ hooks: WebhookReceiver; trio: [Instance, Instance, Instance] }> {
  const hooks = await WebhookReceiver.start();
  onTestFinished(() => hooks.close());
  const [a, b, c] = await cluster.instances(3, { RESTGRAPH_WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1', RESTGRAPH_WEBHOOK_TIMEOUT_MS: '1000', RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS: '1000' });
  if (a === undefined || b === undefined || c === undefined) throw new Error('three instances');
  const registered = await send(a.base, 'POST', '/v1/webhooks', { url: hooks.url('/hook'), events: ['user.created'] });
  expect(registered.status, registered.text).toBe(201);
  hooks.verifyWith('/hook', registered.json<{ secret: string }>().secret);
  return { hooks, trio: [a, b, c] };
}
