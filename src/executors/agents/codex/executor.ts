import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeStaleScratchFolders, withScratchFolder } from '../../../files/scratch-folder.js';
import type { RequestUsage } from '../../../knowledge/usage.js';
import { sumUsage } from '../../../knowledge/usage.js';
import { SecretScrubber } from '../../../text/secret-scrubber.js';
import { describe } from '../../module.js';
import { quoteAnswer } from '../../openai/answer.js';
import { answerSchema } from '../../openai/contract-schema.js';
import { readContractAnswer } from '../../openai/contract.js';
import { kSystemPrompt, RolePrompts } from '../../openai/prompt.js';
import type { AttemptOutcome, ErrorClass, Executor, ExecutorRunOptions, TaskInput } from '../../types.js';
import type { CodexSandbox } from '../../../schema/session.js';
import { codexExecArgs, kCodexKeyEnv } from './args.js';
import { CodexStreamReader, type CodexStream } from './stream.js';
import { killGroupQuietly, spawnTaskProcess } from '../../task-process.js';

export interface CodexExecutorOptions {
  /** The model codex asks its provider for (`-m`). */
  model: string;
  /** A Responses-API endpoint for a provider of csv-wave's own. @default codex's configured provider */
  baseUrl?: string;
  /** @default 'read-only' */
  sandbox?: CodexSandbox;
  /** A folder of `<pipeline>/<role>.md` prompt templates looked at before the built-in ones. */
  promptsDir?: string;
  /** The program to run. @default `codex`, found on PATH */
  binary?: string;
}

/** The scratch folders of codex attempts (the answer schema, the last message) start so. */
const kScratchPrefix = 'csv-wave-codex-';
/** Whether this thread has taken the scratch folders a stopped run left. */
let staleSwept = false;

/** Characters of stderr kept for an error message: its end, where programs say what went wrong. */
const kStderrTail = 2000;

/**
 * Runs a task as one `codex exec` (DESIGN.md section 6, issue 24): the role's prompt of the
 * session's pipeline with the answer contract's instructions on stdin, the contract's JSON
 * Schema as `--output-schema`, the JSONL events read as they come. Codex does not hold its
 * answer to the schema, so the last message is held to the same contract as the openai
 * executor's answers; one that breaks it fails the attempt as `invalid-output` (no repair
 * turn yet). codex starts in a process group of its own: a timeout or a stop kills it with
 * everything it started. Its environment carries the task's CSV_WAVE_* marks, so a run that
 * stops finds it as it finds commands.
 */
export class CodexExecutor implements Executor {
  readonly #options: CodexExecutorOptions;
  readonly #prompts: RolePrompts;

  constructor(options: CodexExecutorOptions) {
    if (typeof options.model !== 'string' || options.model.trim() === '') {
      throw new TypeError(`Expected \`model\` to be a non-empty string, got \`${String(options.model)}\` (${typeof options.model})`);
    }
    this.#options = options;
    this.#prompts = new RolePrompts(options.promptsDir);
    if (!staleSwept) {
      staleSwept = true;
      removeStaleScratchFolders(kScratchPrefix);
    }
  }

