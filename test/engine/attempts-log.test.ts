import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readJournal } from '../../src/session/journal.js';
import { attemptLineSchema, type AttemptLine } from '../../src/schema/attempt.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

function attempts(dir: string): AttemptLine[] {
  const text = readFileSync(join(dir, 'attempts.ndjson'), 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text.trimEnd().split('\n').map((line) => attemptLineSchema.parse(JSON.parse(line)));
}

/** OK completes; BAD fails; FLAKY exits 75 (transient) once, then completes; CHILD is skipped (no attempt). */
const kCmd =
  'case {id} in BAD) echo "it broke" >&2; exit 4;; ' +
  'FLAKY) if [ -e flaky.once ]; then echo fine; else touch flaky.once; echo "try later" >&2; exit 75; fi;; ' +
  '*) echo done;; esac';

describe('attempts.ndjson', () => {
  test('one schema-valid line per finished attempt: retries, failures, no line for a skipped task; appended across runs', async () => {
    const dir = buildSession([
      { id: 'OK', description: 'o', role: 'r' },
      { id: 'BAD', description: 'b', role: 'r' },
      { id: 'FLAKY', description: 'f', role: 'r' },
      { id: 'CHILD', description: 'c', role: 'r', deps: 'BAD' },
    ]);
    const first = await runCli('run', dir, '--cmd', kCmd, '--retries', '2', '--retry-delay', '0.01');
    expect(first.code, first.stderr).toBe(1);
    const lines = attempts(dir);
    expect(lines.map((l) => [l.task, l.attempt, l.wave, l.outcome, l.error_class]).sort()).toEqual(
      [
        ['OK', 1, 1, 'completed', ''],
        ['BAD', 1, 1, 'failed', 'task-failure'],
        ['FLAKY', 1, 1, 'retried', 'transient'],
        ['FLAKY', 2, 1, 'completed', ''],
      ].sort(),
    );
    expect(new Set(lines.map((l) => l.run)).size).toBe(1);
    for (const line of lines) {
      expect(Date.parse(line.end) - Date.parse(line.start)).toBe(line.duration_ms);
      expect(line.start).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // Commands run on a worker thread, whose id is recorded.
      expect(line.thread).toBeTypeOf('number');
      expect(line.pid).toBeGreaterThan(0);
    }
    expect(lines.find((l) => l.task === 'BAD')!.error).toMatch(/it broke/);
    const flaky = lines.filter((l) => l.task === 'FLAKY');
    expect(Date.parse(flaky[1]!.start)).toBeGreaterThanOrEqual(Date.parse(flaky[0]!.end));

    // A second run appends its own lines under a new run id.
    const again = await runCli('rerun', dir, '--task', 'OK', '--cmd', kCmd);
    expect(again.code).toBe(1);
    const after = attempts(dir);
    expect(after.slice(0, lines.length)).toEqual(lines);
    expect(after.slice(lines.length).map((l) => [l.task, l.outcome])).toEqual([['OK', 'completed']]);
    expect(after.at(-1)!.run).not.toBe(lines[0]!.run);
  });

  test('kill -9 loses no attempt line of a result the journal accepted', async () => {
    // Q1 → Q2 → Q3 finish one after another; W1 and W2 wait for a file that is only
    // created after the kill, so the run is killed with work in flight.
    const wait = 'while [ ! -e release ]; do sleep 0.05; done; echo waited';
    const dir = buildSession([
      { id: 'W1', description: 'w', role: 'r' },
      { id: 'W2', description: 'w', role: 'r' },
      { id: 'Q1', description: 'q', role: 'r' },
      { id: 'Q2', description: 'q', role: 'r', deps: 'Q1' },
      { id: 'Q3', description: 'q', role: 'r', deps: 'Q2' },
    ]);
    const cmd = `case {id} in W*) ${wait};; *) echo quick;; esac`;
    const run = spawnCli('run', dir, '--cmd', cmd, '--schedule', 'eager', '--concurrency', '4');
    try {
      await waitFor(() => (run.stdoutSoFar().match(/\[DONE\] Q/g) ?? []).length >= 3, 'three quick tasks done');
      run.child.kill('SIGKILL');
      await run.exited;
    } finally {
      writeFileSync(join(dir, 'release'), '');
    }
    const accepted = new Set<string>();
    for (const [id, row] of readRows(dir)) if (row.status === 'completed') accepted.add(id);
    for (const entry of readJournal(dir)) if (entry.type === 'finish') accepted.add(entry.id);
    // Q1 was accepted long before the kill (Q2 and Q3 ran after it, in later turns).
    expect(accepted.has('Q1')).toBe(true);
    expect(existsSync(join(dir, 'attempts.ndjson'))).toBe(true);
    const logged = new Set(attempts(dir).filter((l) => l.outcome === 'completed').map((l) => l.task));
    for (const id of accepted) expect(logged.has(id), `${id} accepted but not in attempts.ndjson`).toBe(true);
  });
});
