import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { TasksWriter } from '../../src/session/tasks-writer.js';
import { buildSession } from '../helpers/session-builder.js';

// A person's save that lands on the new tasks.csv right after csv-wave renamed it in place,
// before csv-wave looked at the path again: simulated by a rename that saves right after.
const hook = vi.hoisted(() => ({ afterRename: undefined as (() => void) | undefined }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const renameSync = (from: string, to: string): void => {
    fs.renameSync(from, to);
    const after = hook.afterRename;
    hook.afterRename = undefined;
    after?.();
  };
  return { ...fs, default: fs, renameSync };
});

describe('TasksWriter and a save right after its rename', () => {
  test('the save is an edit by someone else: never taken for the writer\'s own, never written over', () => {
    const dir = buildSession([{ id: 'A', description: 'first' }]);
    const path = join(dir, 'tasks.csv');
    const { table, writer } = TasksWriter.read(path);
    table.rows[0]!.description = 'changed by the run';
    const saved = readFileSync(path, 'utf8').replace('first', 'by a person');
    hook.afterRename = () => writeFileSync(path, saved);
    expect(writer.write()).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe(saved);
    // The next write sees the save and leaves it for the run to merge.
    expect(writer.editedByOthers()).toBe(true);
    expect(writer.write()).toBe(false);
    expect(readFileSync(path, 'utf8')).toBe(saved);
  });
});
