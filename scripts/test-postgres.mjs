#!/usr/bin/env node
// The PostgreSQL half of `npm test`: runs the whole behavioural suite again with
// RESTGRAPH_TEST_DB=postgres, each test on a schema of its own in the database that
// RESTGRAPH_TEST_POSTGRES_URL names (default postgres://postgres@127.0.0.1:5432/test).
//
// First it checks that database (scripts/postgres-test-database.mjs): the server must answer, be
// PostgreSQL, and the database must hold nothing but the suite's own schemas. A database that
// fails the check is refused with one line saying why and how to fix it (exit 1). When the server
// cannot be reached, the run is skipped with a loud message, except under CI=true, where it
// fails: CI always tests both databases. (Exit status when skipped: 0, or
// RESTGRAPH_TEST_SKIPPED_STATUS when set, as scripts/test-all.mjs sets it to report the skip.)
//
// `--both` runs the suite on SQLite and on PostgreSQL in one vitest run (`npm test` runs the two
// passes one after the other instead)
// (RESTGRAPH_TEST_DB=both: two projects sharing the workers, see vitest.config.ts); when
// PostgreSQL cannot be reached outside CI, it runs the SQLite pass alone.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { shownUrl, testDatabaseProblem, testPostgresUrl } from './postgres-test-database.mjs';

const shown = shownUrl(testPostgresUrl());
const both = process.argv.includes('--both');
const vitestArgs = process.argv.slice(2).filter((arg) => arg !== '--both');
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const runVitest = (dialect) =>
  spawnSync(process.execPath, [vitest, 'run', ...vitestArgs], { stdio: 'inherit', env: { ...process.env, RESTGRAPH_TEST_DB: dialect } }).status ?? 1;

const problem = await testDatabaseProblem();
if (problem !== undefined) {
  const line = '='.repeat(78);
  process.stderr.write(`\n${line}\n${problem.message}\n`);
  if (problem.reachable) {
    process.stderr.write(`The PostgreSQL half of the test suite does not run there: failing.\n${line}\n`);
    process.exit(1);
  }
  if (process.env.CI === 'true') {
    process.stderr.write(`Under CI=true the PostgreSQL half of the suite must run: failing.\n${line}\n`);
    process.exit(1);
  }
  process.stderr.write(`SKIPPING the PostgreSQL half of the test suite.\n${line}\n\n`);
  process.exit(both ? runVitest('sqlite') : Number(process.env.RESTGRAPH_TEST_SKIPPED_STATUS ?? 0));
}

process.stdout.write(both ? `\nThe suite on SQLite and on PostgreSQL (${shown}):\n` : `\nThe suite again, on PostgreSQL (${shown}):\n`);
process.exit(runVitest(both ? 'both' : 'postgres'));
