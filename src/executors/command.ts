import { spawn } from 'node:child_process';
import { parseTaskOutput } from './output.js';
import { renderCommand } from './template.js';
import type { AttemptOutcome, Executor, ExecutorRunOptions, TaskInput } from './types.js';

export interface CommandExecutorOptions {
  /** The shell template, `{column}` placeholders shell-quoted. */
  template: string;
  /** Bytes of stdout kept; the rest is dropped and the task told so. @default 16 MiB */
  maxStdoutBytes?: number;
}

const kDefaultMaxStdout = 16 * 1024 * 1024;
/** Characters of stderr kept for the error message: the end is where programs say what went wrong. */
const kStderrTail = 2000;
/** A command that exits with this (EX_TEMPFAIL of sysexits.h) asks to be retried. */
export const kTempFailExitCode = 75;

/**
 * Runs a task as `/bin/sh -c <rendered template>` in the session folder, the task as JSON
 * on stdin. The shell starts in a process group of its own, so a timeout kills everything
 * the command started, grandchildren included.
 */
export class CommandExecutor implements Executor {
  readonly #template: string;
  readonly #maxStdout: number;

  constructor(options: CommandExecutorOptions) {
    this.#template = options.template;
    this.#maxStdout = options.maxStdoutBytes ?? kDefaultMaxStdout;
  }

  run(task: TaskInput, options: ExecutorRunOptions): Promise<AttemptOutcome> {
    const command = renderCommand(this.#template, { ...task.row, prev_context: task.prev_context });
    return new Promise((resolve) => {
      const child = spawn('/bin/sh', ['-c', command], {
        cwd: task.session,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: {
          ...process.env,
          CSV_WAVE_SESSION: task.session,
          CSV_WAVE_TASK_ID: task.id,
          CSV_WAVE_WAVE: String(task.wave),
          CSV_WAVE_ROLE: task.row.role ?? '',
          CSV_WAVE_ATTEMPT: String(task.attempt),
        },
      });
      const stdout: Buffer[] = [];
      let stdoutBytes = 0;
      let stdoutCut = false;
      let stderr = '';
      let killedFor: 'timeout' | 'abort' | undefined;

      const killGroup = () => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // The group is already gone.
        }
      };
      // A process that left the group (setsid, a daemon) may hold the pipes open; the
      // task must still end now, so the pipes are closed on this side too.
      const stop = (why: 'timeout' | 'abort') => {
        killedFor = why;
        killGroup();
        child.stdout.destroy();
        child.stderr.destroy();
      };
      const timer = options.timeoutMs > 0 ? setTimeout(() => stop('timeout'), options.timeoutMs) : undefined;
      const onAbort = () => stop('abort');
      options.signal.addEventListener('abort', onAbort, { once: true });

      child.stdout.on('data', (chunk: Buffer) => {
        if (stdoutBytes >= this.#maxStdout) {
          stdoutCut = true;
          return;
        }
        const room = this.#maxStdout - stdoutBytes;
        if (chunk.length > room) stdoutCut = true;
        const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
        stdout.push(kept);
        stdoutBytes += kept.length;
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-kStderrTail);
      });
      // A command that does not read its stdin closes the pipe early; that is not an error.
      child.stdin.on('error', () => {});
      child.stdin.end(JSON.stringify(task));

      child.on('error', (error) => {
        finish({ kind: 'error', errorClass: 'task-failure', error: `Cannot start /bin/sh: ${error.message}` });
      });
      child.on('close', (code, signal) => {
        if (killedFor === 'timeout') {
          finish({ kind: 'error', errorClass: 'timeout', error: `Timed out after ${options.timeoutMs / 1000}s; the command and its children were killed` });
          return;
        }
        if (killedFor === 'abort') {
          finish({ kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' });
          return;
        }
        if (code !== 0) {
          const tail = stderr.trim();
          const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
          finish({
            kind: 'error',
            errorClass: code === kTempFailExitCode ? 'transient' : 'task-failure',
            error: tail === '' ? `Command ${how}` : `Command ${how}: ${tail}`,
          });
          return;
        }
        const text = Buffer.concat(stdout).toString('utf8');
        finish(parseTaskOutput(text, stdoutCut ? this.#maxStdout : undefined));
      });

      let finished = false;
      function finish(outcome: AttemptOutcome): void {
        if (finished) return;
        finished = true;
        if (timer) clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        // Whatever the command left running in its group goes with it.
        killGroup();
        resolve(outcome);
      }
    });
  }
}
