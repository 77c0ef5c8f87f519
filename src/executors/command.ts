import { utf8Prefix, cutTextBytes } from '../text/cut-text.js';
import { kCanFindEscaped, killEscapedProcesses } from './escaped-processes.js';
import type { OutputMode } from '../schema/session.js';
import { parseTaskOutput } from './output.js';
import { SecretScrubber } from '../text/secret-scrubber.js';
import { renderCommand } from './template.js';
import { killGroupQuietly, spawnTaskProcess } from './task-process.js';
import { kRunDefaults } from '../option-table.js';
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

/** Characters of stderr kept for the error message: the end is where programs say what went wrong. */
const kStderrTail = 2000;
/**
 * Output is read this much past a cut before it is scrubbed of secrets and then cut: a
 * secret across the cut is hidden whole rather than leaving its first or last characters.
 */
const kSecretMargin = 8192;
/**
 * After a command exits and what it left running is killed, its pipes close at once; one
 * still open this long after is held by a process csv-wave could not find.
 */
const kHeldPipesMs = 2000;
/** A command that exits with this (EX_TEMPFAIL of sysexits.h) asks to be retried. */
export const kTempFailExitCode = 75;

/**
 * Runs a task as `/bin/sh -c <rendered template>` in the session folder (or the folder
 * `--workdir` gives it: ExecutorRunOptions.workdir), the task as JSON
 * on stdin. The shell starts in a process group of its own, so a timeout kills everything
 * the command started, grandchildren included; processes that left the group (setsid) are
 * found by the command's `CSV_WAVE_*` environment, which they inherit. The result is taken
 * when the shell exits: what it left running is killed then, and does not hold the task.
 */
export class CommandExecutor implements Executor {
  readonly #template: string;
  readonly #maxStdout: number;
  readonly #output: OutputMode;

  constructor(options: CommandExecutorOptions) {
    this.#template = options.template;
    this.#maxStdout = options.maxStdoutBytes ?? kRunDefaults.maxStdoutBytes;
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
      let child: ReturnType<typeof spawnShell>;
      try {
        child = spawnShell(command, task, options.workdir);
      } catch (error) {
        // Some start failures are thrown rather than emitted: they fail the task, not its worker thread.
        resolve({ kind: 'error', errorClass: 'task-failure', error: startFailure(error, command) });
        return;
      }
      // stdout is read to its end however long it is (a command blocked on a full pipe would
      // never exit), but only its head and its end are kept: memory stays bounded.
      const stdout = new BoundedOutput(maxStdout);
      let stderr = '';
      let stderrCut = false;
      let killedFor: 'timeout' | 'abort' | undefined;
      let exited = false;
      let pipesHeld = false;
      let escaped = 0;
      let heldPipesTimer: NodeJS.Timeout | undefined;
      const marker = [`CSV_WAVE_SESSION=${task.session}`, `CSV_WAVE_TASK_ID=${task.id}`, `CSV_WAVE_ATTEMPT=${task.attempt}`];

      const killGroup = () => {
        killGroupQuietly(child.pid);
      };
      const killAll = () => {
        killGroup();
        if (child.pid !== undefined) escaped += killEscapedProcesses(child.pid, marker);
      };
      const closePipes = () => {
        child.stdout.destroy();
        child.stderr.destroy();
      };
      // A process that could not be found may hold the pipes open; the task must still
      // end now, so the pipes are closed on this side too.
      const stop = (why: 'timeout' | 'abort') => {
        if (exited) return; // the result is on its way
        killedFor = why;
        killAll();
        closePipes();
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
      child.on('exit', () => {
        if (killedFor) return;
        exited = true;
        if (timer) clearTimeout(timer);
        // The result is the shell's: what it left running goes now, so that a grandchild
        // holding stdout does not hold the task, nor runs on beside the next one.
        killAll();
        heldPipesTimer = setTimeout(() => {
          pipesHeld = true;
          closePipes();
        }, kHeldPipesMs);
      });
      child.on('close', (code, signal) => {
        if (killedFor === 'timeout') {
          finish({ kind: 'error', errorClass: 'timeout', error: `Timed out after ${options.timeoutMs / 1000}s; ${whatWasKilled(escaped)}` });
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
            error: (tail === '' ? `Command ${how}` : `Command ${how}: ${tail}`) + (pipesHeld ? ` (${kHeldPipesNote})` : ''),
          });
          return;
        }
        const outcome = stdout.parse(this.#output);
        finish(pipesHeld ? { ...outcome, notes: [...(outcome.notes ?? []), kHeldPipesNote] } : outcome);
      });

      let finished = false;
      function finish(outcome: AttemptOutcome): void {
        if (finished) return;
        finished = true;
        if (timer) clearTimeout(timer);
        clearTimeout(heldPipesTimer);
        options.signal.removeEventListener('abort', onAbort);
        // Whatever the command left running in its group goes with it.
        killGroup();
        resolve(outcome);
      }
    });
  }
}

const kHeldPipesNote =
  `the command exited, but a process it started still held its output open ${kHeldPipesMs / 1000}s later: ` +
  `it had left the command's process group and cleared its CSV_WAVE_* environment, so csv-wave could not find it ` +
  `to end it; it may still run, and what it printed after that was not read`;

/** What a timeout ended, said honestly: a process that left the group is ended only where it can be found. */
function whatWasKilled(escaped: number): string {
  let text = 'the command and its children were killed';
  if (escaped > 0) text += `, ${escaped} of them outside its process group (setsid), found by their CSV_WAVE_* environment`;
  if (!kCanFindEscaped) {
    text += '; processes it started outside its process group (setsid, daemons) cannot be found on this system and may still run';
  }
  return text;
}

function spawnShell(command: string, task: TaskInput, cwd: string | undefined) {
  return spawnTaskProcess('/bin/sh', ['-c', command], task, cwd === undefined ? {} : { cwd });
}

/**
 * Why the shell could not start. E2BIG: the kernel refuses a command line this long (Linux
 * takes at most 128 KiB in one argument, and the whole command is one); the same cells
 * fit on stdin, which has no such limit.
 */
function startFailure(error: unknown, command: string): string {
  if ((error as NodeJS.ErrnoException).code !== 'E2BIG') return `Cannot start /bin/sh: ${(error as Error).message}`;
  const bytes = Buffer.byteLength(command);
  const why =
    bytes > kMaxArgumentBytes
      ? `more than the system takes in one command line (128 KiB on Linux)`
      : `which with the environment (${environmentBytes()} bytes) is more than the system takes (about 2 MiB on Linux)`;
  return (
    `Command too long to start (E2BIG): after its {placeholders} were filled in it is ${bytes} bytes, ${why}. ` +
    `Pass big cells on stdin instead: the command gets the task there as JSON (for example \`jq -r .row.description\`)`
  );
}

/** MAX_ARG_STRLEN of Linux: the longest single argument, here the whole command. */
const kMaxArgumentBytes = 128 * 1024;

function environmentBytes(): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(process.env)) bytes += Buffer.byteLength(`${name}=${value ?? ''}`) + 1;
  return bytes;
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
