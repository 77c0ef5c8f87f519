import { describe, expect, it } from 'vitest';
import { attachReporter } from '../../src/cli/progress.js';
import { errorLine, kMaxErrorLineChars } from '../../src/text/error-line.js';
import { RunEmitter } from '../../src/events/events.js';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

// An error line shows the whole first line of the error: where it says what went wrong.
// Before, the plain [FAIL] line kept 60 characters and cut the reason mid-word
// (`Cannot reach the model server at http://127.0.0.1:8099/v1: c`).

const kUnreachable = 'Cannot reach the model server at http://127.0.0.1:8099/v1: connect ECONNREFUSED 127.0.0.1:8099';

describe('errorLine', () => {
  it('keeps a first line whole, however long, up to the bound', () => {
    expect(errorLine(kUnreachable)).toBe(kUnreachable);
    const long = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    expect(long.length).toBeLessThan(kMaxErrorLineChars);
    expect(errorLine(long)).toBe(long);
  });

  it('joins the next lines while each fits whole, and marks a cut at a line break with …', () => {
    expect(errorLine('Command exited with code 3:\nno such file\n')).toBe('Command exited with code 3: no such file');
    const second = 'x'.repeat(kMaxErrorLineChars);
    expect(errorLine(`${kUnreachable}\n${second}\nthird`)).toBe(`${kUnreachable} …`);
  });

  it('cuts a one-line monster at a word boundary, with …', () => {
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
    const line = errorLine(words);
    expect(line.endsWith('…')).toBe(true);
    expect(line.length).toBeLessThanOrEqual(kMaxErrorLineChars);
    const kept = line.slice(0, -1);
    // Every word kept is a whole word of the error, in order.
    expect(words.startsWith(kept)).toBe(true);
    expect(words[kept.length]).toBe(' ');
  });

  it('a stretch without spaces is cut where it must be, still with …', () => {
    const line = errorLine(`see ${'a'.repeat(1000)}`);
    expect(line).toHaveLength(kMaxErrorLineChars);
    expect(line.endsWith('a…')).toBe(true);
  });

  it('blank lines and runs of spaces do not count; an empty error is empty', () => {
    expect(errorLine('\n\n  first   line \r\n\r\n second\t line ')).toBe('first line second line');
    expect(errorLine(' \n ')).toBe('');
  });
});

describe('the run prints whole error lines', () => {
  it('[FAIL], [SKIP] and [RETRY] lines, and the failures at the end, keep the whole first line', () => {
    const out: string[] = [];
    const events = new RunEmitter();
    attachReporter(events, { stdout: (text) => out.push(text), stderr: () => {} }, 'lines');
    events.emit('task:retry', { id: 'a', attempt: 1, errorClass: 'transient', error: kUnreachable, delayMs: 1000 });
    events.emit('task:done', { id: 'a', wave: 1, status: 'failed', findings: '', gc_signal: '', severity_summary: '', error: `${kUnreachable}\nat stack`, attempts: 2, durationMs: 5 });
    const skipped = 'Dependency failed or skipped: a-task-with-a-long-name-that-goes-on (failed)';
    events.emit('task:done', { id: 'b', wave: 2, status: 'skipped', findings: '', gc_signal: '', severity_summary: '', error: skipped, attempts: 0, durationMs: 0 });
    events.emit('run:done', { total: 2, ran: 1, attempts: 2, counts: { pending: 0, in_progress: 0, completed: 0, failed: 1, skipped: 1 }, durationMs: 10, stopped: undefined, reason: '', exitCode: 1 });
    const lines = out.join('').split('\n');
    expect(lines).toContain(`[RETRY] a attempt 1 failed (transient): ${kUnreachable}; again in 1.0s`);
    expect(lines).toContain(`[FAIL] a (wave 1, 0.0s) -> ${kUnreachable} at stack`);
    expect(lines).toContain(`[SKIP] b (wave 2, 0.0s) -> ${skipped}`);
    expect(lines).toContain(`  a: ${kUnreachable} at stack`);
  });
});

describe('a model that answers failed', () => {
  it('puts its reason (its findings) in the error: tasks.csv, the [FAIL] line and status', async () => {
    const server = await startFakeOpenAiServer();
    try {
      const dir = buildSession([{ id: 'T-1', description: 'find the trend [[fake:failed-with-reason]]', role: 'writer' }]);
      const result = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl, '--retries', '0');
      expect(result.code, result.stderr).toBe(1);
      const row = readRows(dir).get('T-1')!;
      expect(row.status).toBe('failed');
      expect(row.error).toBe('The task reported failure: Tried the three sources; none of them has dates for 2024, so no trend can be given');
      expect(result.stdout).toContain(`[FAIL] T-1 `);
      expect(result.stdout).toContain(`-> ${row.error}\n`);
      expect((await runCli('status', dir)).stdout).toContain(`-> ${row.error}\n`);
    } finally {
      await server.close();
    }
  });
});

describe('a run against a model server that is gone', () => {
  it('prints the whole reason on the [FAIL] line and in status', async () => {
    const closed = await startFakeOpenAiServer();
    await closed.close();
    const dir = buildSession([{ id: 'T-1', description: 'anything', role: 'writer' }]);
    const result = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', closed.baseUrl, '--retries', '0');
    expect(result.code, result.stderr).toBe(1);
    const error = readRows(dir).get('T-1')!.error;
    expect(error).toMatch(/^Cannot reach the model server at http:\/\/127\.0\.0\.1:\d+\/v1: .*ECONNREFUSED/);
    const fail = result.stdout.split('\n').find((line) => line.startsWith('[FAIL] T-1 '));
    expect(fail, result.stdout).toBe(`[FAIL] T-1 (wave 1, ${/\(wave 1, ([^)]+)\)/.exec(fail ?? '')?.[1]}) -> ${error}`);
    const status = await runCli('status', dir);
    expect(status.stdout).toContain(`-> ${error}\n`);
  });
});
