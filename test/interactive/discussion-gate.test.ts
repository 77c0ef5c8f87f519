import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { AnswerFile, AutoAnswers, NoAnswers, parseDecision } from '../../src/interactive/answers.js';
import { gateChanges } from '../../src/pipelines/analyze/discussion-gate.js';
import { analyzeTasks } from '../../src/pipelines/analyze/decompose.js';

const rows = () => analyzeTasks({ topic: 'T', perspectives: ['a'], mode: 'deep' });

describe('discussion gate changes', () => {
  test('Continue adds the next discussion round and points the synthesizer at it', () => {
    const all = rows();
    const changes = gateChanges(all, all.find((row) => row.id === 'DISCUSS-001')!, 1, { decision: 'continue' }, 'T');
    expect(changes.add.map((row) => [row.id, row.deps, row.exec_mode])).toEqual([['DISCUSS-002', 'DISCUSS-001', 'interactive']]);
    expect(changes.update).toEqual([{ id: 'SYNTH-001', deps: 'DISCUSS-002', context_from: 'ANALYZE-001;DISCUSS-001;DISCUSS-002' }]);
  });

  test('Adjust adds ANALYZE-fix-N with the new focus, and the next round after it', () => {
    const all = rows();
    const changes = gateChanges(all, all.find((row) => row.id === 'DISCUSS-001')!, 1, { decision: 'adjust', focus: 'costs' }, 'T');
    expect(changes.add.map((row) => [row.id, row.deps])).toEqual([
      ['ANALYZE-fix-1', 'DISCUSS-001'],
      ['DISCUSS-002', 'ANALYZE-fix-1'],
    ]);
    expect(changes.add[0]!.description).toContain('costs');
    expect(changes.update[0]!.deps).toBe('DISCUSS-002');
  });

  test('Done points the synthesizer at the last discussion, and creates it only if absent', () => {
    const all = rows();
    const discussion = all.find((row) => row.id === 'DISCUSS-001')!;
    expect(gateChanges(all, discussion, 1, { decision: 'done' }, 'T')).toEqual({
      add: [],
      update: [{ id: 'SYNTH-001', deps: 'DISCUSS-001', context_from: 'ANALYZE-001;DISCUSS-001' }],
      skip: [],
    });
    const withoutSynth = all.filter((row) => row.id !== 'SYNTH-001');
    const changes = gateChanges(withoutSynth, discussion, 1, { decision: 'done' }, 'T');
    expect(changes.add.map((row) => [row.id, row.deps])).toEqual([['SYNTH-001', 'DISCUSS-001']]);
  });
});

describe('answer sources', () => {
  const file = (answers: unknown) => {
    const path = join(mkdtempSync(join(tmpdir(), 'answers-')), 'answers.json');
    writeFileSync(path, JSON.stringify(answers));
    return path;
  };

  test('an answers file is used in order; a plain Adjust takes the next item as the focus', async () => {
    const answers = new AnswerFile(file(['Continue deeper', 'Adjust', 'the costs', { decision: 'adjust', focus: 'risks' }, '3']));
    expect(await answers.decide('q')).toEqual({ decision: 'continue' });
    expect(await answers.decide('q')).toEqual({ decision: 'adjust', focus: 'the costs' });
    expect(await answers.decide('q')).toEqual({ decision: 'adjust', focus: 'risks' });
    expect(await answers.decide('q')).toEqual({ decision: 'done' });
    await expect(answers.decide('q')).rejects.toThrow(/no answer left/);
  });

  test('a wrong answer or a file that is not a list is refused with a clear message', async () => {
    await expect(new AnswerFile(file(['maybe'])).decide('q')).rejects.toThrow(/"maybe" is not Continue, Adjust or Done/);
    expect(() => new AnswerFile(file({ a: 1 }))).toThrow(/expected a JSON list/);
  });

  test('--auto answers Done; without any source the gate says how to answer', async () => {
    expect(await new AutoAnswers().decide()).toEqual({ decision: 'done' });
    await expect(new NoAnswers().decide('Round 1?')).rejects.toThrow(/--answers FILE or --auto/);
    expect(parseDecision(' Adjust Direction ')).toBe('adjust');
  });
});
