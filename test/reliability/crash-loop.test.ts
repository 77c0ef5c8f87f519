import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crashLoop, describeCrashLoop } from '../helpers/crash-loop.js';
import { readTaggedLog } from '../helpers/runs-log.js';
import { spawnCli } from '../helpers/spawn-cli.js';

const kSeed = 0xc0ffee;
const kKills = 5;

// The reduced crash loop of `npm test`; `npx tsx scripts/crash-loop.ts` runs the full one
// (500 tasks, 50 kills) and records its figures in RELIABILITY.md. Each kill lands after
// the run logged a seeded number of task starts, while one of its commands still runs, so
// every kill cuts work short however loaded the machine is; the next run starts at once,
// as after a real crash, with the killed run's commands possibly still running.
// Six runs of 150 tasks: a net of 600 s, as 120 s passed on a fresh clone at a load of 18.
describe('kill -9 mid-task, resumed at once', () => {
  it(`150 tasks at concurrency 16, SIGKILLed ${kKills} times: no result lost, tasks.csv parseable, only tasks in flight rerun (seed ${kSeed})`, { timeout: 600_000 }, async () => {
    const report = await crashLoop({ tasks: 150, kills: kKills, concurrency: 16, seed: kSeed, keep: true });
    try {
      expect(report.violations, describeCrashLoop(report).join('\n')).toEqual([]);
      // Every kill landed in a run, and tasks.csv parsed after each.
      expect(report.kills).toBe(kKills);
      expect(report.runs).toBe(kKills + 1);
      expect(report.parses).toBe(kKills);
      // Each kill found a command running whose result was not accepted: it ran again.
      expect(report.interrupted).toBeGreaterThanOrEqual(kKills);
      expect(report.maxExecutions).toBeGreaterThan(1);
      expect(report.maxExecutions).toBeLessThanOrEqual(report.boundOfMax);
      expect([...report.histogram.values()].reduce((sum, tasks) => sum + tasks, 0)).toBe(150);

      // Nothing left to do: one more resume runs nothing.
      const log = join(report.dir, 'runs.log');
      const before = readTaggedLog(log).length;
      const again = await spawnCli('resume', report.dir, '--cmd', 'echo "$CSV_WAVE_TASK_ID 99 start" >> runs.log').exited;
      expect(again.code).toBe(0);
      expect(readTaggedLog(log).length).toBe(before);
    } finally {
      rmSync(report.dir, { recursive: true, force: true });
    }
  });
});
