#!/usr/bin/env node
// The PostgreSQL half of `npm test`: runs the whole behavioural suite again with
// RESTGRAPH_TEST_DB=postgres, each test on a schema of its own in the database that
// RESTGRAPH_TEST_POSTGRES_URL names (default postgres://postgres@127.0.0.1:5432/test).
//
// When that server cannot be reached, the run is skipped with a loud message, except under
// CI=true, where it fails: CI always tests both databases.
//
// `--both` runs the suite on SQLite and on PostgreSQL in one vitest run (`npm test` runs the two
// passes one after the other instead)
// (RESTGRAPH_TEST_DB=both: two projects sharing the workers, see vitest.config.ts); when
// PostgreSQL cannot be reached outside CI, it runs the SQLite pass alone.
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

const both = process.argv.includes('--both');
const vitestArgs = process.argv.slice(2).filter((arg) => arg !== '--both');
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const runVitest = (dialect) =>
  spawnSync(process.execPath, [vitest, 'run', ...vitestArgs], { stdio: 'inherit', env: { ...process.env, RESTGRAPH_TEST_DB: dialect } }).status ?? 1;

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
  process.exit(both ? runVitest('sqlite') : 0);
}

process.stdout.write(both ? `\nThe suite on SQLite and on PostgreSQL (${shown}):\n` : `\nThe suite again, on PostgreSQL (${shown}):\n`);
process.exit(runVitest(both ? 'both' : 'postgres'));
