#!/usr/bin/env node
// The PostgreSQL half of `npm test`: runs the behavioural suite again with
// RESTGRAPH_TEST_DB=postgres, each test on a schema of its own in the database that
// RESTGRAPH_TEST_POSTGRES_URL names (default postgres://postgres@127.0.0.1:5432/test). The test
// files that cannot depend on the database (scripts/database-independent-tests.mjs: no module they
// load reads RESTGRAPH_TEST_DB) are left to the SQLite pass, where they ran already: they would run
// here exactly as there (RESTGRAPH_TEST_SKIP_DATABASE_INDEPENDENT=1, read by vitest.config.ts).
// Files named on the command line run whatever they depend on (`node scripts/test-postgres.mjs
// test/x.test.ts`, as `RESTGRAPH_TEST_DB=postgres npx vitest run test/x.test.ts`).
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
import { databaseIndependentTestFiles } from './database-independent-tests.mjs';
import { shownUrl, testDatabaseProblem, testPostgresUrl } from './postgres-test-database.mjs';

const shown = shownUrl(testPostgresUrl());
const both = process.argv.includes('--both');
const vitestArgs = process.argv.slice(2).filter((arg) => arg !== '--both');
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
/** The whole suite, as `npm test` runs it: no file filter (options only, such as --reporter=json). */
const wholeSuite = vitestArgs.every((arg) => arg.startsWith('-'));
const runVitest = (dialect) =>
  spawnSync(process.execPath, [vitest, 'run', ...vitestArgs], {
    stdio: 'inherit',
    env: { ...process.env, RESTGRAPH_TEST_DB: dialect, ...(wholeSuite ? { RESTGRAPH_TEST_SKIP_DATABASE_INDEPENDENT: '1' } : {}) },
  }).status ?? 1;

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

const leftOut = wholeSuite ? databaseIndependentTestFiles().length : 0;
const onSqliteOnly = leftOut === 0 ? '' : both ? `, the ${leftOut} files that do not depend on the database on SQLite only` : `, but for the ${leftOut} files that do not depend on the database (they run on SQLite)`;
process.stdout.write(both ? `\nThe suite on SQLite and on PostgreSQL (${shown})${onSqliteOnly}:\n` : `\nThe suite again, on PostgreSQL (${shown})${onSqliteOnly}:\n`);
process.exit(runVitest(both ? 'both' : 'postgres'));
