import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { Journal, readJournal, readOpenBatches, recoverRows } from '../../src/session/journal.js';
import { emptyRow } from '../../src/core/task.js';

function sessionDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-batch-journal-'));
  mkdirSync(join(dir, '.csv-wave'));
  return dir;
}

const batch = { type: 'batch' as const, batch: 'batch_1', input_file: 'file_1', requests: [{ custom_id: 'A/a1/r1', task: 'A', request: 1 }] };

describe('batches in the journal', () => {
  test('an open batch outlives checkpoints (tasks.csv cannot hold it); its end removes it', () => {
    const dir = sessionDir();
    const journal = new Journal(dir);
    journal.append({ type: 'start', id: 'A', attempt: 1 });
    journal.append(batch);
    journal.flush();
    journal.checkpoint();
    expect(readJournal(dir)).toEqual([]);
    expect(readOpenBatches(dir)).toEqual([batch]);
    journal.checkpoint();
    expect(readOpenBatches(dir)).toEqual([batch]);
    journal.append({ type: 'batch-end', batch: 'batch_1' });
    journal.flush();
    expect(readOpenBatches(dir)).toEqual([]);
    journal.checkpoint();
    expect(readOpenBatches(dir)).toEqual([]);
    journal.close();
  });

  test("an earlier run's open batches are carried through the next run's first checkpoint", () => {
    const dir = sessionDir();
    const first = new Journal(dir);
    first.append(batch);
    first.close();
    const second = new Journal(dir);
    second.carry(readOpenBatches(dir));
    second.checkpoint();
    expect(readOpenBatches(dir)).toEqual([batch]);
    second.close();
  });

  test('a launch outlives checkpoints until its batch is journaled (which takes its place) or it is ended', () => {
    const dir = sessionDir();
    const journal = new Journal(dir);
    const launch = { type: 'batch-launch' as const, launch: 'L1', ts: '2025-01-01T00:00:00.000Z', requests: batch.requests };
    const other = { ...launch, launch: 'L2' };
    journal.append(launch);
    journal.append(other);
    journal.flush();
    journal.checkpoint();
    expect(readOpenBatches(dir)).toEqual([launch, other]);
    journal.append({ ...batch, launch: 'L1' });
    journal.append({ type: 'batch-launch-end', launch: 'L2' });
    journal.flush();
    expect(readOpenBatches(dir)).toEqual([{ ...batch, launch: 'L1' }]);
    journal.checkpoint();
    expect(readOpenBatches(dir)).toEqual([{ ...batch, launch: 'L1' }]);
    journal.close();
  });

  test('a kill between emptying the journal at a checkpoint and writing its open batches back loses none: they were kept first', () => {
    const dir = sessionDir();
    const journal = new Journal(dir);
    const launch = { type: 'batch-launch' as const, launch: 'L1', ts: '2025-01-01T00:00:00.000Z', requests: batch.requests };
    journal.append(batch);
    journal.append(launch);
    journal.flush();
    journal.checkpoint();
    journal.close();
    // What such a kill leaves: the journal empty (its truncation done, its rewrite not).
    writeFileSync(join(dir, '.csv-wave', 'journal.ndjson'), '');
    expect(readOpenBatches(dir)).toEqual([batch, launch]);
    // Ends written after the checkpoint close them; once none is open, the next checkpoint removes the file.
    const next = new Journal(dir);
    next.append({ type: 'batch-end', batch: 'batch_1' });
    next.append({ type: 'batch-launch-end', launch: 'L1' });
    next.flush();
    expect(readOpenBatches(dir)).toEqual([]);
    next.checkpoint();
    next.close();
    expect(existsSync(join(dir, '.csv-wave', 'carried.ndjson'))).toBe(false);
    expect(readOpenBatches(dir)).toEqual([]);
  });

  test('batch entries change no task when the journal is replayed', () => {
    const dir = sessionDir();
    const journal = new Journal(dir);
    journal.append({ type: 'start', id: 'A', attempt: 1 });
    journal.append({ type: 'batch-launch', launch: 'L1', ts: '2025-01-01T00:00:00.000Z', requests: batch.requests });
    journal.append(batch);
    journal.append({ type: 'batch-launch-end', launch: 'L1' });
    journal.close();
    const row = { ...emptyRow(), id: 'A', status: 'pending' };
    const rows = [row];
    expect(recoverRows(rows, dir)).toEqual({ recovered: 1, interrupted: 1 });
    expect(rows).toHaveLength(1);
    expect(row.status).toBe('pending');
  });
});
