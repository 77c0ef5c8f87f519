import { readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { readTasksFile } from '../../src/csv/parse-tasks.js';
import type { WriteFn } from '../../src/files/write-all.js';
import { Checkpointer } from '../../src/session/checkpointer.js';
import { Journal, readJournal, type JournalEntry } from '../../src/session/journal.js';
import { TasksWriter } from '../../src/session/tasks-writer.js';
import { WaveError } from '../../src/errors.js';
import { buildSession } from '../helpers/session-builder.js';

/** write(2) on a disk that fills up: the first call takes half of what it is given, then nothing. */
function fillingDisk(): WriteFn {
  let calls = 0;
  return (fd, bytes, offset, length) => (calls++ === 0 ? writeSync(fd, bytes, offset, Math.ceil(length / 2)) : 0);
}

const finish: JournalEntry = { type: 'finish', id: 'A', status: 'completed', findings: 'the result', gc_signal: '', severity_summary: '', error: '' };

test('a rewrite of tasks.csv cut short by a full disk keeps the old file and the journal, and tells `failed`; the next good one empties the journal', () => {
  const dir = buildSession([
    { id: 'A', description: 'first', role: 'r' },
    { id: 'B', description: 'second', role: 'r' },
  ]);
  const path = join(dir, 'tasks.csv');
  const before = readFileSync(path);
  const table = readTasksFile(path);
  Object.assign(table.rows[0]!, { status: 'completed', findings: 'the result' });
  const journal = new Journal(dir);
  journal.append(finish);

  const failures: unknown[] = [];
  const handlers = {
    merge: () => failures.push('merged'),
    canMerge: () => true,
    unmergeable: () => failures.push('unmergeable'),
    failed: (error: unknown) => failures.push(error),
  };
  const full = new Checkpointer(new TasksWriter(path, table, undefined, undefined, fillingDisk()), journal, handlers);
  expect(full.checkpoint()).toBe(false);
  expect(failures).toHaveLength(1);
  expect(failures[0]).toBeInstanceOf(WaveError);
  expect(failures[0]).toMatchObject({ code: 'WRITE_FAILED', message: expect.stringMatching(/^Cannot write .*tasks\.csv: wrote \d+ of \d+ bytes: no progress/) });
  expect(readFileSync(path)).toEqual(before);
  expect(readJournal(dir)).toEqual([finish]);
  expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);

  const roomy = new Checkpointer(new TasksWriter(path, table), journal, handlers);
  expect(roomy.checkpoint()).toBe(true);
  expect(readJournal(dir)).toEqual([]);
  expect(readTasksFile(path).rows[0]).toMatchObject({ id: 'A', status: 'completed', findings: 'the result' });
  journal.close();
});
