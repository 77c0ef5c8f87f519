import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { kBinPath } from '../helpers/spawn-cli.js';

describe('the csv-wave executable', () => {
  test('dist/cli/bin.js runs by itself (shebang and execute bit), as `npx csv-wave` runs it', () => {
    const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    expect(execFileSync(kBinPath, ['--version'], { encoding: 'utf8' }).trim()).toBe(version);
  });
});
