import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession } from '../helpers/session-builder.js';

describe('wave files', () => {
  // Eager writes the same wave files (run-basics: "--schedule eager gives the same tasks.csv and
  // wave files"); the rule under both schedules is in test/core/scheduling.test.ts.
  test('a wave whose every task is skipped for a failure gets no wave file', async () => {
    const dir = buildSession([
      { id: 'A', description: 'fails', role: 'w' },
      { id: 'B', description: 'ok', role: 'w' },
      { id: 'C', description: 'after A', role: 'w', deps: 'A' },
      { id: 'D', description: 'after C', role: 'w', deps: 'C;B' },
    ]);
    const result = await runCli('run', dir, '--cmd', 'test {id} != A', '--schedule', 'waves');
    expect(result.code).toBe(1);
    expect(existsSync(join(dir, 'wave-1.csv'))).toBe(true);
    expect(existsSync(join(dir, 'wave-2.csv'))).toBe(false);
    expect(existsSync(join(dir, 'wave-3.csv'))).toBe(false);
  });
});
