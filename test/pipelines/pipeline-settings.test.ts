import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../../src/cli/main.js';
import { analyzeSettings } from '../../src/pipelines/analyze/settings.js';
import { brainstormSettings, kDefaultMaxGcRounds } from '../../src/pipelines/brainstorm/settings.js';
import { pipelineFor } from '../../src/pipelines/pipeline-for.js';
import { buildSession } from '../helpers/session-builder.js';
import { expectWaveError } from '../helpers/wave-error.js';

// Issue 23 item 1: session.json's `topic`, `mode` and `max_gc_rounds` were read as loose keys
// where they were used (an analyze mode cast unchecked, then a silent fall-back to
// standard). Each pipeline parses them into a typed object now (pipelines/*/settings.ts).

describe('pipeline settings, parsed by their pipeline', () => {
  test('each pipeline gives its typed settings, with its defaults', () => {
    expect(brainstormSettings({})).toEqual({ topic: '', mode: 'full', maxGcRounds: kDefaultMaxGcRounds });
    expect(brainstormSettings({ topic: 't', mode: 'quick', max_gc_rounds: 0 })).toEqual({ topic: 't', mode: 'quick', maxGcRounds: 0 });
    expect(analyzeSettings({ topic: 't' })).toEqual({ topic: 't', mode: 'standard' });
    expect(analyzeSettings({ mode: 'deep' }).mode).toBe('deep');
    expect(pipelineFor('generic').settings({ topic: 'x', mode: 'anything' })).toEqual({ topic: 'x' });
  });

  test('a mode the pipeline does not know is refused, naming session.json\'s key', () => {
    expectWaveError(() => analyzeSettings({ mode: 'full' }), {
      code: 'INVALID_SESSION',
      message: 'session.json: mode: expected one of quick, standard, deep for the analyze pipeline, got "full"',
    });
    expectWaveError(() => brainstormSettings({ mode: 'standard' }), {
      code: 'INVALID_SESSION',
      message: 'session.json: mode: expected one of quick, deep, full for the brainstorm pipeline, got "standard"',
    });
  });

  test('a run of an analyze session with an unknown mode stops before any task runs (exit 2)', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'analyst' }], { session: '{"pipeline": "analyze", "mode": "deeep"}' });
    let stderr = '';
    const code = await main(['run', dir, '--cmd', 'printf done'], { stdout: () => {}, stderr: (text) => (stderr += text) });
    expect(code).toBe(2);
    expect(stderr).toContain('session.json: mode: expected one of quick, standard, deep for the analyze pipeline, got "deeep"');
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).not.toContain('done');
  });
});
