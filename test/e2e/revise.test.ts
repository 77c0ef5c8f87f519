import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { readCsvRecords } from '../helpers/test-files.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';

const kCmd = `${kLogRun}; echo "ran $CSV_WAVE_TASK_ID"`;
const kFeedback = 'Count hyphenated words once, not twice';

/** Every file of the session (hidden ones too) and its content. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[relative(dir, path)] = readFileSync(path, 'utf8');
  }
  return files;
}

describe('revise', () => {
  test('keeps the width of the existing ids: W2-05 gets W2-06, not W2-006', async () => {
    const dir = buildSession([
      { id: 'W2-04', description: 'four', role: 'step' },
      { id: 'W2-05', description: 'five', role: 'step', deps: 'W2-04' },
      { id: 'W2-06-NOTE', description: 'another prefix', role: 'step' },
    ]);
    const revise = await runCli('revise', dir, 'W2-05', '--feedback', kFeedback, '--dry-run', '--json');
    expect(revise.code, revise.stderr).toBe(0);
    expect(JSON.parse(revise.stdout)).toMatchObject({ revision: 'W2-06' });
    const wide = buildSession([{ id: 'IDEA-001', description: 'one', role: 'step' }]);
    const seedStyle = await runCli('revise', wide, 'IDEA-001', '--feedback', kFeedback, '--dry-run', '--json');
    expect(JSON.parse(seedStyle.stdout)).toMatchObject({ revision: 'IDEA-002' });
  });

  test('adds a revision task, rewires and resets the dependents; --dry-run writes nothing; run runs only those', async () => {
    const dir = buildSession([
      { id: 'COUNT-A', description: 'count a', role: 'count' },
      { id: 'COUNT-B', description: 'count b', role: 'count' },
      { id: 'MERGE', title: 'Merge the counts', description: 'merge the counts', role: 'merge', deps: 'COUNT-A;COUNT-B', context_from: 'COUNT-A;COUNT-B' },
      { id: 'REPORT', description: 'report', role: 'report', deps: 'MERGE', context_from: 'COUNT-A;MERGE' },
      { id: 'FINAL', description: 'final', role: 'report', deps: 'REPORT', context_from: 'MERGE;REPORT' },
      { id: 'SIDE', description: 'side', role: 'count', deps: 'COUNT-A' },
    ]);
    const first = await runCli('run', dir, '--cmd', kCmd);
    expect(first.code, first.stderr).toBe(0);
    const ids = ['COUNT-A', 'COUNT-B', 'MERGE', 'REPORT', 'FINAL', 'SIDE'];
    expect(Object.fromEntries(countRuns(dir))).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));

    const before = snapshot(dir);
    const dry = await runCli('revise', dir, 'MERGE', '--feedback', kFeedback, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^Would add MERGE-rev-1 \(revises MERGE, role merge\)$/m);
    expect(dry.stdout).toMatch(/would reset to pending: REPORT, FINAL/);
    expect(snapshot(dir)).toEqual(before);

    const revise = await runCli('revise', dir, 'MERGE', '--feedback', kFeedback, '--json');
    expect(revise.code, revise.stderr).toBe(0);
    expect(JSON.parse(revise.stdout)).toEqual({ revision: 'MERGE-rev-1', rewired: ['REPORT'], reset: ['REPORT', 'FINAL'], written: true });

    const rows = readRows(dir);
    expect([...rows.keys()]).toEqual([...ids, 'MERGE-rev-1']);
    const revision = rows.get('MERGE-rev-1')!;
    expect(revision).toMatchObject({ role: 'merge', deps: 'MERGE', context_from: 'MERGE', status: 'pending', gc_round: '1', wave: '3' });
    expect(revision.description).toContain(kFeedback);
    expect(rows.get('REPORT')).toMatchObject({ deps: 'MERGE-rev-1', context_from: 'COUNT-A;MERGE;MERGE-rev-1', status: 'pending', findings: '', wave: '4' });
    // A reset task that read MERGE reads its revision too.
    expect(rows.get('FINAL')).toMatchObject({ context_from: 'MERGE;MERGE-rev-1;REPORT', status: 'pending', findings: '', wave: '5' });
    for (const id of ['COUNT-A', 'COUNT-B', 'MERGE', 'SIDE']) expect(rows.get(id)!.status, id).toBe('completed');
    expect(rows.get('MERGE')!.findings).toBe('ran MERGE');

    const second = await runCli('run', dir, '--cmd', kCmd);
    expect(second.code, second.stderr).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({
      ...Object.fromEntries(ids.map((id) => [id, 1])),
      'MERGE-rev-1': 1,
      REPORT: 2,
      FINAL: 2,
    });
    const after = readRows(dir);
    for (const row of after.values()) expect(row.status, row.id).toBe('completed');
    const report = readCsvRecords(join(dir, 'wave-4.csv')).find((record) => record['id'] === 'REPORT')!;
    expect(report['prev_context']).toBe('[Task COUNT-A] ran COUNT-A\n[Task MERGE] ran MERGE\n[Task MERGE-rev-1] ran MERGE-rev-1');
    const final = readCsvRecords(join(dir, 'wave-5.csv')).find((record) => record['id'] === 'FINAL')!;
    expect(final['prev_context']).toBe('[Task MERGE] ran MERGE\n[Task MERGE-rev-1] ran MERGE-rev-1\n[Task REPORT] ran REPORT');
  });

  test('a task that does not exist, or no feedback, is a usage error (exit 2) and writes nothing', async () => {
    const dir = buildSession([{ id: 'ONLY', description: 'only', role: 'r' }]);
    const before = snapshot(dir);
    const missing = await runCli('revise', dir, 'NOPE', '--feedback', 'x');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no task NOPE/);
    expect((await runCli('revise', dir, 'ONLY', '--feedback', '  ')).code).toBe(2);
    expect(snapshot(dir)).toEqual(before);
  });
});
