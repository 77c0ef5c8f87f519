import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyToRows, type SessionEdit, type TaskStanding } from '../../src/core/session-changes.js';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { serializeTasks } from '../../src/csv/serialize-tasks.js';
import type { TasksTable } from '../../src/csv/tasks-table.js';
import { EditIntake } from '../../src/session/edits/edit-intake.js';
import { EditLedger } from '../../src/session/edits/edit-ledger.js';
import { planMerge, type MergeInput } from '../../src/session/edits/edit-merge.js';
import { startChecks } from '../../src/session/edits/edit-checks.js';
import { Journal, readJournal, replayJournal } from '../../src/session/journal.js';
import { TasksWriter } from '../../src/session/tasks-writer.js';

const kHeader = 'id,title,description,role,deps,context_from,exec_mode,wave,status,findings,error,notes';

/** The run's table: A finished, B running, C and D pending (D waits on C), E finished before the run. */
const kRun = [
  kHeader,
  '"A","A","first","r","","","csv-wave","1","completed","found A","",""',
  '"B","B","second","r","","","csv-wave","1","in_progress","","",""',
  '"C","C","third","r","A","","csv-wave","2","pending","","",""',
  '"D","D","fourth","r","C","","csv-wave","3","pending","","","a note"',
  '"E","E","fifth","r","","","csv-wave","1","completed","found E","",""',
  '',
].join('\n');

const kStanding: Record<string, TaskStanding> = { A: 'finished', B: 'running', C: 'open', D: 'open', E: 'earlier' };

const check = startChecks({ pipeline: 'generic', executor: { type: 'command', template: 'echo {id}' }, files: { tasks: 'tasks.csv' }, worktree: false });

/** The run's table: its columns are the ones the run writes, kRun's header. */
function runTable(text = kRun): TasksTable {
  const table = parseTasks(text);
  table.columns = kHeader.split(',');
  return table;
}

function plan(saved: string, changes: Partial<MergeInput> = {}) {
  const memory = runTable();
  const input: MergeInput = {
    memory,
    saved: parseTasks(saved, 'tasks.csv', { keepText: true }),
    standing: (id) => kStanding[id],
    ledger: new EditLedger(),
    check,
    displayPath: 'tasks.csv',
    path: 'my-session',
    ...changes,
  };
  return { memory, merged: planMerge(input) };
}

/** kRun with its line `index` (0: the header) replaced, or dropped (null), and lines added at the end. */
function saved(changes: Record<number, string | null>, added: string[] = []): string {
  const lines = kRun.split('\n').slice(0, -1);
  const kept = lines.flatMap((line, index) => (index in changes ? (changes[index] === null ? [] : [changes[index]!]) : [line]));
  return [...kept, ...added, ''].join('\n');
}

const empty: SessionEdit = { add: [], update: [], remove: [] };

