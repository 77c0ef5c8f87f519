import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';

const run = promisify(execFile);
const kRepo = fileURLToPath(new URL('../../', import.meta.url));

describe('a global install, as the README says (npm install -g .)', () => {
  // npm links a folder it installs globally, so this needs no network; the built dist/ of
  // this checkout is what the command runs. The limit is a safety net for a loaded machine.
  test('puts a csv-wave command in PREFIX/bin that runs from any folder', { timeout: 300_000 }, async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'csv-wave-prefix-'));
    const elsewhere = mkdtempSync(join(tmpdir(), 'csv-wave-elsewhere-'));
    try {
      // --ignore-scripts: `prepare` would rebuild dist/ under the tests that use it.
      await run('npm', ['install', '-g', '--prefix', prefix, '--offline', '--ignore-scripts', '--no-audit', '--no-fund', kRepo], {
        cwd: elsewhere,
      });
      const help = await run(join(prefix, 'bin', 'csv-wave'), ['--help'], { cwd: elsewhere });
      expect(help.stdout).toMatch(/^Usage: csv-wave /);
      expect(help.stdout).toMatch(/\brun\b/);
    } finally {
      rmSync(prefix, { recursive: true, force: true });
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
