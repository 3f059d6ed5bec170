import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse as LightResponse } from 'fastify';
import { buildApp } from '../../src/app/build-app.js';
import type { RestgraphOptions } from '../../src/app/app-options.js';
import type { OpenApiDocument } from '../../src/openapi/openapi-types.js';
import { afterAll } from 'vitest';
import { ResponseConformance } from './openapi-conformance.js';
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
  /** The OpenAPI check of every response, after {@link checkResponsesAgainstOpenApi}. */
  conformance: ResponseConformance | undefined;
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
  const conformance = openApiChecks ? await checkEveryResponse(app) : undefined;
  return {
    app,
    db,
    logs,
    conformance,
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

let openApiChecks = false;

/**
 * Opt-in for a test file (call it at the top level): every response `app.inject()` gives in the apps
 * {@link startTestApp} starts from then on is checked against the OpenAPI documents the app serves
 * (`/openapi.json` and `/<version>/openapi.json`); a response that does not conform (status not
 * documented for the operation, body not matching its schema, content type or a required header
 * missing) makes that `inject` call throw, failing the test that made the request.
 */
export function checkResponsesAgainstOpenApi(): void {
  openApiChecks = true;
  // For this file only: the next file a worker runs (vitest.config.ts: isolate false) starts unchecked.
  afterAll(() => {
    openApiChecks = false;
  });
}

/** Wraps `app.inject` (after {@link actAsAdmin}) with the OpenAPI conformance check. */
export async function checkEveryResponse(app: FastifyInstance): Promise<ResponseConformance> {
  const inject = app.inject.bind(app) as (request: InjectOptions) => Promise<LightResponse>;
  const fetchJson = async <T>(url: string): Promise<T> => json<T>(await inject({ method: 'GET', url, headers: { authorization: '' } }));
  const { versions } = await fetchJson<{ versions: string[] }>('/');
  const documents = [{ prefix: '', document: await fetchJson<OpenApiDocument>('/openapi.json') }];
  for (const version of versions) documents.push({ prefix: `/${version}`, document: await fetchJson<OpenApiDocument>(`/${version}/openapi.json`) });
  const conformance = new ResponseConformance(documents);
  const checked = async (request: InjectOptions): Promise<LightResponse> => {
    const response = await inject(request);
    const problems = conformance.check({
      method: response.raw.req.method ?? 'GET',
      url: response.raw.req.url ?? '/',
      status: response.statusCode,
      headers: response.headers,
      body: response.body,
    });
    if (problems.length > 0) throw new Error(`The response does not conform to the OpenAPI document:\n${problems.join('\n')}`);
    return response;
  };
  Object.defineProperty(app, 'inject', { value: checked });
  return conformance;
}

/** Parses a JSON response body; the type argument states what the test expects it to hold. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- a typed parse at the test edge
export function json<T = unknown>(response: { body: string }): T {
  return JSON.parse(response.body) as T;
}
