import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { applyToRows, type TaskStanding } from '../../src/core/session-changes.js';
import { emptyRow, type TaskRow } from '../../src/core/task.js';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { serializeTasks } from '../../src/csv/serialize-tasks.js';
import { cellOf, rowCells, type TasksTable } from '../../src/csv/tasks-table.js';
import { startChecks } from '../../src/session/edits/edit-checks.js';
import { EditLedger } from '../../src/session/edits/edit-ledger.js';
import { planMerge } from '../../src/session/edits/edit-merge.js';
import { replayJournal, type JournalEntry } from '../../src/session/journal.js';
import { propertyTest } from '../helpers/property-runs.js';

const kColumns = ['id', 'title', 'description', 'role', 'deps', 'context_from', 'exec_mode', 'wave', 'status', 'findings', 'gc_signal', 'severity_summary', 'error', 'notes'];
const kOutputs = ['status', 'findings', 'gc_signal', 'severity_summary', 'error'] as const;
const check = startChecks({ pipeline: 'generic', executor: { type: 'command', template: 'echo {id}' }, files: { tasks: 'tasks.csv' }, worktree: false });

/** A task of the run as a test draws it: its cells, and where it stands. */
interface Drawn {
  standing: TaskStanding;
  description: string;
  notes: string;
  findings: string;
  /** Indexes of earlier tasks it depends on. */
  deps: number[];
}

const kStatus: Record<TaskStanding, string> = { open: 'pending', 'wave-running': 'pending', running: 'in_progress', finished: 'completed', earlier: 'completed' };

const word = fc.constantFrom('', 'x', 'y', 'a b', 'z,"q"');
const drawnArb = fc.array(
  fc.record({
    standing: fc.constantFrom<TaskStanding>('open', 'wave-running', 'running', 'finished', 'earlier'),
    description: fc.constantFrom('do x', 'do y'),
    notes: word,
    findings: word,
    deps: fc.array(fc.nat(5), { maxLength: 2 }),
  }),
  { minLength: 1, maxLength: 6 },
);

/** What a save does to a row of the run's file, or adds. */
type Change =
  | { kind: 'cell'; row: number; column: 'description' | 'notes' | 'findings' | 'status' | 'wave' | 'deps'; value: string }
  | { kind: 'delete'; row: number }
  | { kind: 'add'; id: string; status: string; deps: string };

const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc.record({
    kind: fc.constant('cell' as const),
    row: fc.nat(5),
    column: fc.constantFrom('description' as const, 'notes' as const, 'findings' as const, 'status' as const, 'wave' as const, 'deps' as const),
    value: fc.constantFrom('', 'x', 'pending', 'completed', '9', 't0', 't1;t2', 'nope', 'do z'),
  }),
  fc.record({ kind: fc.constant('delete' as const), row: fc.nat(5) }),
  fc.record({ kind: fc.constant('add' as const), id: fc.constantFrom('n0', 'n1', 't1'), status: fc.constantFrom('', 'pending', 'completed'), deps: fc.constantFrom('', 't0', 'n0', 'nope') }),
);

function runTable(drawn: readonly Drawn[]): TasksTable {
  const rows = drawn.map((task, index): TaskRow => {
    const row = emptyRow();
    Object.assign(row, {
      id: `t${index}`,
      title: `T${index}`,
      description: task.description,
      role: 'r',
      deps: [...new Set(task.deps.filter((dep) => dep < index))].map((dep) => `t${dep}`).join(';'),
      status: kStatus[task.standing],
      findings: task.standing === 'finished' || task.standing === 'earlier' ? task.findings : '',
    });
    row.extra['notes'] = task.notes;
    return row;
  });
  const table: TasksTable = { columns: kColumns, rows, format: { bom: false, eol: '\n' } };
  applyToRows(table.rows, new Map(rows.map((row) => [row.id, row])), { add: [], update: [], remove: [] });
  return table;
}

