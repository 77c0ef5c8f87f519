import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { genericSession, readCsvRecords, readRows } from '../helpers/generic-session.js';

interface LaneEvent {
  what: 'start' | 'end';
  id: string;
  at: bigint;
}

/** The start and end lines the tasks appended to lane.log, in the order they were written. */
function laneEvents(dir: string): LaneEvent[] {
  return readFileSync(join(dir, 'lane.log'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [what, id, at] = line.split(' ');
      return { what: what as LaneEvent['what'], id: id!, at: BigInt(at!) };
    });
}

describe('interactive lane', () => {
  test('interactive tasks run through the configured executor one at a time, beside the csv-wave tasks', async () => {
    const dir = genericSession([
      { id: 'I1', description: 'i', role: 'gate', exec_mode: 'interactive' },
      { id: 'C1', description: 'c', role: 'worker', exec_mode: 'csv-wave' },
      { id: 'I2', description: 'i', role: 'gate', exec_mode: 'interactive' },
      { id: 'C2', description: 'c', role: 'worker', exec_mode: 'csv-wave' },
      { id: 'I3', description: 'i', role: 'gate', exec_mode: 'interactive' },
      { id: 'NEXT', description: 'n', role: 'gate', exec_mode: 'interactive', deps: 'I1;C1', context_from: 'I1;C1' },
    ]);
    // Each task logs its start and end with a clock reading; the short sleep gives an
    // overlap every chance to happen if the lane allowed one.
    const cmd =
      'echo "start $CSV_WAVE_TASK_ID $(date +%s%N)" >> lane.log; sleep 0.2; ' +
      'echo "end $CSV_WAVE_TASK_ID $(date +%s%N)" >> lane.log; printf "%s done" {id}';
    const result = await runCli('run', dir, '--cmd', cmd, '--concurrency', '4');
    expect(result.code).toBe(0);

    const interactive = laneEvents(dir).filter((event) => event.id.startsWith('I') || event.id === 'NEXT');
    expect(interactive).toHaveLength(8);
    // Never two at once: every start is followed by the end of the same task, and the next
    // task starts no earlier than the previous one ended.
    for (let i = 0; i < interactive.length; i += 2) {
      const start = interactive[i]!;
      const end = interactive[i + 1]!;
      expect([start.what, end.what, end.id]).toEqual(['start', 'end', start.id]);
      expect(end.at >= start.at).toBe(true);
      const next = interactive[i + 2];
      if (next) expect(next.at >= end.at).toBe(true);
    }
    // The lane follows priority and file order, and the next wave after the first.
    expect(interactive.filter((event) => event.what === 'start').map((event) => event.id)).toEqual(['I1', 'I2', 'I3', 'NEXT']);

    const rows = readRows(dir);
    for (const id of ['I1', 'I2', 'I3', 'C1', 'C2', 'NEXT']) expect(rows.get(id)).toMatchObject({ status: 'completed', findings: `${id} done` });
    // Interactive tasks take part in the waves but are never written to wave files.
    expect(readCsvRecords(join(dir, 'wave-1.csv')).map((record) => record['id'])).toEqual(['C1', 'C2']);
    expect(rows.get('NEXT')!.wave).toBe('2');
  });

  test('--halt holds back the interactive tasks that have not started yet', async () => {
    const dir = genericSession([
      { id: 'I1', description: 'fail', role: 'gate', exec_mode: 'interactive' },
      { id: 'I2', description: 'i', role: 'gate', exec_mode: 'interactive' },
      { id: 'I3', description: 'i', role: 'gate', exec_mode: 'interactive' },
    ]);
    const cmd = 'echo {id} >> ran.txt; case {description} in fail) exit 1;; esac; echo ok';
    const result = await runCli('run', dir, '--cmd', cmd, '--halt', 'fail=1');
    expect(result.code).toBe(1);
    expect(readFileSync(join(dir, 'ran.txt'), 'utf8')).toBe('I1\n');
    expect(Object.fromEntries([...readRows(dir)].map(([id, row]) => [id, row.status]))).toEqual({ I1: 'failed', I2: '', I3: '' });
  });

  test('an interactive task gets its prev_context and upstream like any other', async () => {
    const dir = genericSession([
      { id: 'SOURCE', description: 'found this', role: 'worker' },
      { id: 'ASK', description: 'ask', role: 'gate', exec_mode: 'interactive', deps: 'SOURCE', context_from: 'SOURCE' },
    ]);
    const cmd = 'case {description} in ask) cat > ask-stdin.json; printf %s {prev_context};; *) printf %s {description};; esac';
    expect((await runCli('run', dir, '--cmd', cmd)).code).toBe(0);
    expect(readRows(dir).get('ASK')).toMatchObject({ status: 'completed', findings: '[Task SOURCE] found this' });
    const stdin = JSON.parse(readFileSync(join(dir, 'ask-stdin.json'), 'utf8')) as { upstream: { deps: { id: string; findings: string }[] } };
    expect(stdin.upstream.deps.map((dep) => [dep.id, dep.findings])).toEqual([['SOURCE', 'found this']]);
  });
});
