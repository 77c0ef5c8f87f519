/** Why a run stopped before every task finished. */
export type StopReason =
  /** --halt: too many tasks failed. */
  | 'halt'
  /** Nothing could start, yet tasks were left. */
  | 'stall'
  /** A person saved tasks.csv during the run. */
  | 'edited'
  /** Ctrl-C or SIGTERM. */
  | 'signal'
  /** The session folder could not be written (read-only, disk full). */
  | 'io';
