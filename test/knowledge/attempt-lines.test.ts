import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { AttemptLinesReader } from '../../src/knowledge/attempt-lines.js';
import { kLayout } from '../../src/layout.js';

function line(task: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    run: 'r1', task, attempt: 1, wave: 1, start: '2026-01-01T00:00:00.000Z', end: '2026-01-01T00:00:01.500Z', duration_ms: 1500,
    outcome: 'completed', error_class: '', error: '', thread: 2, host: 'h', pid: 1, prompt_tokens: 0, completion_tokens: 0, ...extra,
  });
}

function session(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-attempt-lines-'));
  const file = join(dir, kLayout.attempts);
  mkdirSync(join(file, '..'), { recursive: true });
  return { dir, file };
}

describe('AttemptLinesReader', () => {
  test('keeps what the report needs of each line, times as numbers', () => {
    const { dir, file } = session();
    writeFileSync(file, `${line('A')}\n${line('B', { outcome: 'retried', error_class: 'transient', error: 'x', cached: true, saved_usd: 0.5, thread: null })}\n`);
    expect(new AttemptLinesReader(dir).read()).toEqual([
      { run: 'r1', task: 'A', attempt: 1, startMs: Date.parse('2026-01-01T00:00:00.000Z'), endMs: Date.parse('2026-01-01T00:00:01.500Z'), duration_ms: 1500, outcome: 'completed', error_class: '', thread: 2, cached: false, saved_usd: 0 },
      { run: 'r1', task: 'B', attempt: 1, startMs: Date.parse('2026-01-01T00:00:00.000Z'), endMs: Date.parse('2026-01-01T00:00:01.500Z'), duration_ms: 1500, outcome: 'retried', error_class: 'transient', thread: null, cached: true, saved_usd: 0.5 },
    ]);
  });

  test('a block at a time: every line once, across block ends, a line longer than a block, a torn last line read when whole, a replaced file read again', () => {
    const { dir, file } = session();
    const reader = new AttemptLinesReader(dir, 100);
    const tasks = Array.from({ length: 50 }, (_, i) => `T${i}`);
    writeFileSync(file, tasks.slice(0, 30).map((task) => `${line(task)}\n`).join(''));
    expect(reader.read().map((l) => l.task)).toEqual(tasks.slice(0, 30));
    const long = line('LONG', { outcome: 'failed', error_class: 'task-failure', error: 'e'.repeat(2000) });
    const torn = line('T30');
    appendFileSync(file, `${long}\nnot json\n${torn.slice(0, 40)}`);
    expect(reader.read().map((l) => l.task)).toEqual([...tasks.slice(0, 30), 'LONG']);
    appendFileSync(file, `${torn.slice(40)}\n${tasks.slice(31).map((task) => `${line(task)}\n`).join('')}`);
    expect(reader.read().map((l) => l.task)).toEqual([...tasks.slice(0, 30), 'LONG', ...tasks.slice(30)]);
    writeFileSync(file, `${line('NEW')}\n`);
    expect(reader.read().map((l) => l.task)).toEqual(['NEW']);
  });
});