function savedText(table: TasksTable, changes: readonly Change[]): string {
  const rows = table.rows.map((row) => ({ ...row, extra: { ...row.extra } }));
  const deleted = new Set<number>();
  const added: TaskRow[] = [];
  for (const change of changes) {
    if (change.kind === 'add') {
      added.push(Object.assign(emptyRow(), { id: change.id, title: 'New', description: 'new task', role: 'r', deps: change.deps, status: change.status }));
    } else if (change.row < rows.length) {
      if (change.kind === 'delete') deleted.add(change.row);
      else if (change.column === 'notes') rows[change.row]!.extra['notes'] = change.value;
      else rows[change.row]![change.column] = change.value;
    }
  }
  return serializeTasks({ ...table, rows: [...rows.filter((_, index) => !deleted.has(index)), ...added] });
}

/** Every cell but the wave (computed again at every start), by id; an empty status reads as pending, as every run reads it. */
function cellsById(table: TasksTable): Map<string, Record<string, string>> {
  const cell = (row: TaskRow, column: string) => (column === 'status' && row.status === '' ? 'pending' : cellOf(row, column));
  return new Map(table.rows.map((row) => [row.id, Object.fromEntries(table.columns.filter((column) => column !== 'wave').map((column) => [column, cell(row, column)]))]));
}

describe('planMerge on random saves', () => {
  propertyTest(
    'the run keeps its outputs and the rows it owns; what a kill right after the merge leaves replays to what the run holds',
    { ci: 150, local: 300, deep: 20_000 },
    (numRuns) => {
      fc.assert(
        fc.property(drawnArb, fc.array(changeArb, { maxLength: 5 }), (drawn, changes) => {
          const memory = runTable(drawn);
          const standingOf = new Map(drawn.map((task, index) => [`t${index}`, task.standing]));
          const before = new Map(memory.rows.map((row) => [row.id, { ...row, extra: { ...row.extra } }]));
          const text = savedText(memory, changes);
          const plan = planMerge({
            memory,
            saved: parseTasks(text, 'tasks.csv', { keepText: true }),
            standing: (id) => standingOf.get(id),
            ledger: new EditLedger(),
            check,
            displayPath: 'tasks.csv',
            path: 's',
          });

          // Only open tasks are removed, only tasks that are not running change.
          for (const id of plan.edit.remove) expect(standingOf.get(id)).toBe('open');
          for (const { id } of plan.edit.update) expect(['open', 'finished', 'earlier']).toContain(standingOf.get(id));
          for (const row of plan.edit.add) expect(row.status).toBe('pending');

          // The run's part applied, as the core does (waves aside), and the table laid out as the plan says.
          const byId = new Map(memory.rows.map((row) => [row.id, row]));
          applyToRows(memory.rows, byId, plan.edit);
          const merged: TasksTable = { columns: plan.columns, rows: plan.order, format: memory.format };
          expect(new Set(merged.rows.map((row) => row.id))).toEqual(new Set(memory.rows.map((row) => row.id)));
          for (const [id, old] of before) {
            if (plan.edit.remove.includes(id)) continue;
            const row = byId.get(id)!;
            for (const column of kOutputs) expect(row[column], `${id}.${column}`).toBe(old[column]);
            // A running task keeps every input (its wave aside: this test's drawing may put an open task upstream of it, which a run cannot).
            if (standingOf.get(id) === 'running' || standingOf.get(id) === 'wave-running') expect({ ...rowCells(row), wave: '' }).toEqual({ ...rowCells(old), wave: '' });
          }
          // What was valid stays valid.
          expect(check(merged)).toEqual([]);

          // A kill right after the merge leaves the save and the journal: a replay gives the same
          // table. (A save with a duplicate id stays one: resume refuses it at its line, exit 2.)
          const replayed = parseTasks(text);
          if (new Set(replayed.rows.map((row) => row.id)).size < replayed.rows.length) return;
          const entries: JournalEntry[] = [
            ...plan.journal,
            ...plan.edit.remove.map((id): JournalEntry => ({ type: 'remove', id })),
            ...plan.edit.add.map((row): JournalEntry => ({ type: 'add', row: rowCells(row) })),
            ...plan.edit.update.map((update): JournalEntry => ({ type: 'update', ...update })),
          ];
          replayJournal(replayed.rows, entries);
          replayed.columns = plan.columns;
          expect(cellsById(replayed)).toEqual(cellsById(merged));
        }),
        { numRuns },
      );
    },
  );
});
