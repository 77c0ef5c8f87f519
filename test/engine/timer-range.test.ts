import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { normalizeRunOptions } from '../../src/options/options.js';
import { finishAttempt } from '../../src/executors/finish-attempt.js';
import { kMaxTimerMs, kMaxTimerSeconds } from '../../src/process/timer-range.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

// Node's timers fire at once for a delay past 2^31 - 1 ms (about 24.8 days): a timeout or
// grace longer than that must be refused, never turned into "time out now".
const kTooLong = 30 * 24 * 60 * 60;
const kRangeText = 'a number of seconds from 0 to 2073600 (24 days)';
const executor = { type: 'command', template: 'true' } as const;

describe('millisecond options stay within what a timer can wait', () => {
  test('the normaliser accepts 24 days and refuses more, for timeout and grace', () => {
    expect(normalizeRunOptions({ executor, timeoutSeconds: kMaxTimerSeconds, graceSeconds: kMaxTimerSeconds })).toMatchObject({
      timeoutSeconds: kMaxTimerSeconds,
      graceSeconds: kMaxTimerSeconds,
    });
    expect(kMaxTimerSeconds * 1000).toBeLessThan(kMaxTimerMs);
    expect(() => normalizeRunOptions({ executor, timeoutSeconds: kTooLong })).toThrow(
      `Expected \`timeoutSeconds\` to be ${kRangeText}, got \`${kTooLong}\` (number)`,
    );
    expect(() => normalizeRunOptions({ executor, graceSeconds: kTooLong })).toThrow(
      `Expected \`graceSeconds\` to be ${kRangeText}, got \`${kTooLong}\` (number)`,
    );
  });

  test.each([['--timeout'], ['--grace']])('%s of 30 days is a usage error, and no task runs', async (flag) => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    const before = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    const result = await runCli('run', dir, '--cmd', 'touch ran-{id}', flag, String(kTooLong));
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`Expected \`${flag}\` to be ${kRangeText}, got \`${kTooLong}\`\n`);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(before);
  });

  test('a session.json timeout of 30 days is refused, naming the file and line', async () => {
    const config = `{\n  "pipeline": "generic",\n  "timeout": ${kTooLong}\n}\n`;
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }], { session: config });
    const before = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    const result = await runCli('run', dir, '--cmd', 'touch ran-{id}');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`session.json:3: timeout: expected ${kRangeText}, got ${kTooLong}`);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(before);
  });

  test('a session.json timeout within the range lets the task finish', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }], {
      session: `{"pipeline": "generic", "timeout": ${kMaxTimerSeconds}}`,
    });
    const result = await runCli('run', dir, '--cmd', 'printf done');
    expect(result.code).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done' });
  });

  test('a retry delay a module or server asks for is kept within the ceiling; a bad one is dropped', () => {
    const task = { id: 'A', session: '/nonexistent', row: { id: 'A' } };
    const ask = (retryAfterMs: number) =>
      finishAttempt(task, { kind: 'error', errorClass: 'transient', error: 'busy', retryAfterMs });
    expect(ask(2 ** 40)).toMatchObject({ kind: 'error', retryAfterMs: kMaxTimerMs });
    expect(ask(1500)).toMatchObject({ retryAfterMs: 1500 });
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, -1]) expect(ask(bad)).not.toHaveProperty('retryAfterMs');
  });
});
