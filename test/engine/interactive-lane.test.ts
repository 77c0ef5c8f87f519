import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { readCsvRecords } from '../helpers/test-files.js';

interface LaneEvent {
  what: 'start' | 'end';
  id: string;
}

/** The start and end lines the tasks appended to lane.log (O_APPEND), in the order they were written. */
function laneEvents(dir: string): LaneEvent[] {
  return readFileSync(join(dir, 'lane.log'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [what, id] = line.split(' ');
      return { what: what as LaneEvent['what'], id: id! };
    });
}

describe('interactive lane', () => {
  test('interactive tasks run through the configured executor one at a time, beside the csv-wave tasks', async () => {
    const dir = buildSession([
      { id: 'I1', description: 'i', role: 'gate', exec_mode: 'interactive' },
      { id: 'C1', description: 'c', role: 'worker', exec_mode: 'csv-wave' },
      { id: 'I2', description: 'i', role: 'gate', exec_mode: 'interactive' },
      { id: 'C2', description: 'c', role: 'worker', exec_mode: 'csv-wave' },
      { id: 'I3', description: 'i', role: 'gate', exec_mode: 'interactive' },
      { id: 'NEXT', description: 'n', role: 'gate', exec_mode: 'interactive', deps: 'I1;C1', context_from: 'I1;C1' },
    ]);
    // Each task logs its start and end; the short sleep gives an overlap every chance to
    // show in the log if the lane allowed one. C1 finishes only once I1 has started, which
    // the lane must do beside the csv-wave tasks (C1 gives up after many polls, failing).
    const cmd =
      'echo "start $CSV_WAVE_TASK_ID" >> lane.log; ' +
      'if [ "$CSV_WAVE_TASK_ID" = C1 ]; then i=0; until grep -qx "start I1" lane.log; do ' +
      'i=$((i+1)); [ $i -lt 1000 ] || exit 1; sleep 0.02; done; fi; ' +
      'sleep 0.2; echo "end $CSV_WAVE_TASK_ID" >> lane.log; printf "%s done" {id}';
    const result = await runCli('run', dir, '--cmd', cmd, '--concurrency', '4');
    expect(result.code).toBe(0);

    const interactive = laneEvents(dir).filter((event) => event.id.startsWith('I') || event.id === 'NEXT');
    expect(interactive).toHaveLength(8);
    // Never two at once: in the log, every start of an interactive task is followed by the
    // end of the same task before the next one starts.
    for (let i = 0; i < interactive.length; i += 2) {
      const start = interactive[i]!;
      const end = interactive[i + 1]!;
      expect([start.what, end.what, end.id]).toEqual(['start', 'end', start.id]);
    }
    // Beside the csv-wave tasks: I1 and C1 ran at the same time (each started before the other ended).
    const all = laneEvents(dir).map((event) => `${event.what} ${event.id}`);
    expect(all.indexOf('start I1')).toBeLessThan(all.indexOf('end C1'));
    expect(all.indexOf('start C1')).toBeLessThan(all.indexOf('end I1'));
    // The lane follows priority and file order, and the next wave after the first.
    expect(interactive.filter((event) => event.what === 'start').map((event) => event.id)).toEqual(['I1', 'I2', 'I3', 'NEXT']);

    const rows = readRows(dir);
    for (const id of ['I1', 'I2', 'I3', 'C1', 'C2', 'NEXT']) expect(rows.get(id)).toMatchObject({ status: 'completed', findings: `${id} done` });
    // Interactive tasks take part in the waves but are never written to wave files.
    expect(readCsvRecords(join(dir, 'wave-1.csv')).map((record) => record['id'])).toEqual(['C1', 'C2']);
    expect(rows.get('NEXT')!.wave).toBe('2');
  });

  test('an interactive task gets its prev_context and upstream like any other', async () => {
    const dir = buildSession([
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
