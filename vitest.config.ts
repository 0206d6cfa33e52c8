import { defineConfig } from 'vitest/config';
import { ENGINE_FLAGS } from './test/helpers/engine-flags.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    pool: 'forks',
    // Memory tests call gc() to see what an upload leaves held, not what awaits collection.
    execArgv: ['--expose-gc', ...ENGINE_FLAGS],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
