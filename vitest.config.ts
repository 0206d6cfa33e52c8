import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    pool: 'forks',
    // Memory tests call gc() to see what an upload leaves held, not what awaits collection.
    execArgv: ['--expose-gc'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
