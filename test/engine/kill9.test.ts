import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crashLoop } from '../helpers/crash-loop.js';
import { readTaggedLog } from '../helpers/runs-log.js';
import { spawnCli } from '../helpers/spawn-cli.js';

const kSeed = 0x5eed_c0de;

// The loop itself (session, kills, checks) is shared with scripts/crash-loop.ts and
// test/reliability/crash-loop.test.ts. Here the commands a killed run leaves behind are
// let end before each resume, so that every re-execution is the engine's doing alone.
describe('kill -9 at random moments', () => {
  it(`loses no accepted result, keeps tasks.csv parseable and reruns only tasks in flight (seed ${kSeed})`, async () => {
    const report = await crashLoop({
      tasks: 200,
      waves: 5,
      kills: 5,
      concurrency: 8,
      naps: [0, 0.12],
      seed: kSeed,
      settleOrphans: true,
      keep: true,
    });
    try {
      expect(report.violations).toEqual([]);
      // At least one kill cut a run short (otherwise this test proved nothing).
      expect(report.kills).toBeGreaterThan(0);
      expect(report.interrupted).toBeGreaterThan(0);
      expect(report.parses).toBe(report.kills);
      // Orphans were let end before each resume: no execution ran beside another of its task.
      expect(report.overlaps).toBe(0);

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
