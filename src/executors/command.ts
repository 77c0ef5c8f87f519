import { spawn } from 'node:child_process';
import { utf8Prefix, cutTextBytes } from '../knowledge/cut-text.js';
import type { OutputMode } from '../schema/session.js';
import { parseTaskOutput } from './output.js';
import { SecretScrubber } from './secret-scrubber.js';
import { renderCommand } from './template.js';
import type { AttemptOutcome, Executor, ExecutorRunOptions, TaskInput } from './types.js';

export interface CommandExecutorOptions {
  /** The shell template, `{column}` placeholders shell-quoted. */
  template: string;
  /**
   * Bytes of stdout kept; the rest is read and dropped, and the findings say so.
   * `ExecutorRunOptions.maxStdoutBytes` wins. @default 1 MiB
   */
  maxStdoutBytes?: number;
  /** How stdout becomes the result (see parseTaskOutput). @default 'auto' */
  output?: OutputMode;
}

/** @default 1 MiB of stdout per task (`max_stdout_bytes`) */
export const kDefaultMaxStdoutBytes = 1024 * 1024;
/** Characters of stderr kept for the error message: the end is where programs say what went wrong. */
const kStderrTail = 2000;
/**
 * Output is read this much past a cut before it is scrubbed of secrets and then cut: a
 * secret across the cut is hidden whole rather than leaving its first or last characters.
 */
const kSecretMargin = 8192;
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
  readonly #output: OutputMode;

  constructor(options: CommandExecutorOptions) {
    this.#template = options.template;
    this.#maxStdout = options.maxStdoutBytes ?? kDefaultMaxStdoutBytes;
    this.#output = options.output ?? 'auto';
  }

  run(task: TaskInput, options: ExecutorRunOptions): Promise<AttemptOutcome> {
    let command: string;
    try {
      command = renderCommand(this.#template, { ...task.row, prev_context: task.prev_context });
    } catch (error) {
      // A placeholder where no quoting is safe; the run refuses such templates at its start.
      return Promise.resolve({ kind: 'error', errorClass: 'task-failure', error: `--cmd template: ${(error as Error).message}` });
    }
    const maxStdout = options.maxStdoutBytes ?? this.#maxStdout;
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
      // stdout is read to its end however long it is (a command blocked on a full pipe would
      // never exit), but only its head and its end are kept: memory stays bounded.
      const stdout = new BoundedOutput(maxStdout);
      let stderr = '';
      let stderrCut = false;
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

      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      // Decoded as a stream, so that a character split across two chunks stays whole.
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (text: string) => {
        stderr += text;
        if (stderr.length > kStderrTail + kSecretMargin) {
          stderrCut = true;
          stderr = stderr.slice(-(kStderrTail + kSecretMargin));
        }
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
          const tail = stderrTail(stderr, stderrCut);
          const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
          finish({
            kind: 'error',
            errorClass: code === kTempFailExitCode ? 'transient' : 'task-failure',
            error: tail === '' ? `Command ${how}` : `Command ${how}: ${tail}`,
          });
          return;
        }
        finish(stdout.parse(this.#output));
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

/** The end of stderr for an error message, scrubbed of secrets before it is cut. */
function stderrTail(text: string, cut: boolean): string {
  const scrubbed = SecretScrubber.fromEnv().text(text);
  if (!cut && scrubbed.length <= kStderrTail) return scrubbed.trim();
  let tail = scrubbed.slice(-kStderrTail);
  // Not half a surrogate pair at the start.
  if (/^[\udc00-\udfff]/.test(tail)) tail = tail.slice(1);
  return `…${tail.trim()}`;
}

/**
 * A command's stdout, kept within bounds: the first `cap` bytes (and a margin for secret
 * scrubbing), and the last `cap` bytes, in which the result line of a long output is looked for.
 */
class BoundedOutput {
  readonly #cap: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  readonly #tail: Buffer[] = [];
  #tailBytes = 0;
  #total = 0;

  constructor(cap: number) {
    this.#cap = cap;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    const room = this.#cap + kSecretMargin - this.#headBytes;
    if (room > 0) {
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.#head.push(kept);
      this.#headBytes += kept.length;
      chunk = chunk.subarray(kept.length);
    }
    if (chunk.length === 0) return;
    this.#tail.push(chunk);
    this.#tailBytes += chunk.length;
    while (this.#tail.length > 1 && this.#tailBytes - this.#tail[0]!.length >= this.#cap) {
      this.#tailBytes -= this.#tail.shift()!.length;
    }
  }

  parse(mode: OutputMode) {
    const head = Buffer.concat(this.#head);
    if (this.#total <= this.#cap) return parseTaskOutput(head.toString('utf8'), undefined, mode);
    // Scrubbed before the cut, so that a secret across it is hidden whole.
    const text = SecretScrubber.fromEnv().text(utf8Prefix(head).toString('utf8'));
    const kept = cutTextBytes(text, this.#cap);
    const tail = this.#tailBytes > 0 ? Buffer.concat(this.#tail).toString('utf8') : undefined;
    return parseTaskOutput(kept, {
      keptBytes: this.#cap,
      totalBytes: this.#total,
      ...(tail === undefined ? {} : { tail }),
    }, mode);
  }
}
