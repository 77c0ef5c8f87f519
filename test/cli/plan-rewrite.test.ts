import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, copySample } from '../helpers/session-builder.js';
import { kSeedHeader, withPlainTasksPath } from './sessions.js';

const kBom = Buffer.from([0xef, 0xbb, 0xbf]);

describe('csv-wave plan: what it prints', () => {
  test('one line per wave, then the totals (exit code 0)', async () => {
    const result = await runCli('plan', copySample('brainstorm'));
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        'Wave 1 (2 tasks): IDEA-001, IDEA-002',
        'Wave 2 (1 task): CHALLENGE-001',
        'Wave 3 (1 task): GC-CHECK-001 [interactive]',
        'Wave 4 (1 task): IDEA-003',
        'Wave 5 (1 task): SYNTH-001',
        'Wave 6 (1 task): EVAL-001',
        '6 waves, 7 tasks; longest dependency chain: 6 tasks',
        '',
      ].join('\n'),
    );
  });

  test('a single task is counted in the singular', async () => {
    const result = await runCli('plan', buildSession('id,description,role\nA,do,ideator\n', { session: null }));
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Wave 1 (1 task): A\n1 wave, 1 task; longest dependency chain: 1 task\n');
  });

  test('--json prints the plan as one document', async () => {
    const result = await runCli('plan', copySample('brainstorm'), '--json');
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as { tasks: number; waveCount: number; longestChain: number };
    expect([plan.tasks, plan.waveCount, plan.longestChain]).toEqual([7, 6, 6]);
  });

  test('exit code 2 on an invalid file, which it leaves untouched', async () => {
    const csv = `${kSeedHeader}\n"A","","do","ideator","","0","B","","csv-wave","","","","","",""\n"B","","do","ideator","","0","A","","csv-wave","","","","","",""\n`;
    const dir = buildSession(csv, { session: null });
    const result = await runCli('plan', dir);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(withPlainTasksPath(result.stderr, dir)).toBe('tasks.csv:2: Circular dependency detected involving: A;B\n');
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(csv);

    const json = await runCli('plan', dir, '--json');
    expect(json.code).toBe(2);
    expect((JSON.parse(json.stdout) as { ok: boolean }).ok).toBe(false);
  });
});

describe('csv-wave plan: how it rewrites tasks.csv', () => {
  test('--bom writes a UTF-8 byte order mark and nothing else changes', async () => {
    const dir = copySample('brainstorm');
    const path = join(dir, 'tasks.csv');
    const before = readFileSync(path);
    expect(before.subarray(0, 3).equals(kBom)).toBe(false);
    // The sample's wave column is already filled: the BOM alone is a reason to write.
    expect((await runCli('plan', dir, '--bom')).code).toBe(0);
    const after = readFileSync(path);
    expect(after.subarray(0, 3).equals(kBom)).toBe(true);
    expect(after.subarray(3).equals(before)).toBe(true);
    // A second run keeps the one BOM, and reading still works.
    expect((await runCli('plan', dir, '--bom')).code).toBe(0);
    expect(readFileSync(path).equals(after)).toBe(true);
    expect((await runCli('validate', dir)).code).toBe(0);
  });

  test('--bom on a file whose waves it fills', async () => {
    const dir = buildSession('id,description,role,deps\nA,do,ideator,\nB,do,challenger,A\n', { session: null });
    expect((await runCli('plan', dir, '--bom')).code).toBe(0);
    const after = readFileSync(join(dir, 'tasks.csv'));
    expect(after.subarray(0, 3).equals(kBom)).toBe(true);
    expect(after.subarray(3).toString('utf8').split('\n')[0]).toMatch(/^id,description,role,deps,/);
  });

  test('without --bom, a file keeps the BOM it has', async () => {
    const text = `\uFEFF${kSeedHeader}\n"A","","do","ideator","","0","","","csv-wave","","pending","","","",""\n`;
    const dir = buildSession(text, { session: null });
    expect((await runCli('plan', dir)).code).toBe(0);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(text.replace('"csv-wave",""', '"csv-wave","1"'));
  });

  test("a person's own columns stay where they are, with their cells", async () => {
    const header = 'id,title,description,owner,role,angle,gc_round,deps,context_from,exec_mode,wave,status,findings,gc_signal,severity_summary,error,priority,notes';
    const dir = buildSession(`${header}
"A","","do a","Ana","ideator","","0","","","csv-wave","","pending","","","","","P0","first, with a comma"
"B","","do b","Bo ""the critic""","challenger","","0","A","A","csv-wave","","pending","","","","","","line one
line two"
`, { session: null });
    const result = await runCli('plan', dir);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(`${header}
"A","","do a","Ana","ideator","","0","","","csv-wave","1","pending","","","","","P0","first, with a comma"
"B","","do b","Bo ""the critic""","challenger","","0","A","A","csv-wave","2","pending","","","","","","line one
line two"
`);
  });

  test('CRLF line ends are kept', async () => {
    const dir = buildSession(`${kSeedHeader}\r\n"A","","do","ideator","","0","","","csv-wave","","","","","",""\r\n`, { session: null });
    expect((await runCli('plan', dir)).code).toBe(0);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(
      `${kSeedHeader}\r\n"A","","do","ideator","","0","","","csv-wave","1","","","","",""\r\n`,
    );
  });
});
