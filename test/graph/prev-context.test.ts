import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  buildPrevContext,
  kDefaultPrevContextCap,
  type ContextSource,
} from '../../src/graph/prev-context.js';

const lookupIn = (tasks: Record<string, ContextSource>) => (id: string) => tasks[id];

const kMarker = /\n\[prev_context cut: (\d+) of (\d+) characters kept\]$/;

describe('buildPrevContext', () => {
  const tasks: Record<string, ContextSource> = {
    A: { status: 'completed', findings: 'alpha' },
    B: { status: 'completed', findings: 'beta\nsecond line' },
    C: { status: 'failed', findings: 'half done' },
    D: { status: 'completed', findings: '' },
    E: { status: 'skipped', findings: 'x' },
    F: { status: 'pending', findings: 'stale' },
    G: { status: 'completed', findings: 'gamma' },
  };

  test('is `[Task <id>] <findings>` joined with newlines, in context_from order', () => {
    expect(buildPrevContext(['G', 'A', 'B'], lookupIn(tasks))).toBe(
      '[Task G] gamma\n[Task A] alpha\n[Task B] beta\nsecond line',
    );
  });

  test('keeps only completed tasks with findings', () => {
    expect(buildPrevContext(['C', 'A', 'D', 'E', 'F', 'missing', 'G'], lookupIn(tasks))).toBe(
      '[Task A] alpha\n[Task G] gamma',
    );
  });

  test.each([[[]], [['C', 'D', 'E', 'F', 'missing']]])('falls back when nothing qualifies: %j', (contextFrom) => {
    // The text DESIGN.md names, spelled out: a change of the constant must show here.
    expect(buildPrevContext(contextFrom, lookupIn(tasks))).toBe('No previous context available');
  });

  test('the default cap is 16,000 characters', () => {
    // `[Task A] ` is 9 characters: 15,991 of findings fill the cap exactly, one more is cut.
    const fits = buildPrevContext(['A'], lookupIn({ A: { status: 'completed', findings: 'x'.repeat(15_991) } }));
    expect(fits).toBe(`[Task A] ${'x'.repeat(15_991)}`);
    const over = buildPrevContext(['A'], lookupIn({ A: { status: 'completed', findings: 'x'.repeat(15_992) } }));
    expect(over).toHaveLength(16_000);
    expect(over.match(kMarker)?.[2]).toBe('16001');
    expect(kDefaultPrevContextCap).toBe(16_000);
  });

  test('exactly at the cap there is no marker', () => {
    const text = '[Task A] alpha';
    expect(buildPrevContext(['A'], lookupIn(tasks), text.length)).toBe(text);
  });

  test('a cap too small for the marker still bounds the text', () => {
    const lookup = lookupIn({ B: { status: 'completed', findings: 'y'.repeat(500) } });
    for (const cap of [1, 10, 40]) {
      expect(buildPrevContext(['B'], lookup, cap)).toBe(`[Task B] ${'y'.repeat(500)}`.slice(0, cap));
    }
  });

  test('a cut never splits an emoji in half', () => {
    const full = `[Task A] ${'😀'.repeat(200)}`;
    for (let cap = 60; cap < 120; cap++) {
      const text = buildPrevContext(['A'], lookupIn({ A: { status: 'completed', findings: full.slice(9) } }), cap);
      expect(text.length).toBeLessThanOrEqual(cap);
      const kept = text.replace(kMarker, '');
      expect(full.startsWith(kept)).toBe(true);
      expect(kept).toMatch(/^\[Task A\] (😀)+$/u);
    }
  });

  const sourcesArb = fc.array(
    fc.record({
      id: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,10}$/),
      status: fc.constantFrom('completed', 'completed', 'failed', 'pending', 'skipped'),
      findings: fc.oneof(fc.constant(''), fc.string({ unit: 'binary', maxLength: 300 })),
    }),
    { maxLength: 12 },
  );

  test('under the cap the whole text without marker, over it a prefix and a marker saying how much (property)', () => {
    fc.assert(
      fc.property(sourcesArb, fc.integer({ min: 60, max: 2_000 }), (sources, cap) => {
        const byId = Object.fromEntries(sources.map((source) => [source.id, source]));
        const contextFrom = sources.map((source) => source.id);
        const full = buildPrevContext(contextFrom, lookupIn(byId), Number.MAX_SAFE_INTEGER);
        const text = buildPrevContext(contextFrom, lookupIn(byId), cap);
        if (full.length <= cap) {
          expect(text).toBe(full);
          expect(text).not.toMatch(kMarker);
          return;
        }
        expect(text.length).toBeLessThanOrEqual(cap);
        const marker = kMarker.exec(text);
        expect(marker).not.toBeNull();
        const kept = Number(marker![1]);
        expect(Number(marker![2])).toBe(full.length);
        expect(text.length - marker![0].length).toBe(kept);
        expect(full.startsWith(text.slice(0, kept))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
