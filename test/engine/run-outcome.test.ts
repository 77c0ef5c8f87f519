import { describe, expect, test } from 'vitest';
import { WaveError } from '../../src/errors.js';
import { runOutcome, unmergeableStopReason, writeStopReason, type RunFacts } from '../../src/run/run-outcome.js';

const kPath = 'my-session';
const kShown = 'my-session/tasks.csv';
const kHalted = 'Halted: 2 task(s) failed (limit 2); no new tasks were started';
const kGentle = 'Interrupted: no new task was started; running tasks were let finish and recorded. Run `csv-wave resume my-session` to go on.';
const kTakenBack = 'Interrupted: no new task was started; the 1 running task(s) (a) were stopped at once and put back to pending. Run `csv-wave resume my-session` to go on.';
const kEdited = unmergeableStopReason(
  kShown,
  kPath,
  new WaveError('CSV_PARSE', 'CSV parse error: unclosed quote', { violations: [{ line: 4, message: 'CSV parse error: unclosed quote' }] }),
);
const kProblem = 'EROFS: read-only file system';

/** A run that went to its end with every task completed, tasks.csv showing them. */
function facts(changes: Partial<RunFacts>): RunFacts {
  return {
    ended: { stopped: undefined, reason: '' },
    interrupted: undefined,
    shown: true,
    unmergeable: undefined,
    writeProblem: undefined,
    journalComplete: true,
    failedOrBlocked: false,
    displayPath: kShown,
    path: kPath,
    ...changes,
  };
}

describe('runOutcome: the final {stopped, reason, exitCode} from the facts of a run', () => {
  test.each<[string, Partial<RunFacts>, { stopped: string | undefined; reason: string; exitCode: number }]>([
    ['every task completed', {}, { stopped: undefined, reason: '', exitCode: 0 }],
    ['a task failed', { failedOrBlocked: true }, { stopped: undefined, reason: '', exitCode: 1 }],
    ['halted', { ended: { stopped: 'halt', reason: kHalted } }, { stopped: 'halt', reason: kHalted, exitCode: 1 }],
    [
      'a signal that took nothing back keeps its first words',
      { ended: { stopped: 'signal', reason: kGentle } },
      { stopped: 'signal', reason: kGentle, exitCode: 1 },
    ],
    [
      'a signal that took tasks back names them',
      { ended: { stopped: 'signal', reason: kGentle }, interrupted: kTakenBack },
      { stopped: 'signal', reason: kTakenBack, exitCode: 1 },
    ],
    [
      'tasks taken back after another stop came first: that stop stands',
      { ended: { stopped: 'halt', reason: kHalted }, interrupted: kTakenBack },
      { stopped: 'halt', reason: kHalted, exitCode: 1 },
    ],
    [
      'a save that could not be merged during the run',
      { ended: { stopped: 'edited', reason: kEdited }, shown: false, unmergeable: kEdited },
      { stopped: 'edited', reason: kEdited, exitCode: 3 },
    ],
    [
      'a save that cannot be merged found at the last rewrite',
      { shown: false, unmergeable: kEdited },
      { stopped: 'edited', reason: kEdited, exitCode: 3 },
    ],
    [
      'a save that cannot be merged found at the last rewrite of a halted run adds to its reason',
      { ended: { stopped: 'halt', reason: kHalted }, shown: false, unmergeable: kEdited },
      { stopped: 'edited', reason: `${kHalted}\n${kEdited}`, exitCode: 3 },
    ],
    [
      'stopped by a failed write, tasks.csv written at last',
      { ended: { stopped: 'io', reason: writeStopReason(kProblem, kPath, false) }, writeProblem: kProblem },
      { stopped: 'io', reason: writeStopReason(kProblem, kPath, true), exitCode: 1 },
    ],
    [
      'stopped by a failed write, tasks.csv never written again, the journal complete',
      { ended: { stopped: 'io', reason: writeStopReason(kProblem, kPath, false) }, writeProblem: kProblem, shown: false },
      { stopped: 'io', reason: writeStopReason(kProblem, kPath, false, true), exitCode: 1 },
    ],
    [
      'stopped by a failed write, the journal incomplete too',
      {
        ended: { stopped: 'io', reason: writeStopReason(kProblem, kPath, false) },
        writeProblem: kProblem,
        shown: false,
        journalComplete: false,
      },
      { stopped: 'io', reason: writeStopReason(kProblem, kPath, false, false), exitCode: 1 },
    ],
    [
      'a write failed after a halt: the run says both, as io',
      { ended: { stopped: 'halt', reason: kHalted }, writeProblem: kProblem },
      { stopped: 'io', reason: `${kHalted}\n${writeStopReason(kProblem, kPath, true)}`, exitCode: 1 },
    ],
    [
      'a write failed after a signal: it stays a signal stop, with both reasons',
      { ended: { stopped: 'signal', reason: kGentle }, writeProblem: kProblem },
      { stopped: 'signal', reason: `${kGentle}\n${writeStopReason(kProblem, kPath, true)}`, exitCode: 1 },
    ],
    [
      'a write failed in a run that ended on its own: the reason is the write alone',
      { writeProblem: kProblem, shown: false },
      { stopped: 'io', reason: writeStopReason(kProblem, kPath, false), exitCode: 1 },
    ],
    [
      'an edit wins over a failed write',
      { ended: { stopped: 'edited', reason: kEdited }, shown: false, unmergeable: kEdited, writeProblem: kProblem },
      { stopped: 'edited', reason: kEdited, exitCode: 3 },
    ],
  ])('%s', (_name, changes, expected) => {
    expect(runOutcome(facts(changes))).toEqual(expected);
  });

  test('the reasons name the session as the user did and say what to do', () => {
    expect(kEdited).toMatch(/^my-session\/tasks\.csv:4: CSV parse error: unclosed quote\n/);
    expect(kEdited).toContain('my-session/tasks.csv was saved during the run in a form csv-wave cannot merge');
    expect(kEdited).toContain('wrote nothing over the file');
    expect(kEdited).toContain('Fix the file');
    expect(kEdited).toContain('csv-wave resume my-session');
    expect(writeStopReason(kProblem, kPath, false, false)).toContain('could not be written either');
    expect(writeStopReason(kProblem, kPath, false, true)).toContain('kept in the journal');
    expect(writeStopReason(kProblem, kPath, true)).toContain('tasks.csv shows every result');
  });
});
