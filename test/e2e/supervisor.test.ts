import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { resultText } from '../helpers/test-files.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';

/** A checkpoint row: its command prints the description, a result with this verdict. */
const checkpoint = (id: string, deps: string, result: Record<string, unknown>) => ({
  id,
  description: resultText({ status: 'completed', ...result }),
  role: 'supervisor',
  deps,
});

describe('supervisor checkpoints', () => {
  test('block skips everything downstream, transitively, naming the checkpoint; the rest runs; exit 1', async () => {
    const dir = buildSession([
      { id: 'DRAFT', description: 'draft done', role: 'writer' },
      checkpoint('REVIEW', 'DRAFT', { findings: 'The draft cites no sources.', supervision_verdict: 'block' }),
      { id: 'EDIT', description: 'edit done', role: 'writer', deps: 'REVIEW' },
      { id: 'PUBLISH', description: 'publish done', role: 'writer', deps: 'EDIT', context_from: 'EDIT' },
      { id: 'SIDE', description: 'side done', role: 'writer' },
      { id: 'SIDE-2', description: 'side 2 done', role: 'writer', deps: 'SIDE;DRAFT' },
    ]);
    const run = await runCli('run', dir, '--cmd', `${kLogRun}; printf %s {description}`);
    expect(run.code).toBe(1);

    const rows = readRows(dir);
    expect(rows.get('REVIEW')).toMatchObject({ status: 'completed', findings: 'The draft cites no sources.', error: '' });
    const blocked = 'Blocked by checkpoint REVIEW: The draft cites no sources.';
    expect(rows.get('EDIT')).toMatchObject({ status: 'skipped', error: blocked });
    expect(rows.get('PUBLISH')).toMatchObject({ status: 'skipped', error: blocked });
    for (const id of ['DRAFT', 'SIDE', 'SIDE-2']) expect(rows.get(id)!.status, id).toBe('completed');
    expect(Object.fromEntries(countRuns(dir))).toEqual({ DRAFT: 1, REVIEW: 1, SIDE: 1, 'SIDE-2': 1 });
  });

  test('warn appends to wisdom/issues.md and the run goes on (module executor)', async () => {
    const module = [
      "import { appendFileSync } from 'node:fs';",
      "import { join } from 'node:path';",
      'export default async function run(task) {',
      "  appendFileSync(join(task.session, 'runs.log'), `${task.id}\\n`);",
      "  if (task.row.role !== 'supervisor') return { findings: `${task.id} ok` };",
      "  return { findings: 'Coverage is thin in chapter 2.', supervision_verdict: 'warn', supervision_score: 0.6 };",
      '}',
      '',
    ].join('\n');
    const dir = buildSession(
      [
        { id: 'DRAFT', description: 'draft', role: 'writer' },
        { id: 'REVIEW', description: 'review', role: 'supervisor', deps: 'DRAFT' },
        { id: 'EDIT', description: 'edit', role: 'writer', deps: 'REVIEW' },
        { id: 'PUBLISH', description: 'publish', role: 'writer', deps: 'EDIT' },
      ],
      { files: { 'verdicts.mjs': module } },
    );
    expect(existsSync(join(dir, 'wisdom', 'issues.md'))).toBe(false);
    const run = await runCli('run', dir, '--module', join(dir, 'verdicts.mjs'));
    expect(run.code, run.stderr).toBe(0);

    const rows = readRows(dir);
    for (const id of ['DRAFT', 'REVIEW', 'EDIT', 'PUBLISH']) expect(rows.get(id)!.status, id).toBe('completed');
    expect(Object.fromEntries(countRuns(dir))).toEqual({ DRAFT: 1, REVIEW: 1, EDIT: 1, PUBLISH: 1 });
    expect(readFileSync(join(dir, 'wisdom', 'issues.md'), 'utf8')).toBe(
      '- [REVIEW] Supervisor checkpoint warned (score 0.6): Coverage is thin in chapter 2.\n',
    );
  });
});
