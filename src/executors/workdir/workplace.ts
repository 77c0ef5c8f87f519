import type { AttemptOutcome } from '../types.js';

/** The folder one attempt works in, and what is done with it once the attempt ended. */
export interface Workplace {
  /** The folder (absolute): the command's cwd, the agent's -C. */
  dir: string;
  /** What making it had to say (a replaced branch): notes of the attempt. */
  notes: string[];
  /** Takes the attempt's outcome, records what the folder holds (a worktree's changes) and puts the folder away. */
  finish(outcome: AttemptOutcome): Promise<AttemptOutcome>;
}
