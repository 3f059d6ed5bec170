import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildConsoleIfStale } from '../scripts/console-build.mjs';
import { testDatabaseProblem } from '../scripts/postgres-test-database.mjs';

/**
 * Builds dist/ once before any test file runs: the CLI tests run `node dist/cli/main.js` as a
 * child process, and two files building at once could read each other's half-written output.
 * `tsc -b` (as `npm run build`) skips the compile when dist/ is already up to date with src/. The
 * admin console (dist/console/, for the /admin browser test) is built likewise only when console/
 * changed. On PostgreSQL (RESTGRAPH_TEST_DB=postgres or both) it first checks that the test
 * database answers and holds nothing but the suite's schemas (scripts/postgres-test-database.mjs).
 */
export default async function setup(): Promise<void> {
  if (process.env.RESTGRAPH_TEST_DB === 'postgres' || process.env.RESTGRAPH_TEST_DB === 'both') {
    const problem = await testDatabaseProblem();
    if (problem !== undefined) throw new Error(problem.message);
  }
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-b', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
    timeout: 180_000,
  });
  if (buildConsoleIfStale() !== 0) throw new Error('building the admin console (vite build --config console/vite.config.ts) failed');
}
