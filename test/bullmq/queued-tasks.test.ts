import { existsSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { attachReporter } from '../../src/cli/progress.js';
import { RunEmitter, type TaskRunningEvent } from '../../src/events/events.js';
import { runSession } from '../../src/run/run-session.js';
import { jobWaits } from '../helpers/bullmq-jobs.js';
import { lines, readyWorker, redisForEachTest, waitingCommand } from '../helpers/bullmq-session.js';
import { runCli } from '../helpers/cli.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

/** A stream that says it is a terminal and keeps what the live bar draws (as test/cli/progress-bar.test.ts's). */
class FakeTerminal extends Writable {
  readonly isTTY = true;
  readonly columns = 200;
  text = '';

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }

  /** The bar as a person sees it last: the text after the last move to column 1, escape sequences dropped. */
  lastLine(): string {
    // eslint-disable-next-line no-control-regex
    const plain = this.text.replace(/\x1b\[\d*G/g, '\r').replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '');
    return plain.split('\n').at(-1)!.split('\r').filter((part) => part !== '').at(-1) ?? '';
  }
}

describe.runIf(kRunRedisTests)('--backend bullmq: a task whose job waits in the queue is queued, not running', () => {
  const each = redisForEachTest();

  it('status shows a task whose job waits for a worker as [QUEUED] and one a worker took as [RUN] on that worker; the counts and --json say them apart', { timeout: 300_000 }, async () => {
    const dir = buildSession([
      { id: 'A', description: 'waits', role: 'worker' },
      { id: 'B', description: 'waits', role: 'worker' },
    ], { sessionId: 'queued-status' });
    // One worker, one job at a time: of the two jobs added together, one runs and the other waits.
    const worker = await readyWorker(each.redis.url, '--session-id', 'queued-status', '--concurrency', '1');
    each.started.push(worker);
    const coordinator = spawnCli('run', dir, '--cmd', waitingCommand(each.marks), '--concurrency', '2', '--backend', 'bullmq', '--redis', each.redis.url);
    each.started.push(coordinator);
    await waitFor(() => lines(join(each.marks, 'A.pids')).length + lines(join(each.marks, 'B.pids')).length === 1, 'one task running on the worker');
    const [runs, waits] = existsSync(join(each.marks, 'A.pids')) ? ['A', 'B'] : ['B', 'A'];

    const status = await runCli('status', dir, '--redis', each.redis.url);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toBe('');
    const lineOf = (id: string) => status.stdout.split('\n').find((line) => new RegExp(`^\\[[A-Z]+\\]\\s+${id} `).test(line));
    expect(lineOf(runs)).toMatch(new RegExp(`^\\[RUN\\]\\s+${runs}\\s+\\(worker\\) -> running on host ${hostname()} pid ${worker.child.pid}$`));
    expect(lineOf(waits)).toMatch(new RegExp(`^\\[QUEUED\\] ${waits}\\s+\\(worker\\) -> queued: waiting for a worker$`));
    expect(status.stdout).toContain('2 tasks: in_progress 1, queued 1\n');
    expect(status.stdout).toContain('Wave 1: 0/2 finished (completed 0, failed 0, skipped 0, running 1, queued 1, pending 0)\n');

    const json = JSON.parse((await runCli('status', dir, '--json', '--redis', each.redis.url)).stdout) as {
      counts: Record<string, number>;
      queued?: string[];
      workers?: Record<string, string>;
    };
    expect(json.queued).toEqual([waits]);
    expect(Object.keys(json.workers ?? {})).toEqual([runs]);
    // The counts are those of the status cells: both are in_progress.
    expect(json.counts['in_progress']).toBe(2);

    writeFileSync(join(each.marks, 'release'), '');
    const ran = await coordinator.exited;
    expect(ran.code, ran.stderr).toBe(0);
    expect(readRows(dir).get(waits)).toMatchObject({ status: 'completed', findings: `done-${waits}` });
  });

  it('the live bar counts a started task as queued while its job waits, and as running once a worker took it (task:running)', { timeout: 300_000 }, async () => {
    const dir = buildSession([{ id: 'A', description: 'waits', role: 'worker' }], { sessionId: 'queued-bar' });
    const events = new RunEmitter();
    const terminal = new FakeTerminal();
    attachReporter(events, { stdout: () => {}, stderr: () => {} }, 'tty', terminal);
    const order: string[] = [];
    const running: TaskRunningEvent[] = [];
    events.on('task:start', (event) => order.push(`start ${event.id} ${event.attempt}`));
    events.on('task:running', (event) => {
      order.push(`running ${event.id} ${event.attempt}`);
      running.push(event);
    });
    const run = runSession(dir, {
      events,
      executor: { type: 'command', template: waitingCommand(each.marks) },
      backend: { type: 'bullmq', url: each.redis.url },
    });
    try {
      // No worker yet: the job waits, and the bar says so.
      await jobWaits(each.redis.url, 'csv-wave-queued-bar', 'A');
      await waitFor(() => /0\/1 done \| 1 queued \| 0 running \|/.test(terminal.lastLine()), `the bar to count A as queued (${terminal.lastLine()})`);
      expect(running).toEqual([]);

      const worker = await readyWorker(each.redis.url, '--session-id', 'queued-bar');
      each.started.push(worker);
      await waitFor(() => running.length === 1, 'task:running once the worker took the job');
      expect(running).toEqual([{ id: 'A', attempt: 1 }]);
      await waitFor(() => /0\/1 done \| 0 queued \| 1 running \|/.test(terminal.lastLine()), `the bar to count A as running (${terminal.lastLine()})`);
      await waitFor(() => lines(join(each.marks, 'A.pids')).length === 1, 'the command to run on the worker');
    } finally {
      writeFileSync(join(each.marks, 'release'), '');
    }
    const summary = await run;
    expect(summary.exitCode).toBe(0);
    expect(order).toEqual(['start A 1', 'running A 1']);
  });
});
