import { describe, expect, test } from 'vitest';
import { initSession } from '../../src/commands/init-session.js';
import { analyzeSettings } from '../../src/pipelines/analyze/settings.js';
import { brainstormSettings, kDefaultMaxGcRounds } from '../../src/pipelines/brainstorm/settings.js';
import { pipelineFor } from '../../src/pipelines/pipeline-for.js';
import { SettingsReader, type SettingFlags } from '../../src/pipelines/settings.js';
import type { PipelineName, SessionConfig } from '../../src/schema/session.js';
import { expectWaveError } from '../helpers/wave-error.js';

// Issue 23: each pipeline parses its settings (topic, mode, max_gc_rounds) into a typed
// object through one reader, from init's flags or session.json, and a bad value is named
// as its source spells it. init's checks and session.json's loose keys were ad hoc before.

/** A reader of init's flags. */
function flags(pipeline: PipelineName, given: SettingFlags): SettingsReader {
  return new SettingsReader(pipeline, { from: 'flags', command: 'init', flags: given });
}

/** A reader of a session.json of this text, as a session holds it. */
function sessionJson(pipeline: PipelineName, text: string): SettingsReader {
  return SettingsReader.of(pipeline, JSON.parse(text) as SessionConfig, { shown: 'dir/session.json', text });
}

describe('pipeline settings, parsed by their pipeline', () => {
  test('each pipeline gives its typed settings, with its defaults', () => {
    expect(brainstormSettings(SettingsReader.of('brainstorm', {}))).toEqual({ topic: '', mode: 'full', maxGcRounds: kDefaultMaxGcRounds });
    expect(brainstormSettings(SettingsReader.of('brainstorm', { topic: 't', mode: 'quick', max_gc_rounds: 0 }))).toEqual({ topic: 't', mode: 'quick', maxGcRounds: 0 });
    expect(analyzeSettings(SettingsReader.of('analyze', { topic: 't' }))).toEqual({ topic: 't', mode: 'standard' });
    expect(analyzeSettings(SettingsReader.of('analyze', { mode: 'deep' })).mode).toBe('deep');
    expect(pipelineFor('generic').settings(SettingsReader.of('generic', { topic: 'x', mode: 'anything' }))).toEqual({ topic: 'x' });
  });

  test('from init\'s flags: the same settings, a count\'s text turned into its number', () => {
    expect(brainstormSettings(flags('brainstorm', { topic: 'T', mode: 'deep', maxGcRounds: ' 3 ' }))).toEqual({ topic: 'T', mode: 'deep', maxGcRounds: 3 });
    expect(brainstormSettings(flags('brainstorm', { topic: 'T', maxGcRounds: 1 })).maxGcRounds).toBe(1);
    expect(analyzeSettings(flags('analyze', { topic: 'T' }))).toEqual({ topic: 'T', mode: 'standard' });
    // The generic starter needs no topic.
    expect(pipelineFor('generic').settings(flags('generic', { topic: '' }))).toEqual({ topic: '' });
  });

  test.each([
    ['brainstorm', { topic: 'T', mode: 'nope' }, 'Expected `--mode` to be one of quick, deep, full for the brainstorm pipeline, got `nope`'],
    ['analyze', { topic: 'T', mode: 'full' }, 'Expected `--mode` to be one of quick, standard, deep for the analyze pipeline, got `full`'],
    ['brainstorm', { topic: 'T', maxGcRounds: 'two' }, 'Expected `--max-gc-rounds` to be an integer ≥ 0, got `two`'],
    ['brainstorm', { topic: 'T', maxGcRounds: '-1' }, 'Expected `--max-gc-rounds` to be an integer ≥ 0, got `-1`'],
    ['brainstorm', { topic: 'T', maxGcRounds: 1.5 }, 'Expected `--max-gc-rounds` to be an integer ≥ 0, got `1.5`'],
    ['brainstorm', { topic: '  ' }, 'init needs a --topic'],
    ['analyze', {}, 'init needs a --topic'],
  ] as const)('a flag the %s pipeline does not take is a usage error naming the flag: %j', (pipeline, given, message) => {
    const parse = pipeline === 'brainstorm' ? brainstormSettings : analyzeSettings;
    expectWaveError(() => parse(flags(pipeline, given)), { code: 'USAGE', message });
  });

  test('from session.json: refused at the line of its key, as session.json\'s other errors are', () => {
    const text = '{\n  "pipeline": "analyze",\n  "topic": "t",\n  "mode": "full"\n}\n';
    const error = expectWaveError(() => analyzeSettings(sessionJson('analyze', text)), {
      code: 'INVALID_SESSION',
      message: 'dir/session.json:4: mode: expected one of quick, standard, deep for the analyze pipeline, got "full"',
    });
    expect(error.violations).toEqual([{ line: 4, message: 'mode: expected one of quick, standard, deep for the analyze pipeline, got "full"' }]);
    expectWaveError(() => brainstormSettings(sessionJson('brainstorm', '{"max_gc_rounds": -1}')), {
      code: 'INVALID_SESSION',
      message: 'dir/session.json:1: max_gc_rounds: expected an integer ≥ 0, got -1',
    });
    // A topic is not needed from session.json: a session written by hand may lack one.
    expect(brainstormSettings(sessionJson('brainstorm', '{}')).topic).toBe('');
  });

  test('a config with no file (a library caller\'s) is refused naming session.json\'s key', () => {
    expectWaveError(() => brainstormSettings(SettingsReader.of('brainstorm', { mode: 'standard' })), {
      code: 'INVALID_SESSION',
      message: 'session.json: mode: expected one of quick, deep, full for the brainstorm pipeline, got "standard"',
    });
  });

  test('init writes what the parser gave, and refuses what it refused before looking at the folder', () => {
    const missing = '/nonexistent/csv-wave-init';
    expectWaveError(() => initSession(missing, { template: 'brainstorm', topic: 'T', mode: 'nope' }), {
      code: 'USAGE',
      message: 'Expected `--mode` to be one of quick, deep, full for the brainstorm pipeline, got `nope`',
    });
    expectWaveError(() => initSession(missing, { template: 'analyze', topic: '' }), { code: 'USAGE', message: 'init needs a --topic' });
  });
});
