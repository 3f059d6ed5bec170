import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // .only must never reach main: fail the run in CI when one slips through.
    allowOnly: !process.env.CI,
    pool: 'forks',
  },
});
