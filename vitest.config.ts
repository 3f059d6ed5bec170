import { createRequire } from 'node:module';
import { configDefaults, defineConfig } from 'vitest/config';
import { databaseIndependentTestFiles } from './scripts/database-independent-tests.mjs';

const require = createRequire(import.meta.url);

// RESTGRAPH_TEST_DB=both (as `node scripts/test-postgres.mjs --both` sets it when PostgreSQL answers)
// runs the suite on SQLite and on PostgreSQL in one run: the files of both passes share the workers,
// so one pass's slow files overlap the other's instead of each pass ending on its own slowest file.
const both = process.env.RESTGRAPH_TEST_DB === 'both';
// The PostgreSQL pass of `npm test` (scripts/test-postgres.mjs sets RESTGRAPH_TEST_SKIP_DATABASE_INDEPENDENT=1)
// leaves out the files that cannot depend on the database (scripts/database-independent-tests.mjs):
// they would run exactly as in the SQLite pass. `RESTGRAPH_TEST_DB=postgres npx vitest run …` runs them.
const leftOut = process.env.RESTGRAPH_TEST_SKIP_DATABASE_INDEPENDENT === '1' ? databaseIndependentTestFiles() : [];
const excludeOn = (name: 'sqlite' | 'postgres') => (name === 'postgres' && leftOut.length > 0 ? { exclude: [...configDefaults.exclude, ...leftOut] } : {});
const dialect = (name: 'sqlite' | 'postgres') => ({ extends: true as const, test: { name, env: { RESTGRAPH_TEST_DB: name }, ...excludeOn(name) } });

export default defineConfig({
  resolve: {
    // Node resolves `graphql` to its CommonJS entry (the package has no "exports"), and so does
    // graphql-http's require(); Vite would pick index.mjs for our sources, giving two copies of
    // graphql-js ("Cannot use GraphQLSchema from another module or realm"). Use Node's choice.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Modules transformed once are kept on disk (node_modules/.experimental-vitest-cache, keyed by
    // content, id and configuration) for the next run: a test file run alone starts about 0.8 s
    // sooner (transform 1.0 s -> 0.2 s, import 1.5 s -> 0.7 s). `npx vitest --clearCache` empties it.
    experimental: { fsModuleCache: true },
    globalSetup: ['test/global-setup.ts'],
    // From measured durations: in a full `npm test` on a 2-core machine that other work kept at a
    // load average of 12–17, tests that take under 3 s alone took up to 20–30 s (a file's tests run
    // concurrently, on four workers). Tests that run CLI child processes, and the few heavy ones,
    // set longer timeouts of their own (CLI_TEST_TIMEOUT_MS in test/helpers/cli-process.ts).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // .only must never reach main: fail the run in CI when one slips through.
    allowOnly: !process.env.CI,
    pool: 'forks',
    // A worker process runs its files one after the other in one module graph instead of a fresh
    // process per file: Fastify, GraphQL, Kysely and our sources load once per worker, not once per
    // file (the SQLite pass used 311 s of CPU with isolation, 214 s without). Files must leave no
    // state behind: each closes what it starts, and module-level switches of test helpers are
    // reset when the file ends (checkResponsesAgainstOpenApi).
    isolate: false,
    // Two files per core: most tests wait on child processes, sockets, databases and timers, so
    // the cores stay busy (on a 2-core machine the suite took 303 s with 2 workers, 179 s with 4).
    maxWorkers: '200%',
    // graphql-jit's ES module build must see the same graphql-js as everything else (the alias above).
    server: { deps: { inline: ['graphql-jit'] } },
    ...(both ? { projects: [dialect('sqlite'), dialect('postgres')] } : excludeOn(process.env.RESTGRAPH_TEST_DB === 'postgres' ? 'postgres' : 'sqlite')),
  },
});
