import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import { cleanText } from '../../text/clean-text.js';
import { scrubSecrets } from '../../text/secret-scrubber.js';
import { killTaskCommands } from './child-groups.js';
import { LineSplitter } from './line-splitter.js';
import { readReply } from './pool-replies.js';

/** Characters of the launcher's stderr kept for the message of its death. */
const kStderrTail = 1000;

interface Pending {
  request: AttemptRequest;
  resolve: (reply: AttemptReply) => void;
}

/**
 * One launcher process (launcher-main.ts) and the attempts it runs: requests go down its
 * stdin and replies come back on its stdout, one JSON line each, tagged with a number.
 *
 * A launcher that dies (killed, out of memory) or whose pipes close fails every attempt
 * it had with a worker-crash reply, as a dying worker thread does: the scheduler's rule
 * for crashes applies (one more attempt, on a launcher of its own). Before that, the
 * commands those attempts had started are ended: they lost their parent and would
 * otherwise run on beside their retry. A reply line that does not read fails its task only.
 */
export class Launcher {
  readonly #child: ChildProcessByStdio<Writable, Readable, Readable>;
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  #stderr = '';
  #dead = false;
  readonly #exited: Promise<void>;

  /**
   * `file`: the launcher's entry; another one only in tests of this end of the pipes.
   * `args`: its arguments (launcher-orphan.ts `kEndIfOrphaned`).
   */
  constructor(file = launcherFile(), args: readonly string[] = []) {
    this.#child = spawn(process.execPath, [...process.execArgv, file, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const splitter = new LineSplitter((line) => this.#onLine(line));
    this.#child.stdout.on('data', (chunk: Buffer) => splitter.push(chunk));
    this.#child.stderr.setEncoding('utf8');
    this.#child.stderr.on('data', (text: string) => {
      this.#stderr = (this.#stderr + text).slice(-kStderrTail);
    });
    // A pipe that breaks while the process lives on would leave its attempts waiting forever.
    const broken = () => this.#kill();
    this.#child.stdin.on('error', broken);
    this.#child.stdout.on('error', broken);
    this.#child.stdout.on('end', broken);
    this.#exited = new Promise((resolve) => {
      this.#child.on('error', (error) => {
        // It could not be started at all: there will be no 'close'.
        this.#stderr += error.message;
        this.#died(null, null);
        resolve();
      });
      this.#child.on('close', (code, signal) => {
        this.#died(code, signal);
        resolve();
      });
    });
  }

  /** The launcher's pid: the parent of the commands it starts (undefined if it could not start). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Attempts sent and not answered yet. */
  get busy(): number {
    return this.#pending.size;
  }

  /** False once the process died or was told to end: it takes no more attempts. */
  get usable(): boolean {
    return !this.#dead && this.#child.stdin.writable;
  }

  /** Resolves once the process has exited and its pipes are closed. */
  get exited(): Promise<void> {
    return this.#exited;
  }

  run(request: AttemptRequest): Promise<AttemptReply> {
    if (this.#dead) return Promise.resolve({ kind: 'error', errorClass: 'worker-crash', error: 'Command launcher died before the task ran' });
    const tag = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(tag, { request, resolve });
      this.#child.stdin.write(`${tag} ${JSON.stringify(request)}\n`);
    });
  }

  /** No more attempts: the process answers those it has, then exits. Resolves when it has. */
  end(): Promise<void> {
    this.#child.stdin.end();
    return this.#exited;
  }

  #onLine(line: string): void {
    const space = line.indexOf(' ');
    const tag = Number(line.slice(0, space));
    const pending = this.#pending.get(tag);
    if (space < 1 || pending === undefined) {
      // Not a reply of this launcher's making: the channel cannot be trusted any more.
      this.#kill();
      return;
    }
    this.#pending.delete(tag);
    pending.resolve(readReply(line.slice(space + 1)));
  }

  #kill(): void {
    this.#dead = true;
    try {
      this.#child.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }

  #died(code: number | null, signal: NodeJS.Signals | null): void {
    this.#dead = true;
    if (this.#pending.size === 0) return;
    const how = signal ? `was killed by ${signal}` : code === null ? 'could not start' : `exited with code ${code}`;
    const said = this.#stderr.trim();
    const error = scrubSecrets(cleanText(`Command launcher ${how} while the task ran${said === '' ? '' : `: ${said}`}`));
    const lost = [...this.#pending.values()];
    this.#pending.clear();
    for (const { request } of lost) killTaskCommands(request.task.session, request.task.id, request.task.attempt);
    for (const { resolve } of lost) resolve({ kind: 'error', errorClass: 'worker-crash', error });
  }
}

/** The compiled launcher entry. Under a TypeScript test runner this file is .ts; the launcher is in dist/. */
function launcherFile(): string {
  const here = import.meta.url;
  const url = here.endsWith('.ts') ? new URL('../../../dist/backend/local/launcher-main.js', here) : new URL('./launcher-main.js', here);
  return fileURLToPath(url);
}
