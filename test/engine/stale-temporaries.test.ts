import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { removeStaleTemporaries } from '../../src/session/stale-temporaries.js';

/** The pid of a process that has ended (and was reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid!;
}

describe('removeStaleTemporaries', () => {
  test("deletes the atomic-write temporaries of tasks.csv and wave files that a gone process left, and nothing else", () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-stale-'));
    const gone = deadPid();
    const names = [
      `tasks.csv.${gone}.tmp`,
      `wave-3.csv.${gone}.tmp`,
      `tasks.csv.${process.pid}.tmp`,
      `wave-1.csv.${process.pid}.tmp`,
      `other.csv.${gone}.tmp`,
      `wave-x.csv.${gone}.tmp`,
      `tasks.csv.tmp`,
      'tasks.csv',
    ];
    for (const name of names) writeFileSync(join(dir, name), 'x');
    const warnings: string[] = [];
    removeStaleTemporaries(dir, 'tasks.csv', (message) => warnings.push(message));
    expect(readdirSync(dir).sort()).toEqual(names.slice(2).sort());
    expect(warnings).toEqual([]);
  });

  test("another tasks file's name: only its temporaries are its own", () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-stale-'));
    const gone = deadPid();
    writeFileSync(join(dir, `tasks.csv.${gone}.tmp`), 'x');
    writeFileSync(join(dir, `plan.csv.${gone}.tmp`), 'x');
    removeStaleTemporaries(dir, 'plan.csv', () => {});
    expect(readdirSync(dir)).toEqual([`tasks.csv.${gone}.tmp`]);
  });

  test('one that cannot be deleted is left with a warning, and the others still go', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-stale-'));
    const gone = deadPid();
    // A non-empty folder by that name: deleting it fails whoever runs the test (root too).
    mkdirSync(join(dir, `tasks.csv.${gone}.tmp`));
    writeFileSync(join(dir, `tasks.csv.${gone}.tmp`, 'inside'), 'x');
    writeFileSync(join(dir, `wave-2.csv.${gone}.tmp`), 'x');
    const warnings: string[] = [];
    removeStaleTemporaries(dir, 'tasks.csv', (message) => warnings.push(message));
    expect(readdirSync(dir)).toEqual([`tasks.csv.${gone}.tmp`]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^Cannot delete tasks\\.csv\\.${gone}\\.tmp, left by an interrupted run: `));
  });
});
