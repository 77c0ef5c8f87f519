import { describe, expect, it } from 'vitest';
import { emptyRow } from '../../src/core/task.js';
import { serializeWaveFile } from '../../src/csv/wave-file.js';

describe('wave-<N>.csv', () => {
  it('has the task columns up to wave, then prev_context, and no outcome column (DESIGN.md section 4)', () => {
    const row = { ...emptyRow(), id: 'A', title: 't', description: 'd', role: 'r', deps: 'X;Y', exec_mode: 'csv-wave', wave: '2', status: 'completed', findings: 'secret' };
    const text = serializeWaveFile([{ row, prevContext: 'from X' }], { bom: false, eol: '\n' });
    const [header, line] = text.split('\n');
    expect(header).toBe('id,title,description,role,angle,gc_round,deps,context_from,exec_mode,wave,prev_context');
    expect(line).toBe('"A","t","d","r","","","X;Y","","csv-wave","2","from X"');
  });
});
