import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../../src/cli/main.js';
import { buildSession } from '../helpers/session-builder.js';

// Issue 23 item 1: session.json's `topic`, `mode` and `max_gc_rounds` were read as loose keys
// where they were used (an analyze mode cast unchecked, then a silent fall-back to
// standard). Each pipeline parses them into a typed object now (pipelines/settings.ts; the
// parsers' own tests: settings-reader.test.ts); a run checks them before any task runs.

describe('pipeline settings in a run', () => {
  test('a run of an analyze session with an unknown mode stops before any task runs (exit 2), naming the key\'s line', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'analyst' }], { session: '{\n  "pipeline": "analyze",\n  "mode": "deeep"\n}\n' });
    let stderr = '';
    const code = await main(['run', dir, '--cmd', 'printf done'], { stdout: () => {}, stderr: (text) => (stderr += text) });
    expect(code).toBe(2);
    expect(stderr).toContain('session.json:3: mode: expected one of quick, standard, deep for the analyze pipeline, got "deeep"');
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).not.toContain('done');
  });
});
