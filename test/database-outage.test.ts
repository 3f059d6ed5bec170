import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { postgresOutage, sqliteLockOutage } from '../chaos/scenarios/database-outage.js';
import type { ChaosContext } from '../chaos/scenario.js';
import { TEST_DIALECT } from './helpers/test-database.js';

/**
 * Losing the database under a running server (the built server as a child process, a webhook
 * registered, writes flowing): the chaos scenarios of chaos/scenarios/database-outage.ts in their
 * short version, as `npm run chaos -- --short` runs them, so that `npm test` alone covers the
 * outage on each database. Each uses a database of its own and only ever cuts off that one.
 */

const context: ChaosContext = { short: true, seed: 0, root: join(import.meta.dirname, '..'), log: () => undefined };

describe.skipIf(TEST_DIALECT !== 'postgres')('PostgreSQL refuses and drops connections for 2 s while writes flow and a webhook exists', () => {
  it('the process stays up; 503 database-unavailable with Retry-After (REST, GraphQL) and /readyz 503 meanwhile, /healthz 200; it recovers by itself; every acknowledged write, its event and its delivery are there', async () => {
    const result = await postgresOutage(context);
    expect(result.passed, result.detail).toBe(true);
  }, 90_000);
});

describe.skipIf(TEST_DIALECT !== 'sqlite')('another process holds the SQLite write lock 3 s past the lock timeout while writes flow and a webhook exists', () => {
  it('the process stays up; writes answer 503 database-unavailable with Retry-After, reads go on, /healthz never waits; it recovers by itself; every acknowledged write, its event and its delivery are there', async () => {
    const result = await sqliteLockOutage(context);
    expect(result.passed, result.detail).toBe(true);
  }, 90_000);
});
