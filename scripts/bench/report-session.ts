import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mulberry32 } from '../gen-dag.js';

const kWaves = 10;
const kSlots = 16;

/** tasks.csv and attempts.ndjson of a finished run of `tasks` tasks (the browser test of a big report uses it too). */
export function writeReportSession(dir: string, tasks: number): void {
  const random = mulberry32(14);
  const perWave = Math.ceil(tasks / kWaves);
  const id = (i: number) => `T${String(i).padStart(String(tasks - 1).length, '0')}`;
  const quote = (cell: string) => `"${cell.replace(/"/g, '""')}"`;
  const lines = ['id,title,description,role,angle,gc_round,deps,context_from,exec_mode,wave,status,findings,gc_signal,severity_summary,error'];
  const attempts: string[] = [];
  const failed = new Set<number>();
  const slotFree = new Array<number>(kSlots).fill(Date.parse('2026-01-01T00:00:00Z'));
  for (let i = 0; i < tasks; i++) {
    const wave = Math.floor(i / perWave) + 1;
    const dep = wave > 1 ? i - perWave + Math.floor(random() * 10) : -1;
    const skipped = dep >= 0 && failed.has(dep);
    const fails = !skipped && random() < 0.01;
    if (fails || skipped) failed.add(i);
    const status = skipped ? 'skipped' : fails ? 'failed' : 'completed';
    const findings = status === 'completed' ? `Counted ${Math.floor(random() * 5000)} words in part ${i}; top word "the".` : '';
    const error = skipped ? 'Dependency failed or skipped' : fails ? 'Command exited with code 1: input file missing' : '';
    lines.push(
      [id(i), `Part ${i}`, `Count the words of part ${i}`, 'worker', '', '0', dep >= 0 ? id(dep) : '', '', 'csv-wave', String(wave), status, findings, '', '', error]
        .map(quote)
        .join(','),
    );
    if (skipped) continue;
    const tries = random() < 0.01 ? 2 : 1;
    for (let attempt = 1; attempt <= tries; attempt++) {
      const slot = slotFree.indexOf(Math.min(...slotFree));
      const start = slotFree[slot]!;
      const duration = Math.round(50 + random() * 400);
      slotFree[slot] = start + duration;
      const outcome = attempt < tries ? 'retried' : fails ? 'failed' : 'completed';
      attempts.push(
        JSON.stringify({
          run: 'bench', task: id(i), attempt, wave, start: new Date(start).toISOString(), end: new Date(start + duration).toISOString(),
          duration_ms: duration, outcome, error_class: outcome === 'completed' ? '' : outcome === 'retried' ? 'transient' : 'task-failure',
          error: outcome === 'completed' ? '' : 'x', thread: slot + 1, host: 'bench', pid: 1, prompt_tokens: 0, completion_tokens: 0,
        }),
      );
    }
  }
  writeFileSync(join(dir, 'tasks.csv'), `${lines.join('\n')}\n`);
  writeFileSync(join(dir, 'attempts.ndjson'), `${attempts.join('\n')}\n`);
}

