import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSession } from './session-builder.js';

/** One line of attempts.ndjson for task `id`, as a run writes it. */
function attemptLine(id: string, index: number): string {
  const start = Date.parse('2024-01-01T00:00:00.000Z') + index * 10;
  return JSON.stringify({
    run: 'r1',
    task: id,
    attempt: 1,
    wave: 1 + Math.floor(index / 100),
    start: new Date(start).toISOString(),
    end: new Date(start + 50).toISOString(),
    duration_ms: 50,
    outcome: 'completed',
    error_class: '',
    error: '',
    thread: 1,
    host: 'h',
    pid: 1,
    prompt_tokens: 0,
    completion_tokens: 0,
  });
}

/**
 * A finished session of `count` tasks in waves of 100, each with findings of about
 * `findingsChars` characters and one attempt: written as files, not run, so that a large
 * session costs the test no run. The report data of 5,000 tasks with 800 characters each
 * is about 5 MB.
 */
export function bigReportSession(count: number, findingsChars: number): string {
  const rows = [];
  const attempts = [];
  for (let i = 0; i < count; i++) {
    const id = `T${i}`;
    rows.push({
      id,
      title: `task ${i}`,
      description: `describe ${i}`,
      role: 'r',
      deps: i >= 100 ? `T${i - 100}` : '',
      wave: String(1 + Math.floor(i / 100)),
      status: 'completed',
      findings: `finding of task ${i} `.repeat(Math.ceil(findingsChars / 20)).slice(0, findingsChars),
    });
    attempts.push(attemptLine(id, i));
  }
  return buildSession(rows, { prefix: 'csv-wave-big-', files: { 'attempts.ndjson': `${attempts.join('\n')}\n` } });
}

/** A change of the session, as a run makes one: one more attempt line (the page's data changes with it). */
export function appendAttempt(dir: string, index: number): void {
  appendFileSync(join(dir, 'attempts.ndjson'), `${attemptLine(`T${index}`, index)}\n`);
}
