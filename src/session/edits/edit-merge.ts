import type { SessionEdit, TaskStanding, TaskUpdate } from '../../core/session-changes.js';
import type { TaskRow } from '../../core/task.js';
import { isKnownColumn, showCell } from '../../csv/columns.js';
import { cellOf, rowCells, type TasksTable } from '../../csv/tasks-table.js';
import type { Violation } from '../../errors.js';
import type { JournalEntry } from '../journal.js';
import type { EditLedger } from './edit-ledger.js';
import { findBlame, type Candidate, type EditGroup } from './edit-blame.js';

/** The cells the run writes for a task: a save never sets them. */
const kOutputCells: ReadonlySet<string> = new Set(['status', 'findings', 'error', 'gc_signal', 'severity_summary', 'route']);

export interface MergeInput {
  /** The run's table: its rows are the run's record, and are not changed here (but their lines). */
  memory: TasksTable;
  /** The saved file, read with its text (`keepText`). */
  saved: TasksTable;
  /** Where each task of the run's table stands (the scheduling core's). */
  standing: (id: string) => TaskStanding | undefined;
  ledger: EditLedger;
  /** The checks of a run's start, over the merged table: every violation at its line. */
  check: (table: TasksTable) => readonly Violation[];
  /** tasks.csv as messages name it. */
  displayPath: string;
  /** The session as the user named it, for the commands the messages suggest. */
  path: string;
  /** Take nothing of the save, for this reason (the core refused its changes): every cell goes back. */
  takeNothing?: string;
}

/** A merge's outcome: what to apply, what to journal first, how the file is laid out, and what to say. */
export interface MergePlan {
  /** What the run takes: for the scheduling core. */
  edit: SessionEdit;
  /** The entries that make the journal hold the run's values of every cell the save changed and the run kept. */
  journal: JournalEntry[];
  /** The rows in their new order: the run's own row objects, and the new rows. */
  order: TaskRow[];
  /** The columns in their new order: the saved header's, and any it lacked put back. */
  columns: string[];
  /** The run's rows with the saved row each was matched with. */
  matched: { row: TaskRow; saved: TaskRow }[];
  /** One line each: cells restored, changes ignored until fixed, rows kept. */
  notices: string[];
  /** The ids of what was taken, for the run's `[EDIT]` line. */
  taken: { added: string[]; changed: string[]; removed: string[] };
}

/**
 * Merges a person's save of tasks.csv into a running session (docs/durability.md, "An
 * edit during a run"). Rows are matched by id. A save may change the input cells of a task
 * that is not running, add pending tasks and delete tasks that have not started. The run
 * keeps its own: every output cell, the inputs of running tasks, rows of running or finished
 * tasks, and the wave (computed). What a save still shows from an older copy of the file (a
 * spreadsheet opened a while ago) is taken back without a word; any other cell the run
 * keeps is said. The changes taken are validated together, as at a run's start: a change
 * that breaks a rule is left out, said at its line, and the rest is taken.
 */
