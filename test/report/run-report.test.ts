import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { ReportData } from '../../src/report/report-data.js';
import { runCli } from '../helpers/cli.js';
import { buildSession } from '../helpers/session-builder.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

/** The data report.html embeds. */
function pageData(path: string): ReportData {
  const html = readFileSync(path, 'utf8');
  const json = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)?.[1];
  expect(json, 'the data element').toBeDefined();
  return JSON.parse(json!) as ReportData;
}

function statusOf(data: ReportData, id: string): string | undefined {
  return data.tasks.find((task) => task[0] === id)?.[4];
}

describe('report.html during and after a run', () => {
  test('written at the end of wave 1 while wave 2 still runs, and again when the run ends', async () => {
    const dir = buildSession([
      { id: 'FIRST', description: 'f', role: 'r' },
      { id: 'SECOND', description: 's', role: 'r', deps: 'FIRST' },
    ]);
    const cmd = 'case {id} in SECOND) while [ ! -e release ]; do sleep 0.05; done; echo second;; *) echo first;; esac';
    const run = spawnCli('run', dir, '--cmd', cmd);
    const report = join(dir, 'report.html');
    try {
      await waitFor(() => existsSync(report), 'report.html after wave 1');
      const during = pageData(report);
      expect(statusOf(during, 'FIRST')).toBe('completed');
      expect(statusOf(during, 'SECOND')).not.toBe('completed');
      expect(during.attempts.map((attempt) => during.tasks[attempt[0]]![0])).toEqual(['FIRST']);
    } finally {
      writeFileSync(join(dir, 'release'), '');
    }
    expect((await run.exited).code).toBe(0);
    const after = pageData(report);
    expect(statusOf(after, 'SECOND')).toBe('completed');
    expect(after.attempts).toHaveLength(2);
    expect(after.counts.completed).toBe(2);
  });

  test('csv-wave report --out FILE writes there; --json prints the same data and writes nothing', async () => {
    const dir = buildSession([
      { id: 'A', description: 'a', role: 'r' },
      { id: 'B', description: 'b', role: 'r', deps: 'A' },
    ]);
    expect((await runCli('run', dir, '--cmd', 'case {id} in A) exit 3;; *) echo ok;; esac')).code).toBe(1);
    const out = join(dir, 'elsewhere.html');
    const written = await runCli('report', dir, '--out', out);
    expect(written.code, written.stderr).toBe(0);
    const json = await runCli('report', dir, '--json');
    expect(json.code).toBe(0);
    const data = JSON.parse(json.stdout) as ReportData;
    expect({ ...data, generated: '' }).toEqual({ ...pageData(out), generated: '' });
    expect(data.failures).toEqual([
      { kind: 'failed', errorClass: 'task-failure', message: expect.stringMatching(/code 3/) as unknown, tasks: ['A'] },
      { kind: 'skipped', errorClass: '', message: 'A', tasks: ['B'] },
    ]);
  });
});
