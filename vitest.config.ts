import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ first: the CLI tests and piscina's workers run the compiled code.
    globalSetup: ['./test/helpers/build-dist.ts'],
    // Most test files spend their time waiting on child processes, worker threads and
    // timers, not on a core: vitest's default (cores - 1, so one file at a time on two
    // cores) leaves the cores idle. On a loaded 2-core box test/engine took 18% less time
    // with 3 workers than with 1 (BENCHMARKS.md).
    maxWorkers: availableParallelism() + 1,
    // The CPU time of each test, for the summary reporter's list of the slowest.
    setupFiles: ['./test/helpers/cpu-meter.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    // A costly property also has a deep variant (test/helpers/property-runs.ts): many more
    // cases than a loaded CI machine can run in the suite. `npm run test:deep` runs only them.
    tags: [{ name: 'deep', description: 'the deep variant of a property test: npm run test:deep' }],
    tagsFilter: ['!deep'],
    // Safety nets for a hung test, not measures: with several files at once on a loaded box
    // a slow test takes longer than it did alone (38 s seen for one with a 60 s limit).
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
