/**
 * Where a task of a run stands in the scheduling core: one state, documented per member
 * (listr2 `ListrTaskState` style). tasks.csv's status column is the file's view of it.
 */
export type TaskState =
  /** Waits on a dependency or a context source of this run that has not finished. */
  | 'waiting'
  /**
   * Waits on nothing else, but a dependency's artifacts wait for a validation or a fix
   * (core/gates.ts): it starts when their gate opens, and is skipped if they are rejected.
   */
  | 'gated'
  /** Waits on nothing of its own, but its wave is not open yet (schedule `waves`). */
  | 'held'
  /** In a ready queue: starts when a slot (or the interactive lane) is free. */
  | 'ready'
  /** An attempt is out: on the worker pool or in the interactive lane. */
  | 'running'
  /** An attempt failed in a way that is retried: the next one is due after a delay. */
  | 'retry-wait'
  /** Finished: completed, failed or skipped; its row holds the outcome. */
  | 'done';
