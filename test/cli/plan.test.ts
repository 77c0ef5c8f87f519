import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { copySample } from '../helpers/session-builder.js';

describe('csv-wave plan', () => {
  test('the brainstorm sample has the six waves of the seed', async () => {
    const dir = copySample('brainstorm');
    const result = await runCli('plan', dir, '--json');
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as { waveCount: number; waves: { ids: string[]; interactive: string[] }[] };
    expect(plan.waveCount).toBe(6);
    expect(plan.waves.map((wave) => wave.ids)).toEqual([
      ['IDEA-001', 'IDEA-002'],
      ['CHALLENGE-001'],
      ['GC-CHECK-001'],
      ['IDEA-003'],
      ['SYNTH-001'],
      ['EVAL-001'],
    ]);
    expect(plan.waves[2]!.interactive).toEqual(['GC-CHECK-001']);
  });

  test('fills an empty wave column and leaves a planned file byte for byte', async () => {
    const dir = copySample('brainstorm');
    const path = join(dir, 'tasks.csv');
    const original = readFileSync(path, 'utf8');
    expect((await runCli('plan', dir)).code).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe(original);
  });
});