export function planMerge(input: MergeInput): MergePlan {
  const { memory, saved } = input;
  const header = saved.saved?.columns ?? saved.columns;
  const inHeader = new Set(header);
  const columns = mergedColumns(memory.columns, header);
  const notices: string[] = [];
  const journal: JournalEntry[] = [];
  const say = (line: number, id: string | undefined, text: string) => notices.push(`${where(input.displayPath, line)}${id === undefined ? '' : ` ${id}`}: ${text}`);
  for (const name of columns) {
    if (!inHeader.has(name)) say(savedHeaderLine(saved), undefined, `column ${showCell(name)} put back (the saved file did not have it; remove a column after the run)`);
  }

  const memoryById = new Map(memory.rows.map((row) => [row.id, row]));
  const seen = new Set<string>();
  const matched: { row: TaskRow; saved: TaskRow }[] = [];
  const groups: EditGroup[] = [];
  /** The saved file's order: the run's rows matched, and new rows. */
  const savedOrder: TaskRow[] = [];
  /** The saved rows that are not the run's: new tasks, taken or not. */
  const newRows = new Set<TaskRow>();
  const restored = new Map<TaskRow, Record<string, string>>();
  const restore = (row: TaskRow, column: string) => {
    const cells = restored.get(row) ?? {};
    cells[column] = cellOf(row, column);
    restored.set(row, cells);
  };

  for (const row of saved.rows) {
    const mine = seen.has(row.id) ? undefined : memoryById.get(row.id);
    seen.add(row.id);
    if (mine === undefined) {
      savedOrder.push(row);
      newRows.add(row);
      const status = row.status;
      if (status !== '' && status !== 'pending') {
        say(row.line, row.id, `a new task must be pending (its status is ${showCell(status)}): left out`);
        if (!memoryById.has(row.id)) journal.push({ type: 'remove', id: row.id });
      } else if (input.takeNothing !== undefined) {
        say(row.line, row.id, `new task left out (${input.takeNothing})`);
        if (!memoryById.has(row.id)) journal.push({ type: 'remove', id: row.id });
      } else {
        if (status === '') row.status = 'pending';
        groups.push({ kind: 'add', id: row.id, row, cells: new Map(), line: row.line });
      }
      continue;
    }
    savedOrder.push(mine);
    matched.push({ row: mine, saved: row });
    // From now on the run's row is where the saved file has it: messages name that line.
    mine.line = row.line;
    const standing = input.standing(mine.id) ?? 'earlier';
    const changes = new Map<string, string>();
    const said: string[] = [];
    let why = '';
    for (const column of columns) {
      const ours = cellOf(mine, column);
      if (!inHeader.has(column)) {
        // A column the save lacks: the file a kill would leave has none of its cells.
        if (ours !== '') restore(mine, column);
        continue;
      }
      const theirs = cellOf(row, column);
      if (ours === theirs || column === 'wave') continue;
      if (kOutputCells.has(column)) {
        restore(mine, column);
        if (!olderValue(standing, column, theirs)) {
          said.push(column);
          why ||= outputWhy(standing, input.path, mine.id);
        }
      } else if ((column === 'deps' || column === 'context_from') && input.ledger.isReplaced(mine.id, column, theirs)) {
        restore(mine, column);
      } else if (standing === 'running' || standing === 'wave-running' || input.takeNothing !== undefined) {
        restore(mine, column);
        said.push(column);
        why ||= input.takeNothing ?? inputWhy(standing);
      } else {
        changes.set(column, theirs);
      }
    }
    if (said.length > 0) say(mine.line, mine.id, `${said.join(', ')} restored (${why})`);
    if (changes.size > 0) groups.push({ kind: 'change', id: mine.id, row: mine, cells: changes, line: mine.line });
  }

  /** Rows the save lacks that stay: running, finished, added by the run, or a removal left out. */
  const kept = new Set<TaskRow>();
  const keep = (row: TaskRow, text: string | undefined) => {
    kept.add(row);
    journal.push({ type: 'add', row: rowCells(row) });
    if (text !== undefined) say(row.line, row.id, text);
    row.line = 0;
  };
  for (const row of memory.rows) {
    if (seen.has(row.id)) continue;
    const standing = input.standing(row.id) ?? 'earlier';
    if (standing !== 'open') keep(row, `deleted, restored (${deletionWhy(standing)})`);
    else if (input.ledger.addedByRun(row.id)) {
      keep(row, input.ledger.tellOnce(`kept ${row.id}`) ? 'not in the saved file, kept (the run added it; the file may have been opened before that)' : undefined);
    } else if (input.takeNothing !== undefined) keep(row, `deleted, restored (${input.takeNothing})`);
    else groups.push({ kind: 'remove', id: row.id, row, cells: new Map(), line: row.line });
  }

  // The changes taken are checked together; one that breaks a rule waits for a fixed save.
  const layout: Layout = { savedOrder, newRows, kept, removals: groups.filter((group) => group.kind === 'remove') };
  const blamed = findBlame(groups, (active) => candidate(layout, active, columns, saved), input.check);
  const told = new Set<string>();
  for (const { group, violation } of blamed) {
    const text = `${where(input.displayPath, violation.line)}: ${violation.message} (this change waits until it is fixed; the run goes on with the old values)`;
    if (!told.has(text)) notices.push(text);
    told.add(text);
    if (group.kind === 'change') for (const column of group.cells.keys()) restore(group.row, column);
    else if (group.kind === 'remove') keep(group.row, undefined);
    else if (!memoryById.has(group.id)) journal.push({ type: 'remove', id: group.id });
  }
  const refused = new Set(blamed.map(({ group }) => group));
  const active = groups.filter((group) => !refused.has(group));

  for (const [row, cells] of restored) journal.push({ type: 'restore', id: row.id, cells });
  const edit: SessionEdit = { add: [], update: [], remove: [] };
  for (const group of active) {
    if (group.kind === 'add') edit.add.push(group.row);
    else if (group.kind === 'remove') edit.remove.push(group.id);
    else edit.update.push(updateOf(group));
  }
  const order = finalOrder(memory.rows, savedOrder, newRows, kept, new Set(edit.add));
  return {
    edit,
    journal,
    order,
    columns,
    matched,
    notices,
    taken: { added: edit.add.map((row) => row.id), changed: edit.update.map((update) => update.id), removed: edit.remove },
  };
}

/** A change of a row as the core takes it: deps and context_from apart (the core checks them), the other cells together. */
function updateOf(group: EditGroup): TaskUpdate {
  const update: TaskUpdate = { id: group.id };
  const cells: Record<string, string> = {};
  for (const [column, value] of group.cells) {
    if (column === 'deps') update.deps = value;
    else if (column === 'context_from') update.context_from = value;
    else cells[column] = value;
  }
  if (Object.keys(cells).length > 0) update.cells = cells;
  return update;
}

