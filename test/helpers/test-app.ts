import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app/build-app.js';
import type { RestgraphOptions } from '../../src/app/app-options.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

/** A fresh folder under the OS temp dir, removed by the returned cleanup. */
export function tempDir(prefix = 'restgraph-test-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** A log destination for an app that keeps every JSON line it writes, parsed, in `logs`. */
export function captureLogs(): { logs: Record<string, unknown>[]; logDestination: Writable } {
  const logs: Record<string, unknown>[] = [];
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logs, logDestination };
}

/** A log destination that drops everything. */
export function discardLogs(): Writable {
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
}

/** The admin token every test app accepts. */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestApp {
  app: FastifyInstance;
  /** The database behind the app (the suite's: SQLite or PostgreSQL). */
  db: TestDatabase;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  close: () => Promise<void>;
}

/**
 * Builds the app on a new database of the suite's kind: a real SQLite file in a temp folder, or a
 * PostgreSQL schema of its own (the built-in example schema unless
 * `options.schema` says otherwise), capturing its JSON log lines.
 *
 * Its `inject` sends `Authorization: Bearer <TEST_ADMIN_TOKEN>` unless the request names its own
 * authorization header; naming it as '' sends none (anonymous).
 */
export async function startTestApp(options: RestgraphOptions = {}): Promise<TestApp> {
  const dir = tempDir();
  const db = await createTestDatabase(dir.path);
  const { logs, logDestination } = captureLogs();
  const app = actAsAdmin(await buildApp({ databaseUrl: db.url, logDestination, adminToken: TEST_ADMIN_TOKEN, ...options }));
  return {
    app,
    db,
    logs,
    close: async () => {
      await app.close();
      await db.drop();
      dir.cleanup();
    },
  };
}

/**
 * Makes `app.inject` send `Authorization: Bearer <TEST_ADMIN_TOKEN>` unless a request names its own
 * authorization header ('' sends none). The app must have been built with that admin token.
 */
export function actAsAdmin(app: FastifyInstance): FastifyInstance {
  const inject = app.inject.bind(app);
  const injectAsAdmin = (request: InjectOptions) => {
    const headers: Record<string, string> = {};
    let named = false;
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      if (name.toLowerCase() === 'authorization') {
        named = true;
        if (value === '' || value === undefined) continue;
      }
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    if (!named) headers.authorization = `Bearer ${TEST_ADMIN_TOKEN}`;
    return inject({ ...request, headers });
  };
  Object.defineProperty(app, 'inject', { value: injectAsAdmin });
  return app;
}

/** Parses a JSON response body; the type argument states what the test expects it to hold. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- a typed parse at the test edge
export function json<T = unknown>(response: { body: string }): T {
  return JSON.parse(response.body) as T;
}
