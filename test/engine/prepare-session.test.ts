import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { JournalEntry } from '../../src/session/journal.js';
import { SessionLock } from '../../src/session/lock.js';
import { planTasks, prepareSession, writeFirst } from '../../src/session/prepare-session.js';
import { openSession } from '../../src/session/session.js';
import { buildSession } from '../helpers/session-builder.js';
import { expectWaveError } from '../helpers/wave-error.js';

const kHeader = 'id,title,description,role,deps,context_from,exec_mode,wave,status,findings,error';

/** A session a killed run left: a in progress with its finish journaled, b in progress with none. */
function interruptedSession(): string {
  const dir = buildSession(
    [
      kHeader,
      '"a","A","first","r","","","csv-wave","","in_progress","",""',
      '"b","B","second","r","","","csv-wave","","in_progress","",""',
      '"c","C","third","r","a;b","","csv-wave","","pending","",""',
      '',
    ].join('\n'),
    { session: JSON.stringify({ pipeline: 'generic' }) },
  );
  const entries: JournalEntry[] = [
    { type: 'start', id: 'a', attempt: 1 },
    { type: 'finish', id: 'a', status: 'completed', findings: 'a done', gc_signal: '', severity_summary: '', error: '' },
  ];
  mkdirSync(join(dir, '.csv-wave'));
  writeFileSync(join(dir, '.csv-wave', 'journal.ndjson'), entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
  return dir;
}

function lockIsFree(dir: string): boolean {
  try {
    SessionLock.acquire(dir, () => {}).release();
    return true;
  } catch {
    return false;
  }
}

describe('prepareSession', () => {
  test('read only (validate, plan, graph): no lock taken, the journal not applied, the pipeline settled from the roles', () => {
    const dir = interruptedSession();
    const lock = SessionLock.acquire(dir, () => {});
    try {
      const session = openSession(dir);
      const read = prepareSession(session);
      expect(read.table.rows.map((row) => row.status)).toEqual(['in_progress', 'in_progress', 'pending']);
      expect(session.config.pipeline).toBe('generic');
      expect('lock' in read).toBe(false);
    } finally {
      lock.release();
    }
  });

  test('a run holds the lock, applies the journal and tells what it gave back', () => {
    const dir = interruptedSession();
    const warnings: string[] = [];
    const held = prepareSession(openSession(dir), { hold: { warn: (message) => warnings.push(message), run: true } });
    try {
      expect(held.table.rows.map((row) => [row.status, row.findings])).toEqual([
        ['completed', 'a done'],
        ['pending', ''],
        ['pending', ''],
      ]);
      expect(warnings).toEqual([
        'Recovered 1 task state(s) from the journal of an earlier run',
        '1 task(s) left in progress by an interrupted run go back to pending',
      ]);
      expect(lockIsFree(dir)).toBe(false);
    } finally {
      held.lock.release();
    }
    expect(lockIsFree(dir)).toBe(true);
  });

  test('a revise applies the journal without a word', () => {
    const dir = interruptedSession();
    const warnings: string[] = [];
    const held = prepareSession(openSession(dir), { hold: { warn: (message) => warnings.push(message), run: false } });
    held.lock.release();
    expect(held.table.rows.map((row) => row.status)).toEqual(['completed', 'pending', 'pending']);
    expect(warnings).toEqual([]);
  });

  test('a tasks.csv that cannot be read leaves the lock free', () => {
    const dir = buildSession(`${kHeader}\n"a","A","first","r","","","csv-wave","","pending","\n`, { session: null });
    expectWaveError(() => prepareSession(openSession(dir), { hold: { warn: () => {}, run: true } }), { code: 'CSV_PARSE' });
    expect(lockIsFree(dir)).toBe(true);
  });

  test("a folder that holds another tasks file's session is refused before the lock is taken", () => {
    const dir = interruptedSession();
    mkdirSync(join(dir, '.csv-wave'), { recursive: true });
    writeFileSync(join(dir, '.csv-wave', 'tasks-file'), 'other.csv\n');
    expectWaveError(() => prepareSession(openSession(dir), { hold: { warn: () => {}, run: true } }), {
      code: 'USAGE',
      message: /belongs to other\.csv/,
    });
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);
  });

  test('bom: tasks.csv is written with one whatever it was read with', () => {
    const dir = interruptedSession();
    expect(prepareSession(openSession(dir)).table.format.bom).toBe(false);
    expect(prepareSession(openSession(dir), { bom: true }).table.format.bom).toBe(true);
  });
});

describe('planTasks', () => {
  test('the waves of valid tasks', () => {
    const plan = planTasks(prepareSession(openSession(interruptedSession())));
    expect([...plan.waves]).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 2],
    ]);
  });

  test('INVALID_TASKS lists every problem, under the headline given or the count', () => {
    const dir = buildSession(`${kHeader}\n"a","A","first","r","zz","","csv-wave","","pending","",""\n"a","A","dup","r","","","csv-wave","","pending","",""\n`, { session: null });
    const read = prepareSession(openSession(dir));
    const error = expectWaveError(() => planTasks(read), { code: 'INVALID_TASKS', message: /^\d+ problem\(s\) in / });
    expect(error.violations.length).toBeGreaterThanOrEqual(2);
    expect(error.message).toBe(`${error.violations.length} problem(s) in ${read.session.displayPath}`);
    expectWaveError(() => planTasks(read, 'The change would make it invalid'), {
      code: 'INVALID_TASKS',
      message: 'The change would make it invalid',
    });
  });
});

describe('writeFirst', () => {
  test('claims the folder for this tasks file and writes tasks.csv from memory', () => {
    const dir = interruptedSession();
    const held = prepareSession(openSession(dir), { hold: { warn: () => {}, run: true } });
    try {
      writeFirst(held, { edited: 'edited' });
    } finally {
      held.lock.release();
    }
    expect(readFileSync(join(dir, '.csv-wave', 'tasks-file'), 'utf8')).toBe('tasks.csv\n');
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toContain('"a done"');
  });

  test('a tasks.csv saved by someone else since it was read is not overwritten: TASKS_EDITED with the message given', () => {
    const dir = interruptedSession();
    const held = prepareSession(openSession(dir), { hold: { warn: () => {}, run: true } });
    const edit = `${kHeader}\n"a","A","first","r","","","csv-wave","","pending","",""\n`;
    writeFileSync(join(dir, 'tasks.csv'), edit);
    try {
      expectWaveError(() => writeFirst(held, { edited: 'Someone saved it; nothing was run.' }), {
        code: 'TASKS_EDITED',
        message: 'Someone saved it; nothing was run.',
      });
    } finally {
      held.lock.release();
    }
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(edit);
  });
});
