#!/usr/bin/env node
// The PostgreSQL half of `npm test`: runs the whole behavioural suite again with
// RESTGRAPH_TEST_DB=postgres, each test on a schema of its own in the database that
// RESTGRAPH_TEST_POSTGRES_URL names (default postgres://postgres@127.0.0.1:5432/test).
//
// When that server cannot be reached, the run is skipped with a loud message, except under
// CI=true, where it fails: CI always tests both databases.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const url = process.env.RESTGRAPH_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const shown = url.replace(/\/\/[^@/]*@/, '//');

async function reachable() {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const problem = await reachable();
if (problem !== undefined) {
  const line = '='.repeat(78);
  process.stderr.write(`\n${line}\nPostgreSQL at ${shown} is not reachable (${problem}).\n`);
  if (process.env.CI === 'true') {
    process.stderr.write(`Under CI=true the PostgreSQL half of the suite must run: failing.\n${line}\n`);
    process.exit(1);
  }
  process.stderr.write(
    `SKIPPING the PostgreSQL half of the test suite. Start PostgreSQL, or set\nRESTGRAPH_TEST_POSTGRES_URL, to run it.\n${line}\n\n`,
  );
  process.exit(0);
}

process.stdout.write(`\nThe suite again, on PostgreSQL (${shown}):\n`);
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const result = spawnSync(process.execPath, [vitest, 'run', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, RESTGRAPH_TEST_DB: 'postgres' },
});
process.exit(result.status ?? 1);
