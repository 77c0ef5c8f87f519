import type { WaveError } from '../errors.js';
import type { RunSummary, StopReason } from '../events/events.js';

/** How a run stopped early (`stopped` undefined: it did not), and why, in words. */
export interface RunEnding {
  stopped: StopReason | undefined;
  reason: string;
}

/** What is known once every task of a run is back and the last rewrite of tasks.csv was tried. */
export interface RunFacts {
  /** How the scheduler ended, or the first stop asked for when the run ended on tasks taken back. */
  ended: RunEnding;
  /** The signal stop's own words once running tasks were taken back (see Interrupt); undefined if none was. */
  interrupted: string | undefined;
  /** The last rewrite of tasks.csv shows every result. */
  shown: boolean;
  /** Why a save of tasks.csv during the run could not be merged (unmergeableStopReason), if one could not. */
  unmergeable: string | undefined;
  /** What the session folder refused to write, if it ever did. */
  writeProblem: string | undefined;
  /** The journal was written in full when it was closed. */
  journalComplete: boolean;
  /** Some task failed, or was skipped because one did. */
  failedOrBlocked: boolean;
  /** tasks.csv as the user sees it (session.displayPath). */
  displayPath: string;
  /** The session as the user named it, for the commands the reasons suggest. */
  path: string;
}

/**
 * The run's final word, from the facts: what stopped it, why, and the exit code. A later
 * fact can only add to the first stop's reason, or make it more exact: tasks taken back
 * on a signal are named; a save that could not be merged found at the last rewrite, or a
 * session folder that could not be written, is told.
 */
export function runOutcome(facts: RunFacts): RunEnding & Pick<RunSummary, 'exitCode'> {
  let outcome = facts.ended;
  if (outcome.stopped === 'signal' && facts.interrupted !== undefined) {
    outcome = { stopped: 'signal', reason: facts.interrupted };
  }
  // A save that cannot be merged, found at the last rewrite: the last results stay in the
  // journal, and the run says so instead of ending as if tasks.csv showed them.
  if (facts.unmergeable !== undefined && outcome.stopped !== 'edited') {
    outcome = { stopped: 'edited', reason: joinReasons(outcome.reason, facts.unmergeable) };
  }
  if (facts.writeProblem !== undefined && outcome.stopped !== 'edited') {
    const why = writeStopReason(facts.writeProblem, facts.path, facts.shown, facts.journalComplete);
    const stoppedByWrite = outcome.reason === writeStopReason(facts.writeProblem, facts.path, false);
    outcome = {
      stopped: outcome.stopped === 'signal' ? 'signal' : 'io',
      reason: stoppedByWrite ? why : joinReasons(outcome.reason, why),
    };
  }
  const exitCode = outcome.stopped === 'edited' ? 3 : outcome.stopped || facts.failedOrBlocked ? 1 : 0;
  return { ...outcome, exitCode };
}

/**
 * Why a run stopped when a save of tasks.csv during it could not be merged (`problem`: the
 * file gone, not CSV, a required column lost), and what to do.
 */
export function unmergeableStopReason(displayPath: string, path: string, problem: WaveError): string {
  const lines = problem.violations?.slice(0, 5).map((violation) => `${displayPath}:${violation.line}: ${violation.message}`) ?? [];
  const what = lines.length > 0 ? lines.join('\n') : problem.message;
  return (
    `${what}\n` +
    `${displayPath} was saved during the run in a form csv-wave cannot merge, so it stopped starting tasks and wrote nothing over the file. ` +
    `Running tasks were let finish; their results are kept in the journal. ` +
    `Fix the file (or put back the copy you meant to save), then run \`csv-wave resume ${path}\`: it applies the journal to the file and goes on.`
  );
}

/** Why a run whose session folder could not be written stopped, and what to do. */
export function writeStopReason(problem: string, path: string, shownAtLast: boolean, journalComplete = true): string {
  if (shownAtLast) {
    return (
      `Stopped: csv-wave could not write to the session folder for a while (${problem}); no new task was started after that, ` +
      `and tasks.csv shows every result. Run \`csv-wave resume ${path}\` to go on.`
    );
  }
  const kept = journalComplete
    ? 'the results of the tasks that finished are kept in the journal (.csv-wave/journal.ndjson)'
    : 'the journal (.csv-wave/journal.ndjson) could not be written either, so the results of the last tasks to finish ' +
      'were lost: those tasks run again on resume';
  return (
    `Stopped: csv-wave cannot write to the session folder (${problem}). No new task was started; ${kept}. ` +
    `Make the folder writable again (or free some space) and run \`csv-wave resume ${path}\`: it applies the journal ` +
    `to tasks.csv and goes on.`
  );
}

function joinReasons(first: string, second: string): string {
  return first === '' ? second : `${first}\n${second}`;
}
