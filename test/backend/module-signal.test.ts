/**
 * A module's ctx.signal is made when the module first reads it (issue 12: most modules
 * never do). Read after the attempt timed out, it is already aborted, with the reason.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { ModuleExecutor } from '../../src/executors/module.js';

const kModule = new URL('./fixtures/late-signal.mjs', import.meta.url).pathname;

describe('ModuleExecutor ctx.signal', () => {
  test('read only after the timeout, it is aborted with the timeout as its reason', async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-signal-'));
    const release = join(marks, 'release');
    const seen = join(marks, 'seen');
    const task = { id: 'T', wave: 1, attempt: 1, session: 's', row: { id: 'T', role: 'r', release, seen }, prev_context: '', upstream: { deps: [], wisdom: {}, warnings: [] } };
    const outcome = await new ModuleExecutor(kModule).run(task, { signal: new AbortController().signal, timeoutMs: 50 });
    expect(outcome).toEqual({ kind: 'error', errorClass: 'timeout', error: 'Timed out after 0.05s' });
    writeFileSync(release, '');
    await vi.waitFor(() => expect(JSON.parse(readFileSync(seen, 'utf8'))).toEqual({ aborted: true, reason: 'Timed out after 0.05s' }), { timeout: 60_000, interval: 20 });
  });

  test('read while the run aborts, it follows the run signal', async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-signal-'));
    const release = join(marks, 'release');
    const seen = join(marks, 'seen');
    const task = { id: 'T', wave: 1, attempt: 1, session: 's', row: { id: 'T', role: 'r', release, seen }, prev_context: '', upstream: { deps: [], wisdom: {}, warnings: [] } };
    const run = new AbortController();
    run.abort(new Error('the run stopped'));
    writeFileSync(release, '');
    await expect(new ModuleExecutor(kModule).run(task, { signal: run.signal, timeoutMs: 0 })).resolves.toEqual({ kind: 'result', result: { findings: 'late' } });
    expect(JSON.parse(readFileSync(seen, 'utf8'))).toEqual({ aborted: true, reason: 'the run stopped' });
  });
});
