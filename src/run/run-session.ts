import type { RunSummary } from '../events/events.js';
import { SessionRun, type RunReport, type RunReportFactory, type RunSessionOptions } from './session-run.js';

export type { RunReport, RunReportFactory, RunSessionOptions };

/**
 * Runs every pending task of a session and resolves with a summary. Holds the session
 * lock throughout; every state change is journaled before it is shown in tasks.csv, so
 * a crash at any instant loses nothing the engine had accepted. The run's phases are
 * SessionRun's: prepare, open, drain, finish.
 */
export async function runSession(path: string, options: RunSessionOptions = {}): Promise<RunSummary> {
  const run = await SessionRun.prepare(path, options);
  try {
    await run.open();
    return run.finish(await run.drain());
  } finally {
    run.release();
  }
}
