import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * The unit tier: no child process, no dist/, no whole run. piscina's threads load the
 * worker entry from src/ (backend/local/worker-pool.ts), so `npm run test:unit` builds nothing.
 * Sorted by globs rather than by moving files: most folders hold all three tiers, and moving
 * some 190 files would rewrite every relative import in them for no change of what they test.
 */
const kUnit = [
  'test/architecture/**/*.test.ts',
  'test/backend/{knowledge-sink,module-batches,module-signal}.test.ts',
  'test/batch/batch-journal.test.ts',
  'test/bullmq/{names,reply-schema,signing}.test.ts',
  'test/cache/{task-key,cache-store}.test.ts',
  'test/cli/{progress-bar-burst,progress-bar}.test.ts',
  'test/core/**/*.test.ts',
  'test/csv/**/*.test.ts',
  'test/files/**/*.test.ts',
  'test/engine/{attempt-line-text,attempt-planner,checkpointer,edit-merge,edit-merge.property,in-flight,interrupt,job-reattach,journal,outcome-sink,prepare-session,run-outcome,run-stop,session-defaults,session-diagnostics,usage-writer}.test.ts',
  'test/executors/{agent-settings,claude-args,claude-stream,codex-args,codex-stream,openai-answer,openai-contract,openai-errors,openai-prompt,openai-role-check,openai-usage,openai,reply-rules}.test.ts',
  'test/graph/**/*.test.ts',
  'test/helpers/**/*.test.ts',
  'test/hostile/text-safety.test.ts',
  'test/interactive/**/*.test.ts',
  'test/knowledge/{artifact-registry,attempt-lines,exploration-cache,known-files,usage-cost,usage-file,wave-digests}.test.ts',
  'test/options/agent-settings-check.test.ts',
  'test/pipelines/{challenger-rule,decompose,lifecycle,pipeline,settings-reader}.test.ts',
  'test/reliability/journal-errors.test.ts',
  'test/report/{report-data,wave-contexts}.test.ts',
  'test/schema/**/*.test.ts',
  'test/text/**/*.test.ts',
];

/**
 * The end-to-end tier: the CLI spawned from dist/, the real agent CLIs, a real redis-server, Chromium, the real
 * model (test/model, test/batch), npm pack. Every file not in a list is integration:
 * runSession or main() in-process, commands run through the launcher process of dist/.
 */
const kE2e = [
  'test/agents/**/*.test.ts',
  'test/backend/launcher.test.ts',
  'test/batch/**/*.test.ts',
  'test/bullmq/**/*.test.ts',
  'test/cli/{bin,global-install,readme-examples,run-report,status-after-kill,status}.test.ts',
  'test/e2e/**/*.test.ts',
  'test/engine/{attempts-log,edit-during-run,lock-owner,lock-race,lock,resume,stale-temporaries,touch-during-run,two-tasks-files}.test.ts',
  'test/executors/{command,escaped-processes}.test.ts',
  'test/model/**/*.test.ts',
  'test/reliability/{cache-kill,cache-prune-kill,crash-loop,edit-kill,escaped-commands,full-disk,leftover-commands,lifecycle-kill,lost-output,read-only,signals,task-files-unwritable}.test.ts',
  'test/report/{hostile-report,report-page,run-report,serve-load,serve-requests,serve}.test.ts',
];

/** Builds dist/ first: the CLI tests spawn dist/cli/bin.js, and commands run in dist/'s launcher process. */
const kBuildDist = ['./test/helpers/build-dist.ts'];

export default defineConfig({
  test: {
    // `npm test` runs the three; `npm run test:unit` the first alone.
    projects: [
      { extends: true, test: { name: 'unit', include: kUnit } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...kUnit, ...kE2e], globalSetup: kBuildDist } },
      { extends: true, test: { name: 'e2e', include: kE2e, exclude: kUnit, globalSetup: kBuildDist } },
    ],
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
