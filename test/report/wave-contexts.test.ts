import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WaveContexts } from '../../src/report/wave-contexts.js';

const kFormat = { bom: false, eol: '\n' } as const;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function session(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wave-contexts-'));
  dirs.push(dir);
  return dir;
}

/** Replaces a wave file as the engine does: a new file renamed over the old one. */
function writeWave(dir: string, wave: number, rows: [string, string][]): void {
  const text = `id,prev_context\n${rows.map(([id, context]) => `"${id}","${context}"\n`).join('')}`;
  writeFileSync(join(dir, 'wave.tmp'), text);
  renameSync(join(dir, 'wave.tmp'), join(dir, `wave-${wave}.csv`));
}

describe('WaveContexts', () => {
  it('reads every wave file, a later one winning', () => {
    const dir = session();
    writeWave(dir, 1, [['a', 'one'], ['b', 'two']]);
    writeWave(dir, 2, [['b', 'late']]);
    expect([...new WaveContexts().read(dir, kFormat)]).toEqual([['a', 'one'], ['b', 'late']]);
  });

  it('sees a wave file replaced between two reads, even one of the same size', () => {
    const dir = session();
    const contexts = new WaveContexts();
    writeWave(dir, 1, [['a', 'old']]);
    expect(contexts.read(dir, kFormat).get('a')).toBe('old');
    writeWave(dir, 1, [['a', 'new']]);
    writeWave(dir, 2, [['c', 'added']]);
    expect([...contexts.read(dir, kFormat)]).toEqual([['a', 'new'], ['c', 'added']]);
  });

  it('forgets a wave file that was removed, and skips one that cannot be parsed', () => {
    const dir = session();
    const contexts = new WaveContexts();
    writeWave(dir, 1, [['a', 'one']]);
    writeWave(dir, 2, [['b', 'two']]);
    expect(contexts.read(dir, kFormat).size).toBe(2);
    rmSync(join(dir, 'wave-1.csv'));
    writeFileSync(join(dir, 'wave-3.csv'), 'id,prev_context\n"unclosed,x\n');
    expect([...contexts.read(dir, kFormat)]).toEqual([['b', 'two']]);
  });
});