  async run(task: TaskInput, options: ExecutorRunOptions): Promise<AttemptOutcome> {
    // The key (and any other secret of the environment) never leaves in a result or an error.
    return SecretScrubber.fromEnv().deep(await this.#attempt(task, options));
  }

  async #attempt(task: TaskInput, options: ExecutorRunOptions): Promise<AttemptOutcome> {
    if (options.signal.aborted) return { kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' };
    const context = options.prompt;
    if (context === undefined) {
      return { kind: 'error', errorClass: 'task-failure', error: 'The codex executor needs the prompt context of the task (ExecutorRunOptions.prompt)' };
    }
    const role = task.row.role ?? '';
    let prompt: string;
    try {
      prompt = `${kSystemPrompt}\n\n${this.#prompts.render(task, context)}`;
    } catch (error) {
      return { kind: 'error', errorClass: 'task-failure', error: describe(error) };
    }
    const schema = JSON.stringify(answerSchema(context.pipeline, role));
    return withScratchFolder(kScratchPrefix, { 'answer-schema.json': schema }, async (scratch) => {
      const schemaFile = join(scratch, 'answer-schema.json');
      const lastMessageFile = join(scratch, 'last-message.txt');
      const args = codexExecArgs({
        model: this.#options.model,
        ...(this.#options.baseUrl === undefined ? {} : { baseUrl: this.#options.baseUrl }),
        sandbox: this.#options.sandbox ?? 'read-only',
        workdir: options.workdir ?? task.session,
        schemaFile,
        lastMessageFile,
        hasKey: (process.env[kCodexKeyEnv] ?? '') !== '',
      });
      const ran = await this.#spawn(args, prompt, task, options);
      const requests = this.#requests(ran);
      for (const request of requests) options.reportUsage?.(request);
      const outcome = this.#outcome(ran, lastMessageFile, task, context.pipeline, options.timeoutMs);
      const usage = sumUsage(requests);
      return { ...outcome, ...(usage === undefined ? {} : { usage }), ...(requests.length === 0 ? {} : { requests }) };
    });
  }

  #spawn(args: string[], prompt: string, task: TaskInput, options: ExecutorRunOptions): Promise<CodexRun> {
    const binary = this.#options.binary ?? 'codex';
    return new Promise((resolve) => {
      const reader = new CodexStreamReader();
      let stderr = '';
      let stoppedBy: 'timeout' | 'abort' | undefined;
      let child: ReturnType<typeof spawnTaskProcess>;
      try {
        child = spawnTaskProcess(binary, args, task);
      } catch (error) {
        resolve({ startError: describe(error), stream: reader.end(), stderr: '', code: null, signal: null });
        return;
      }
      const killGroup = () => killGroupQuietly(child.pid);
      const stop = (why: 'timeout' | 'abort') => {
        stoppedBy ??= why;
        killGroup();
      };
      const timer = options.timeoutMs > 0 ? setTimeout(() => stop('timeout'), options.timeoutMs) : undefined;
      const onAbort = () => stop('abort');
      options.signal.addEventListener('abort', onAbort, { once: true });
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => reader.push(chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-4 * kStderrTail);
      });
      child.stdin.on('error', () => {});
      child.stdin.end(prompt);
      let startError: string | undefined;
      child.on('error', (error) => {
        startError = describe(error);
      });
      child.on('close', (code, signal) => {
        if (timer) clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        // What codex left running in its group goes with it.
        killGroup();
        resolve({
          stream: reader.end(),
          stderr,
          code,
          signal,
          ...(stoppedBy === undefined ? {} : { stoppedBy }),
          ...(startError === undefined ? {} : { startError }),
        });
      });
    });
  }

  /** The usage.ndjson line of the run: its turn's tokens, or an unreported line for a run stopped on its way. */
  #requests(ran: CodexRun): RequestUsage[] {
    const model = this.#options.model;
    const usage = ran.stream.usage;
    const session = ran.stream.threadId === undefined ? {} : { agent_session: ran.stream.threadId };
    if (usage !== undefined) {
      return [
        {
          request: 1,
          kind: 'agent',
          model,
          prompt_tokens: usage.input_tokens,
          completion_tokens: usage.output_tokens,
          cached_tokens: usage.cached_input_tokens,
          reasoning_tokens: usage.reasoning_output_tokens,
          reported: true,
          ...session,
        },
      ];
    }
    if (ran.stoppedBy !== undefined && ran.stream.threadId !== undefined) {
      return [{ request: 1, kind: 'agent', model, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reported: false, ...session }];
    }
    return [];
  }

  #outcome(ran: CodexRun, lastMessageFile: string, task: TaskInput, pipeline: string, timeoutMs: number): AttemptOutcome {
    if (ran.stoppedBy === 'timeout') {
      return { kind: 'error', errorClass: 'timeout', error: `Timed out after ${timeoutMs / 1000}s; codex and what it started were killed` };
    }
    if (ran.stoppedBy === 'abort') return { kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' };
    if (ran.startError !== undefined) {
      return {
        kind: 'error',
        errorClass: 'task-failure',
        error: `Cannot start ${this.#options.binary ?? 'codex'}: ${ran.startError}. Install the Codex CLI (npm install -g @openai/codex) or put it on PATH`,
      };
    }
    if (ran.code !== 0) {
      const how = ran.signal ? `was killed by ${ran.signal}` : `exited with code ${ran.code}`;
      const reason = ran.stream.failure ?? stderrTail(ran.stderr);
      return { kind: 'error', errorClass: failureClass(reason), error: `codex ${how}${reason === '' ? '' : `: ${reason}`}` };
    }
    const content = ran.stream.lastMessage ?? readLastMessage(lastMessageFile);
    const answer = readContractAnswer(content, undefined, pipeline, task.row.role ?? '');
    if (!answer.ok) {
      return { kind: 'error', errorClass: 'invalid-output', error: `Invalid agent answer: ${answer.problem}${quoteAnswer(content)}` };
    }
    return { kind: 'result', result: { ...answer.result, id: task.id }, ...(answer.notes.length === 0 ? {} : { notes: answer.notes }) };
  }
}

/** How one `codex exec` ended. */
interface CodexRun {
  stream: CodexStream;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stoppedBy?: 'timeout' | 'abort';
  startError?: string;
}

/**
 * The error class of a failed turn, from codex's message (it gives no status field):
 * rate limits are `rate-limited`; server errors, overload and a lost stream `transient`;
 * anything else fails the task.
 */
export function failureClass(message: string): ErrorClass {
  if (/\b429\b|too many requests|rate.?limit/i.test(message)) return 'rate-limited';
  if (/\b5\d\d\b|overloaded|stream disconnected|timed? ?out|connection (refused|reset|closed)|unavailable/i.test(message)) return 'transient';
  return 'task-failure';
}

function readLastMessage(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function stderrTail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > kStderrTail ? `…${trimmed.slice(-kStderrTail)}` : trimmed;
}
