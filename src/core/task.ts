/**
 * The domain record of a task: what the engine, the pipelines and the reports work on.
 * tasks.csv is one way to store it (src/csv/ reads and writes it); nothing here knows files.
 */

/** The fields of a task that every session has, in the order of the seed's tasks.csv columns (DESIGN.md section 2). */
export const kTaskColumns = [
  'id',
  'title',
  'description',
  'role',
  'angle',
  'gc_round',
  'deps',
  'context_from',
  'exec_mode',
  'wave',
  'status',
  'findings',
  'gc_signal',
  'severity_summary',
  'error',
] as const;

/** Optional input field that may follow the seed's columns. */
export const kPriorityColumn = 'priority';
/**
 * Optional input: the branches of its routing dependencies a task is on (`;`-separated,
 * `orchestrated;architecture`). A task on no branch (empty) runs whatever they route.
 */
export const kBranchColumn = 'branch';
/** Optional output: the branch a routing task's result chose (`direct`); its dependents on other branches are skipped. */
export const kRouteColumn = 'route';

/** The columns csv-wave knows beyond the seed's, in the order a run adds them: each only when some row fills it. */
export const kOptionalColumns = [kPriorityColumn, kBranchColumn, kRouteColumn] as const;

export type SeedColumn = (typeof kTaskColumns)[number];
export type OptionalColumn = (typeof kOptionalColumns)[number];
export type KnownColumn = SeedColumn | OptionalColumn;

/** Every column csv-wave knows: the seed's, in its order, then the optional ones. */
export const kKnownColumns: readonly KnownColumn[] = [...kTaskColumns, ...kOptionalColumns];

/** One task: every known column as a string (empty when absent), plus the person's own columns. */
export type TaskRow = Record<KnownColumn, string> & {
  /** File line where the row starts (1-based; the header is line 1). 0 for rows added by the engine. */
  line: number;
  /** Columns csv-wave does not know, kept verbatim and written back in place. */
  extra: Record<string, string>;
};

/** A task with every field empty: the start of a row the engine or a pipeline adds. */
export function emptyRow(): TaskRow {
  // Every field written out, in one literal: the fields sit inside the object. Added one by
  // one, past a dozen V8 keeps them in a hash table of their own, some 800 bytes more per
  // row (800 MB at a million tasks), and slower to read. The type holds the list to
  // kKnownColumns: a column missing here does not compile.
  return {
    id: '',
    title: '',
    description: '',
    role: '',
    angle: '',
    gc_round: '',
    deps: '',
    context_from: '',
    exec_mode: '',
    wave: '',
    status: '',
    findings: '',
    gc_signal: '',
    severity_summary: '',
    error: '',
    priority: '',
    branch: '',
    route: '',
    line: 0,
    // No prototype: a column of one's own may be named `__proto__` or `constructor`, and is a cell like any other.
    extra: Object.create(null) as Record<string, string>,
  };
}

/** The statuses a task ends in. */
export type FinalStatus = 'completed' | 'failed' | 'skipped';

/**
 * A finished task's outcome: the cells the core writes into its row. The journal's finish
 * entry and the `task:done` event carry the same five fields (one type, so they cannot drift).
 */
export interface TaskOutcome {
  status: FinalStatus;
  findings: string;
  gc_signal: string;
  severity_summary: string;
  error: string;
  /** The branch a routing task chose (its `route` cell); absent when it chose none. */
  route?: string;
}