/**
 * A value the run itself showed in the task's cell during this run, which a save made from
 * an older copy of the file still has: empty, or a status it went through. A task finished
 * before the run never changed in it, so any other value is an edit.
 */
function olderValue(standing: TaskStanding, column: string, value: string): boolean {
  if (standing === 'earlier') return false;
  if (column === 'status') return value === '' || value === 'pending' || value === 'in_progress';
  return value === '';
}

function outputWhy(standing: TaskStanding, path: string, id: string): string {
  if (standing === 'running') return 'a run owns it while it runs';
  if (standing === 'finished' || standing === 'earlier') return `a finished task keeps its results; \`csv-wave rerun ${path} --task ${id}\` runs it again`;
  return 'the run writes it; to leave a task out, delete its row';
}

function inputWhy(standing: TaskStanding): string {
  return standing === 'wave-running'
    ? 'its wave is running: with --schedule waves a task keeps the inputs its wave started with'
    : 'a run owns it while it runs';
}

function deletionWhy(standing: TaskStanding): string {
  if (standing === 'running') return 'a run owns it while it runs';
  if (standing === 'wave-running') return inputWhy(standing);
  return 'a finished task stays: its results are the run\'s record';
}

/** `tasks.csv:7`, or `tasks.csv` for a row the saved file does not have. */
function where(displayPath: string, line: number): string {
  return line > 0 ? `${displayPath}:${line}` : displayPath;
}

/** The line of the saved header: its text ends with its line end, after any blank lines before it. */
function savedHeaderLine(saved: TasksTable): number {
  return Math.max(1, saved.saved?.header.match(/\r\n|\n|\r/g)?.length ?? 1);
}

/** The saved header's columns, and every column of the run's table it lacks put back after the one before it. */
function mergedColumns(ours: readonly string[], header: readonly string[]): string[] {
  const columns = [...header];
  const present = new Set(header);
  for (let index = 0; index < ours.length; index++) {
    const name = ours[index]!;
    if (present.has(name)) continue;
    let at = 0;
    for (let before = index - 1; before >= 0; before--) {
      const found = columns.indexOf(ours[before]!);
      if (found !== -1) {
        at = found + 1;
        break;
      }
    }
    columns.splice(at, 0, name);
    present.add(name);
  }
  return columns;
}

/** Where the rows of a merge come from: the saved file's order, the new rows among them, the rows kept, the removals. */
interface Layout {
  savedOrder: readonly TaskRow[];
  newRows: ReadonlySet<TaskRow>;
  kept: ReadonlySet<TaskRow>;
  removals: readonly EditGroup[];
}

/** The table the merge would make with these changes taken (each changed row a copy), and the change each row comes from. */
function candidate(layout: Layout, active: ReadonlySet<EditGroup>, columns: string[], saved: TasksTable): Candidate {
  const byRow = new Map<TaskRow, EditGroup>();
  for (const group of active) byRow.set(group.row, group);
  const groupOf = new Map<TaskRow, EditGroup | undefined>();
  for (const row of layout.savedOrder) {
    const group = byRow.get(row);
    if (layout.newRows.has(row)) {
      if (group !== undefined) groupOf.set(row, group);
    } else groupOf.set(group === undefined ? row : withCells(row, group.cells), group);
  }
  for (const row of layout.kept) groupOf.set(row, undefined);
  // A removal not taken leaves its row in the table.
  for (const group of layout.removals) if (!active.has(group)) groupOf.set(group.row, undefined);
  return { table: { columns, rows: [...groupOf.keys()], format: saved.format }, groupOf };
}

function withCells(row: TaskRow, cells: ReadonlyMap<string, string>): TaskRow {
  const copy: TaskRow = { ...row, extra: { ...row.extra } };
  for (const [column, value] of cells) {
    if (isKnownColumn(column)) copy[column] = value;
    else copy.extra[column] = value;
  }
  return copy;
}

/**
 * The rows in their new order: the saved file's (new rows only when taken), with the rows
 * it lacked that stay put back after the row they followed in the run's table (or first).
 */
function finalOrder(
  ours: readonly TaskRow[],
  savedOrder: readonly TaskRow[],
  newRows: ReadonlySet<TaskRow>,
  kept: ReadonlySet<TaskRow>,
  added: ReadonlySet<TaskRow>,
): TaskRow[] {
  const after = new Map<TaskRow | undefined, TaskRow[]>();
  const inSaved = new Set(savedOrder);
  let previous: TaskRow | undefined;
  for (const row of ours) {
    if (kept.has(row)) {
      const list = after.get(previous) ?? [];
      list.push(row);
      after.set(previous, list);
    } else if (inSaved.has(row)) previous = row;
  }
  const order: TaskRow[] = [...(after.get(undefined) ?? [])];
  for (const row of savedOrder) {
    if (newRows.has(row) && !added.has(row)) continue;
    order.push(row);
    for (const next of after.get(row) ?? []) order.push(next);
  }
  return order;
}