describe('planMerge: what a save during a run changes, and what the run keeps', () => {
  it('takes input cells of open tasks, a note on a finished task, new pending rows and removed open rows', () => {
    const { merged } = plan(
      saved(
        {
          1: '"A","A","first","r","","","csv-wave","1","completed","found A","","looked at"',
          3: '"C","C","third, reworded","r","A","","csv-wave","2","pending","","",""',
          4: null,
        },
        ['"N","New","a new task","r","C","","","","","","",""'],
      ),
    );
    expect(merged.edit.update).toEqual([
      { id: 'A', cells: { notes: 'looked at' } },
      { id: 'C', cells: { description: 'third, reworded' } },
    ]);
    expect(merged.edit.add.map((row) => [row.id, row.status, row.line])).toEqual([['N', 'pending', 6]]);
    expect(merged.edit.remove).toEqual(['D']);
    expect(merged.notices).toEqual([]);
    expect(merged.taken).toEqual({ added: ['N'], changed: ['A', 'C'], removed: ['D'] });
    expect(merged.order.map((row) => row.id)).toEqual(['A', 'B', 'C', 'E', 'N']);
  });

  it('restores the output cells a save changed and says which, at the line of the saved file', () => {
    const { merged } = plan(
      saved({
        1: '"A","A","first","r","","","csv-wave","1","pending","","",""',
        2: '"B","B","second","r","","","csv-wave","1","completed","my findings","",""',
        5: '"E","E","fifth","r","","","csv-wave","1","completed","found E, I think","",""',
      }),
    );
    expect(merged.edit).toEqual(empty);
    expect(merged.notices).toEqual([
      'tasks.csv:3 B: status, findings restored (a run owns it while it runs)',
      'tasks.csv:6 E: findings restored (a finished task keeps its results; `csv-wave rerun my-session --task E` runs it again)',
    ]);
    // A's `pending` and empty findings are what an older copy of the file showed: put back without a word, but journaled.
    expect(merged.journal).toEqual([
      { type: 'restore', id: 'A', cells: { status: 'completed', findings: 'found A' } },
      { type: 'restore', id: 'B', cells: { status: 'in_progress', findings: '' } },
      { type: 'restore', id: 'E', cells: { findings: 'found E' } },
    ]);
  });

  it('restores the inputs of a running task, and with --schedule waves those of a task whose wave runs', () => {
    const { merged } = plan(
      saved({
        2: '"B","B","second, changed","r","","","csv-wave","1","in_progress","","",""',
        3: '"C","C","third, changed","r","A","","csv-wave","2","pending","","",""',
      }),
      { standing: (id) => (id === 'C' ? 'wave-running' : kStanding[id]) },
    );
    expect(merged.edit).toEqual(empty);
    expect(merged.notices).toEqual([
      'tasks.csv:3 B: description restored (a run owns it while it runs)',
      'tasks.csv:4 C: description restored (its wave is running: with --schedule waves a task keeps the inputs its wave started with)',
    ]);
  });

  it('keeps a running or finished task a save deleted, where it was, and says so', () => {
    const { merged } = plan(saved({ 1: null, 2: null, 5: null }));
    expect(merged.edit).toEqual(empty);
    expect(merged.order.map((row) => row.id)).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(merged.notices).toEqual([
      'tasks.csv:2 A: deleted, restored (a finished task stays: its results are the run\'s record)',
      'tasks.csv:3 B: deleted, restored (a run owns it while it runs)',
      'tasks.csv:6 E: deleted, restored (a finished task stays: its results are the run\'s record)',
    ]);
    expect(merged.journal.map((entry) => `${entry.type} ${'row' in entry ? entry.row['id'] : ''}`)).toEqual(['add A', 'add B', 'add E']);
  });

  it('a rename is a removal and a new row: taken for an open task, refused for a running one', () => {
    const { merged } = plan(
      saved({
        2: '"B2","B","second","r","","","csv-wave","1","in_progress","","",""',
        4: '"D2","D","fourth","r","C","","csv-wave","3","pending","","","a note"',
      }),
    );
    expect(merged.edit.remove).toEqual(['D']);
    expect(merged.edit.add.map((row) => row.id)).toEqual(['D2']);
    expect(merged.notices).toEqual([
      'tasks.csv:3 B2: a new task must be pending (its status is in_progress): left out',
      'tasks.csv:3 B: deleted, restored (a run owns it while it runs)',
    ]);
    expect(merged.order.map((row) => row.id)).toEqual(['A', 'B', 'C', 'D2', 'E']);
  });

  it('a wave cell is put back without a word', () => {
    const { merged } = plan(saved({ 3: '"C","C","third","r","A","","csv-wave","7","pending","","",""' }));
    expect(merged).toMatchObject({ edit: empty, notices: [], journal: [] });
  });

  it('a change that breaks a rule waits, said at its line; the rest of the save is taken', () => {
    const { merged } = plan(
      saved({
        3: '"C","C","third","r","A;nope","","csv-wave","2","pending","","",""',
        4: '"D","D","fourth, reworded","r","C","","csv-wave","3","pending","","","a note"',
      }),
    );
    expect(merged.edit.update).toEqual([{ id: 'D', cells: { description: 'fourth, reworded' } }]);
    expect(merged.notices).toEqual(['tasks.csv:4: Unknown dependency: nope (this change waits until it is fixed; the run goes on with the old values)']);
    expect(merged.journal).toEqual([{ type: 'restore', id: 'C', cells: { deps: 'A' } }]);
  });

  it('a removal another task needs waits: the row stays, said at the line of the task that needs it', () => {
    const { merged } = plan(saved({ 3: null }));
    expect(merged.edit).toEqual(empty);
    expect(merged.notices).toEqual(['tasks.csv:4: Unknown dependency: C (this change waits until it is fixed; the run goes on with the old values)']);
    expect(merged.order.map((row) => row.id)).toEqual(['A', 'B', 'C', 'D', 'E']);
  });

  it('a cycle is blamed on the changed rows on it', () => {
    const { merged } = plan(
      saved({ 3: '"C","C","third","r","D","","csv-wave","2","pending","","",""' }, ['"N","New","fine","r","A","","","","","","",""']),
    );
    expect(merged.edit.add.map((row) => row.id)).toEqual(['N']);
    expect(merged.edit.update).toEqual([]);
    expect(merged.notices).toEqual(['tasks.csv:4: Circular dependency detected involving: C;D (this change waits until it is fixed; the run goes on with the old values)']);
  });

  it('a duplicate id in a save: the second row is left out', () => {
    const { merged } = plan(saved({}, ['"C","C again","dup","r","","","","","","","",""']));
    expect(merged.edit).toEqual(empty);
    expect(merged.notices).toEqual(['tasks.csv:7: Duplicate task ID: C (this change waits until it is fixed; the run goes on with the old values)']);
  });

  it('a column a save lacks is put back, with the run\'s cells', () => {
    const header = 'id,title,description,role,deps,context_from,exec_mode,wave,status,findings,error';
    const text = kRun
      .split('\n')
      .map((line, index) => (index === 0 ? header : line.replace(/,"[^"]*"$/, '')))
      .join('\n');
    const { merged } = plan(text);
    expect(merged.columns).toEqual(kHeader.split(','));
    expect(merged.notices).toEqual(['tasks.csv:1: column notes put back (the saved file did not have it; remove a column after the run)']);
    expect(merged.edit).toEqual(empty);
  });

  it('a save made from an older copy: deps the run rewired and rows it added are not the person\'s edits', () => {
    const ledger = new EditLedger();
    const memory = runTable();
    ledger.changed({ by: 'task', added: [{ ...memory.rows[0]!, id: 'G' }], previous: [{ id: 'D', deps: 'B', context_from: '' }] });
    const withG = kRun.replace('"E","E"', '"G","G","added by the run","r","","","csv-wave","1","pending","","",""\n"E","E"');
    const input = (text: string): MergeInput => ({
      memory: runTable(withG),
      saved: parseTasks(text, 'tasks.csv', { keepText: true }),
      standing: (id) => kStanding[id] ?? 'open',
      ledger,
      check,
      displayPath: 'tasks.csv',
      path: 'my-session',
    });
    const older = saved({ 4: '"D","D","fourth","r","B","","csv-wave","3","pending","","","a note"' });
    const first = planMerge(input(older));
    expect(first.edit).toEqual(empty);
    expect(first.notices).toEqual(['tasks.csv:6 G: not in the saved file, kept (the run added it; the file may have been opened before that)']);
    expect(first.journal).toEqual([{ type: 'add', row: expect.objectContaining({ id: 'G' }) }, { type: 'restore', id: 'D', cells: { deps: 'C' } }]);
    // Said once a run.
    expect(planMerge(input(older)).notices).toEqual([]);
  });
});

describe('EditIntake: a save merged into the run and written back', () => {
  /** A session whose tasks.csv the run wrote (kRun), then a person saved `text` over it. */
  function mergedFile(text: string): { path: string; dir: string; edits: SessionEdit[] } {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-edit-intake-'));
    const path = join(dir, 'tasks.csv');
    writeFileSync(path, kRun);
    const { table, writer } = TasksWriter.read(path);
    table.columns = kHeader.split(',');
    writeFileSync(path, text);
    const read = writer.readSaved();
    if (read.kind !== 'read') throw new Error(`not read: ${read.kind}`);
    const journal = new Journal(dir);
    const edits: SessionEdit[] = [];
    const byId = new Map(table.rows.map((row) => [row.id, row]));
    const intake = new EditIntake({
      table,
      target: {
        standing: (id) => kStanding[id] ?? 'open',
        edit: (edit) => {
          edits.push(edit);
          applyToRows(table.rows, byId, edit);
          return undefined;
        },
      },
      journal,
      ledger: new EditLedger(),
      check,
      displayPath: 'tasks.csv',
      path: dir,
      warn: () => {},
      edited: () => {},
    });
    intake.merge(read.table);
    expect(writer.write()).toBe(true);
    journal.close();
    return { path, dir, edits };
  }

  it('a save in another program\'s quoting, with a BOM and CRLF: only what the run changed is rewritten', () => {
    // As LibreOffice saves by default: quotes only where needed; here with a BOM and CRLF too.
    const spreadsheet = [
      kHeader,
      'A,A,first,r,,,csv-wave,1,completed,found A,,',
      'B,B,second,r,,,csv-wave,1,in_progress,,,',
      'C,C,"third, reworded",r,A,,csv-wave,2,pending,,,',
      'D,D,fourth,r,C,,csv-wave,3,pending,,,a note',
      'E,E,fifth,r,,,csv-wave,1,completed,found E,,',
      'N,N,new,r,,,,,,,,',
      '',
    ].join('\r\n');
    const { path } = mergedFile(`\uFEFF${spreadsheet}`);
    expect(readFileSync(path, 'utf8')).toBe(
      `\uFEFF${spreadsheet.replace('N,N,new,r,,,,,,,,', '"N","N","new","r","","","","1","pending","","",""')}`,
    );
  });

  it('a save csv-wave wrote itself, one cell changed: the rewrite is that save, byte for byte', () => {
    const text = kRun.replace('"fourth"', '"fourth, reworded"');
    const { path } = mergedFile(text);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('restored cells are rewritten and journaled; a replay of the journal over the save gives the same rows', () => {
    const text = kRun.replace('"found A"', '"not found"').replace('"B","B","second"', '"B","B","second!"');
    const { path, dir } = mergedFile(text);
    const written = readFileSync(path, 'utf8');
    expect(written).toBe(kRun);
    const replayed = parseTasks(text);
    replayJournal(replayed.rows, readJournal(dir));
    expect(serializeTasks(replayed as TasksTable)).toBe(serializeTasks(parseTasks(written)));
  });
});
