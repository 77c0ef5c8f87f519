/**
 * A task's state as tasks.csv records it. The rules live in src/core/skip-cause.ts, the
 * one codec between an error cell and a typed skip cause; they are re-exported here for
 * the callers that read rows from disk.
 */
export {
  causeForDependents,
  kBlockedPrefix,
  kDependencyFailedError,
  kGcConvergedError,
  satisfiesDependents,
  skipCauseOf,
  skippedForFailure,
  statusOf,
} from '../core/skip-cause.js';
