import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { WorkerReply, WorkerRequest } from '../../src/executors/messages.js';
import { AutoAnswers } from '../../src/interactive/answers.js';
import { InteractiveLane } from '../../src/interactive/lane.js';
import type { SessionFileWriter } from '../../src/layout.js';
import { analyzeTasks } from '../../src/pipelines/analyze/decompose.js';
import { DiscussionGate } from '../../src/pipelines/analyze/discussion-gate.js';

/** A writer that keeps what it is asked to write, and writes nothing. */
class RecordingWriter implements SessionFileWriter {
  readonly writes: { path: string; how: 'write' | 'append' | 'replace' | 'remove'; data: string }[] = [];
  constructor(readonly dir: string) {}
  write(path: string, data: string): void {
    this.writes.push({ path, how: 'write', data });
  }
  append(path: string, data: string): void {
    this.writes.push({ path, how: 'append', data });
  }
  replace(path: string, data: string): string {
    this.writes.push({ path, how: 'replace', data });
    return join(this.dir, path);
  }
  remove(path: string): void {
    this.writes.push({ path, how: 'remove', data: '' });
  }
}

describe('the interactive lane writes the session folder only through the writer it is given', () => {
  test('the discussion gate\'s discussion.md and the lane\'s result file go to the writer; the folder stays empty', async () => {
    const sessionDir = mkdtempSync(join(tmpdir(), 'csv-wave-lane-'));
    const rows = analyzeTasks({ topic: 'T', perspectives: ['a'], mode: 'deep' });
    const discussion = rows.find((row) => row.id === 'DISCUSS-001')!;
    const files = new RecordingWriter(sessionDir);
    const lane = new InteractiveLane({
      handlers: new Map([['discussant', new DiscussionGate()]]),
      rows: () => rows,
      config: { mode: 'deep', topic: 'T' } as never,
      sessionDir,
      files,
      runExecutor: async () => ({ kind: 'finished', status: 'completed' }) as WorkerReply,
      answers: new AutoAnswers(),
    });
    const result = await lane.run({ task: { id: discussion.id, row: discussion } } as unknown as WorkerRequest);

    expect(result.record).toEqual({ round: 1, decision: 'done' });
    expect(files.writes.map(({ path, how }) => [path, how])).toEqual([
      ['discussion.md', 'append'],
      [join('interactive', 'DISCUSS-001-result.json'), 'write'],
    ]);
    expect(files.writes[0]!.data).toMatch(/^### Round 1 - .*\n\nDone\n\n$/);
    expect(JSON.parse(files.writes[1]!.data)).toMatchObject({ task_id: 'DISCUSS-001', status: 'completed', round: 1, decision: 'done' });
    expect(readdirSync(sessionDir)).toEqual([]);
  });

  test('a handler that throws leaves its failed result file through the writer', async () => {
    const sessionDir = mkdtempSync(join(tmpdir(), 'csv-wave-lane-'));
    const files = new RecordingWriter(sessionDir);
    const lane = new InteractiveLane({
      handlers: new Map([['asker', { run: () => Promise.reject(new Error('no answer')) }]]),
      rows: () => [],
      config: {} as never,
      sessionDir,
      files,
      runExecutor: async () => ({ kind: 'finished', status: 'completed' }) as WorkerReply,
      answers: new AutoAnswers(),
    });
    await expect(lane.run({ task: { id: 'ASK', row: { id: 'ASK', role: 'asker' } } } as unknown as WorkerRequest)).rejects.toThrow('no answer');
    expect(files.writes.map(({ path }) => path)).toEqual([join('interactive', 'ASK-result.json')]);
    expect(JSON.parse(files.writes[0]!.data)).toMatchObject({ task_id: 'ASK', status: 'failed' });
    expect(readdirSync(sessionDir)).toEqual([]);
  });
});
