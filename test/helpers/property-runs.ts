import { test } from 'vitest';

/**
 * How many cases a costly property tries (one whose every case starts processes): few enough
 * under CI that `npm test` passes on a loaded 2-core machine, more on a developer's, many
 * in `npm run test:deep`.
 */
export interface PropertyRuns {
  /** Cases under CI (`CI=true`), where four other jobs may share the two cores. */
  ci: number;
  /** Cases of `npm test` elsewhere. */
  local: number;
  /** Cases of the deep variant, which only `npm run test:deep` runs. */
  deep: number;
}

/** The vitest tag of the deep variants: vitest.config.ts leaves them out unless `--tags-filter=deep` asks for them. */
export const kDeepTag = 'deep';

/** Whether this is a CI run (the same test as kModelTestsRequired and kRunRedisTests). */
const kUnderCi = process.env['CI'] === 'true';

/**
 * Registers the property `name` twice: as a test of `npm test` at `runs.ci` or `runs.local`
 * cases, and as its deep variant at `runs.deep` cases, tagged `deep`. `body` gets the
 * number of cases to pass to fast-check's `numRuns`; `timeout` is the deep variant's own
 * safety net (its cases take far longer than the suite's default limit).
 */
export function propertyTest(name: string, runs: PropertyRuns, body: (numRuns: number) => void | Promise<void>, deepTimeout = 3_600_000): void {
  const size = kUnderCi ? runs.ci : runs.local;
  test(`${name} (${size} cases)`, () => body(size));
  test(`${name} (deep: ${runs.deep} cases)`, { tags: [kDeepTag], timeout: deepTimeout }, () => body(runs.deep));
}
