/** Why a run stopped before every task finished. */
export type StopReason =
  /** --halt: too many tasks failed. */
  | 'halt'
  /** Nothing could start, yet tasks were left. */
  | 'stall'
  /** A person saved tasks.csv during the run in a form that cannot be merged (gone, not CSV, a required column lost). */
  | 'edited'
  /** Ctrl-C or SIGTERM. */
  | 'signal'
  /** The session folder could not be written (read-only, disk full). */
  | 'io';
