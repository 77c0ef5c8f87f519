import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('init: how to run the new session', () => {
  test('without an executor, the hint names every kind: --cmd, --module and --executor openai', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-init-')), 'bs');
    const result = await runCli('init', dir, '--template', 'brainstorm', '--topic', 'Cheaper public transport');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Run it with: csv-wave run ${dir} --cmd '…' (or --module PATH, or --executor openai|codex|claude --model NAME)\n`);
  });

  test('with an executor recorded in session.json, the hint is the bare run', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-init-')), 'bs');
    const result = await runCli('init', dir, '--template', 'brainstorm', '--topic', 'Transport', '--executor', 'openai', '--model', 'llama3.1');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Run it with: csv-wave run ${dir}\n`);
  });
});
