import { Command } from 'commander';
import { describe, expect, test } from 'vitest';
import { addRunFlags, runOptionsFromFlags, type RunFlags } from '../../src/cli/run-flags.js';
import { normalizeRunOptions } from '../../src/options/options.js';
import { cacheModeOf, kRunOptionTable } from '../../src/option-table.js';
import { sessionConfigSchema } from '../../src/schema/session.js';
import { expectWaveError } from '../helpers/wave-error.js';

// The cache option of the table (issue 25): `--cache on|read|off`, `--no-cache`, session.json
// `"cache": true | "read" | false`, the library's `cache`.

/** The run options `run` makes of these flags. */
function flags(...argv: string[]): ReturnType<typeof runOptionsFromFlags> {
  const command = addRunFlags(new Command('run').argument('<session>').exitOverride());
  command.parse(['node', 'run', 'dir', ...argv]);
  return runOptionsFromFlags(command.opts<RunFlags>());
}

describe('the cache option', () => {
  test('--cache on|read|off and --no-cache give true, read and false; without them the table\'s default, on', () => {
    expect(flags('--cache', 'on').cache).toBe(true);
    expect(flags('--cache', 'read').cache).toBe('read');
    expect(flags('--cache', 'off').cache).toBe(false);
    expect(flags('--no-cache').cache).toBe(false);
    expect(flags().cache).toBeUndefined();
    expect(normalizeRunOptions({ executor: { type: 'command', cmd: 'true' } }).cache).toBe(kRunOptionTable.cache.default);
    expect(cacheModeOf(true)).toBe('on');
    expect(cacheModeOf('read')).toBe('read');
    expect(cacheModeOf(false)).toBe('off');
  });

  test('--cache takes only on, read and off', () => {
    expect(() => flags('--cache', 'maybe')).toThrow(/argument 'maybe' is invalid/);
  });

  test('session.json takes true, false and "read" and nothing else, at its line', () => {
    for (const value of [true, false, 'read']) expect(sessionConfigSchema.safeParse({ cache: value }).success).toBe(true);
    expect(sessionConfigSchema.safeParse({ cache: 'on' }).success).toBe(false);
    expect(sessionConfigSchema.safeParse({ cache_dir: '/shared/cache' }).success).toBe(true);
    expect(sessionConfigSchema.safeParse({ roles: { r: { cache: false } } }).success).toBe(true);
    expect(sessionConfigSchema.safeParse({ roles: { r: { cache: 'no' } } }).success).toBe(false);
  });

  test('a library value out of the table is named as the library names it', () => {
    expectWaveError(() => normalizeRunOptions({ executor: { type: 'command', cmd: 'true' }, cache: 'write' as never }), {
      code: 'USAGE',
      message: 'Expected `cache` to be true, false or "read", got `write` (string)',
    });
  });
});
