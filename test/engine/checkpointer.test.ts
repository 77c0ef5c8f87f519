import { readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
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

describe('a save of tasks.csv the checkpointer finds', () => {
  function setup() {
    const dir = buildSession([
      { id: 'A', description: 'first', role: 'r' },
      { id: 'B', description: 'second', role: 'r' },
    ]);
    const path = join(dir, 'tasks.csv');
    const { writer } = TasksWriter.read(path);
    const journal = new Journal(dir);
    const told: string[] = [];
    let canMerge = true;
    const checkpointer = new Checkpointer(writer, journal, {
      merge: (saved) => told.push(`merge ${saved.rows.map((row) => row.description).join(',')}`),
      canMerge: () => canMerge,
      unmergeable: (problem) => told.push(`unmergeable ${problem.code}`),
      failed: (error) => told.push(`failed ${String(error)}`),
    });
    return { path, journal, told, checkpointer, allow: (value: boolean) => (canMerge = value) };
  }

  test('is read and merged before tasks.csv is written, which then holds it', () => {
    const { path, journal, told, checkpointer } = setup();
    writeFileSync(path, readFileSync(path, 'utf8').replace('"second"', '"second, edited"'));
    expect(checkpointer.checkpoint()).toBe(true);
    expect(told).toEqual(['merge first,second, edited']);
    journal.close();
  });

  test('one that cannot be read gets a second look before the run gives up on it; nothing is written over it', () => {
    const { path, journal, told, checkpointer } = setup();
    writeFileSync(path, 'id,description,role\n"A,"first","r"\n');
    expect(checkpointer.checkpoint()).toBe(false);
    expect(told).toEqual([]);
    expect(checkpointer.checkpoint()).toBe(false);
    expect(told).toEqual(['unmergeable CSV_PARSE']);
    expect(checkpointer.unmergeable).toBe(true);
    expect(checkpointer.checkpoint(true)).toBe(false);
    expect(told).toEqual(['unmergeable CSV_PARSE']);
    expect(readFileSync(path, 'utf8')).toBe('id,description,role\n"A,"first","r"\n');
    journal.close();
  });

  test('the run\'s last write gives up at the first look; a save fixed before the second look is merged', () => {
    const first = setup();
    writeFileSync(first.path, 'id,description,role\n"A,"first","r"\n');
    expect(first.checkpointer.checkpoint(true)).toBe(false);
    expect(first.told).toEqual(['unmergeable CSV_PARSE']);
    first.journal.close();

    const second = setup();
    const good = readFileSync(second.path, 'utf8');
    writeFileSync(second.path, 'id,description,role\n"A,"first","r"\n');
    expect(second.checkpointer.checkpoint()).toBe(false);
    writeFileSync(second.path, good.replace('"first"', '"first, fixed"'));
    expect(second.checkpointer.checkpoint()).toBe(true);
    expect(second.told).toEqual(['merge first, fixed,second']);
    second.journal.close();
  });

  test('found while the scheduler is in the middle of an event: merged in the next turn', async () => {
    const { path, journal, told, checkpointer, allow } = setup();
    writeFileSync(path, readFileSync(path, 'utf8').replace('"first"', '"first, edited"'));
    allow(false);
    expect(checkpointer.checkpoint()).toBe(false);
    expect(told).toEqual([]);
    allow(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(told).toEqual(['merge first, edited,second']);
    journal.close();
  });
});
