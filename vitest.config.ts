import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node resolves `graphql` to its CommonJS entry (the package has no "exports"), and so does
    // graphql-http's require(); Vite would pick index.mjs for our sources, giving two copies of
    // graphql-js ("Cannot use GraphQLSchema from another module or realm"). Use Node's choice.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // .only must never reach main: fail the run in CI when one slips through.
    allowOnly: !process.env.CI,
    pool: 'forks',
    // Two files per core: most tests wait on child processes, sockets, databases and timers, so
    // the cores stay busy (on a 2-core machine the suite took 303 s with 2 workers, 179 s with 4).
    maxWorkers: '200%',
    // graphql-jit's ES module build must see the same graphql-js as everything else (the alias above).
    server: { deps: { inline: ['graphql-jit'] } },
  },
});
