import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { normalizeRunOptions } from '../../src/options/options.js';
import { kRunOptionTable } from '../../src/option-table.js';
import { sessionConfigSchema } from '../../src/schema/session.js';
import { openSession, readSessionConfig } from '../../src/session/session.js';
import { prepareSession } from '../../src/session/prepare-session.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { expectWaveError } from '../helpers/wave-error.js';

// Issue 23 item 1: the flags and session.json disagreed on an option's bounds, default or
// name. Each is now read from the one table (src/option-table.ts).
const kOneTask = [{ id: 'A', description: 'a', role: 'r' }];

describe('the flags and session.json agree, from the table', () => {
  test('"timeout": 0 in session.json means no limit, as --timeout 0 does', async () => {
    expect(readSessionConfig(buildSession(kOneTask, { session: '{"pipeline": "generic", "timeout": 0}' }))).toMatchObject({ timeout: 0 });
    const dir = buildSession(kOneTask, { session: '{"pipeline": "generic", "timeout": 0}' });
    const result = await runCli('run', dir, '--cmd', 'printf done');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done' });
  });

  test('"prev_context_cap": 100 is refused by the schema, at the line of its key, in the table\'s words', () => {
    const dir = buildSession(kOneTask, { session: '{\n  "pipeline": "generic",\n  "prev_context_cap": 100\n}\n' });
    expectWaveError(() => readSessionConfig(dir), {
      code: 'INVALID_SESSION',
      message: /session\.json:3: prev_context_cap: expected an integer ≥ 200, got 100$/,
    });
    // The library refuses the same value under its own name.
    expectWaveError(() => normalizeRunOptions({ executor: { type: 'command', cmd: 'true' }, prevContextCap: 100 }), {
      code: 'USAGE',
      message: 'Expected `prevContextCap` to be an integer ≥ 200, got `100` (number)',
    });
  });

  test('--concurrency 0 is named by its flag; session.json\'s 0 by its key and line', async () => {
    const flagged = await runCli('run', buildSession(kOneTask), '--cmd', 'true', '--concurrency', '0');
    expect(flagged.code).toBe(2);
    expect(flagged.stderr).toBe('Expected `--concurrency` to be a positive integer, got `0`\n');
    const dir = buildSession(kOneTask, { session: '{\n  "pipeline": "generic",\n  "concurrency": 0\n}\n' });
    const before = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    const keyed = await runCli('run', dir, '--cmd', 'true');
    expect(keyed.code).toBe(2);
    expect(keyed.stderr).toMatch(/session\.json:3: concurrency: expected a positive integer, got 0\n$/);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(before);
  });

  test('retries has one default: the help, the normalised options and the table say the same', async () => {
    const help = await runCli('run', '--help');
    const line = help.stdout.replace(/\n\s+/g, ' ').match(/--retries <n>\s+(.*?\(default [^)]*\))/)?.[1];
    expect(line).toBe(`${kRunOptionTable.retries.doc} (default ${kRunOptionTable.retries.defaultText})`);
    expect(normalizeRunOptions({ executor: { type: 'command', cmd: 'true' } }).retries).toBe(kRunOptionTable.retries.default);
  });

  test('the pipeline has one rule: session.json names none by default, and the roles settle it', () => {
    expect(sessionConfigSchema.parse({})).toEqual({});
    // No session.json and a role of its own: generic, without the schema's brainstorm patched over.
    const plain = buildSession('id,title,description,role,deps,context_from\nA,a,a,writer,,\n', { session: null });
    const session = openSession(plain);
    expect(session.config.pipeline).toBeUndefined();
    expect(prepareSession(session).session.config.pipeline).toBe('generic');
    // session.json's pipeline, and --pipeline over it, are kept whatever the roles.
    const named = buildSession(kOneTask, { session: '{"pipeline": "analyze"}' });
    expect(openSession(named).config.pipeline).toBe('analyze');
    expect(openSession(named, { pipeline: 'generic' }).config.pipeline).toBe('generic');
  });
});
