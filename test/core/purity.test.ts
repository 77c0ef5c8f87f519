import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const kCoreDir = join(import.meta.dirname, '../../src/core');

/** What the scheduling core must not use: it gets time, randomness and I/O from its driver. */
const kForbidden: [string, RegExp][] = [
  ['a node: import', /from\s+['"]node:/],
  ['a bare Node builtin import', /from\s+['"](fs|path|os|child_process|worker_threads|timers|events)['"]/],
  ['a timer', /\b(setTimeout|setInterval|setImmediate|queueMicrotask)\b/],
  ['the clock', /\b(Date|performance|hrtime)\b/],
  ['Math.random', /Math\.random/],
  ['process', /\bprocess\./],
];

describe('src/core is pure', () => {
  // core/ and its state/ folder, as paths relative to core/.
  const files = (readdirSync(kCoreDir, { recursive: true }) as string[]).filter((name) => name.endsWith('.ts'));

  it('has its files', () => {
    expect(files).toContain('scheduling-core.ts');
    expect(files).toContain(join('state', 'ready-queue.ts'));
  });

  it.each(files)('%s uses no node: import, timer, clock or randomness', (name) => {
    // Comments may name what the code must not use; only code counts.
    const code = readFileSync(join(kCoreDir, name), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    const found = kForbidden.filter(([, pattern]) => pattern.test(code)).map(([what]) => what);
    expect(found, `${name} uses ${found.join(', ')}`).toEqual([]);
  });

  it.each(files)('%s imports only the pure layers (graph, schema) and src/core itself, nothing of csv/', (name) => {
    const sources = [...readFileSync(join(kCoreDir, name), 'utf8').matchAll(/from\s+'([^']+)'/g)].map((match) => match[1]!);
    // Resolved from the file's own folder: state/x.ts reaches core/ with '../'.
    const outside = sources.filter((source) => {
      const target = relative(kCoreDir, join(kCoreDir, dirname(name), source));
      return !(target.startsWith('..') ? /^\.\.[\\/](graph|schema)[\\/]/.test(target) : true);
    });
    expect(outside, `${name} imports ${outside.join(', ')}`).toEqual([]);
  });
});
