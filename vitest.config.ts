import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ first: the CLI tests and piscina's workers run the compiled code.
    globalSetup: ['./test/helpers/build-dist.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
