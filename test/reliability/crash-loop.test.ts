import { describe, expect, it } from 'vitest';
import { crashLoop, describeCrashLoop } from '../helpers/crash-loop.js';

const kSeed = 0xc0ffee;

// The reduced crash loop of `npm test`; `npx tsx scripts/crash-loop.ts` runs the full one
// (500 tasks, 50 kills) and records its figures in RELIABILITY.md.
describe('crash loop', () => {
  it(`150 tasks at concurrency 16, SIGKILLed 5 times and resumed at once: no result lost, every bound kept (seed ${kSeed})`, async () => {
    const report = await crashLoop({ tasks: 150, kills: 5, concurrency: 16, seed: kSeed });
    expect(report.violations, describeCrashLoop(report).join('\n')).toEqual([]);
    expect(report.kills).toBeGreaterThan(0);
    expect(report.parses).toBe(report.kills);
    expect(report.interrupted).toBeGreaterThan(0);
    expect(report.maxExecutions).toBeLessThanOrEqual(report.boundOfMax);
    expect([...report.histogram.values()].reduce((sum, tasks) => sum + tasks, 0)).toBe(150);
  });
});
