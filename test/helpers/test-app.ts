import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app/build-app.js';
import type { RestgraphOptions } from '../../src/app/app-options.js';

/** A fresh folder under the OS temp dir, removed by the returned cleanup. */
export function tempDir(prefix = 'restgraph-test-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

export interface TestApp {
  app: FastifyInstance;
  /** The SQLite file behind the app. */
  dbFile: string;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  close: () => Promise<void>;
}

/**
 * Builds the app on a real SQLite file in a temp folder (the built-in example schema unless
 * `options.schema` says otherwise), capturing its JSON log lines.
 */
export async function startTestApp(options: RestgraphOptions = {}): Promise<TestApp> {
  const dir = tempDir();
  const dbFile = join(dir.path, 'test.db');
  const logs: Record<string, unknown>[] = [];
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  const app = await buildApp({ databaseUrl: `sqlite:${dbFile}`, logDestination, ...options });
  return {
    app,
    dbFile,
    logs,
    close: async () => {
      await app.close();
      dir.cleanup();
    },
  };
}

/** Parses a JSON response body; the type argument states what the test expects it to hold. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- a typed parse at the test edge
export function json<T = unknown>(response: { body: string }): T {
  return JSON.parse(response.body) as T;
}
