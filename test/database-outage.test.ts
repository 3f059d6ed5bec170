import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { finish, startProcess, type Running } from './helpers/cli-process.js';
import { TEST_DIALECT, TEST_POSTGRES_URL } from './helpers/test-database.js';

/**
 * Losing PostgreSQL under a running server (child process, webhook registered, writes flowing):
 * the chaos scenario chaos/database-outage.mjs, run as `npm run chaos` runs it. It makes a
 * database of its own and only ever refuses and terminates that database's connections.
 */

const ROOT = join(import.meta.dirname, '..');

interface ScenarioResult {
  name: string;
  passed: boolean;
  detail: string;
}

describe.skipIf(TEST_DIALECT !== 'postgres')('the database refuses and drops connections for 4 s while writes flow and a webhook exists', () => {
  it('the process stays up; 503 database-unavailable with Retry-After (REST, GraphQL) and /readyz 503 meanwhile; it recovers by itself; every acknowledged write, its event and its delivery are there', async () => {
    const children: Running[] = [];
    const running = startProcess(process.execPath, [join(ROOT, 'chaos', 'database-outage.mjs')], ROOT, { RESTGRAPH_TEST_POSTGRES_URL: TEST_POSTGRES_URL }, children);
    const finished = await finish(running, 110_000);
    expect(finished.stderr).toBe('');
    const result = JSON.parse(finished.stdout) as ScenarioResult;
    expect(result.passed, result.detail).toBe(true);
    expect(finished.code).toBe(0);
  }, 120_000);
});
