import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { WaveError } from '../../src/errors.js';
import { Journal, readJournal, type JournalEntry } from '../../src/session/journal.js';

// A journal write that fails (a full disk) must neither throw from the event loop nor
// lose or tear entries: writeSync is made to fail on request, after writing half.
const failing = vi.hoisted(() => ({ writes: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    writeSync: (fd: number, buffer: Uint8Array, offset?: number) => {
      if (failing.writes > 0) {
        failing.writes--;
        const start = offset ?? 0;
        const half = Math.max(1, Math.floor((buffer.length - start) / 2));
        if (failing.writes % 2 === 1) return real.writeSync(fd, buffer, start, half);
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      return real.writeSync(fd, buffer, offset);
    },
  };
});

const start = (id: string): JournalEntry => ({ type: 'start', id, attempt: 1 });

describe('a journal write that fails', () => {
  it('tells onError, keeps what it did not write, and goes on from there at the next flush', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-journal-'));
    const errors: WaveError[] = [];
    const journal = new Journal(dir, (error) => errors.push(error));
    journal.append(start('a'));
    expect(journal.flush()).toBe(true);

    journal.append(start('b'));
    journal.append(start('c'));
    failing.writes = 2; // half of the text is written, then the disk is full
    expect(journal.flush()).toBe(false);
    expect(errors.map((error) => [error.code, error.message])).toEqual([['IO', 'Cannot write the journal: wrote 38 of 76 bytes: ENOSPC: no space left on device, write']]);
    // Half of b and c is in the file: a line cut short, skipped when read.
    expect(readJournal(dir).length).toBeLessThan(3);

    journal.append(start('d'));
    expect(journal.flush()).toBe(true);
    expect(readJournal(dir)).toEqual([start('a'), start('b'), start('c'), start('d')]);
    journal.close();
    // Nothing torn or written twice.
    expect(fs.readFileSync(join(dir, '.csv-wave', 'journal.ndjson'), 'utf8').split('\n').filter((line) => line !== '')).toHaveLength(4);
  });

  it('a failure in the flush of the event loop goes to onError, not to an uncaught exception', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-journal-'));
    const errors: WaveError[] = [];
    const journal = new Journal(dir, (error) => errors.push(error));
    failing.writes = 1;
    journal.append(start('a'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toHaveLength(1);
    expect(readJournal(dir)).toEqual([]);
    // A checkpoint (tasks.csv now holds everything) drops what could not be written.
    journal.checkpoint();
    journal.append(start('b'));
    journal.close();
    expect(readJournal(dir)).toEqual([start('b')]);
  });
});
