import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeStaleScratchFolders, withScratchFolder } from '../../../files/scratch-folder.js';
import type { RequestUsage } from '../../../knowledge/usage.js';
import { sumUsage } from '../../../knowledge/usage.js';
import { SecretScrubber } from '../../../text/secret-scrubber.js';
import { describe } from '../../module.js';
import { quoteAnswer } from '../../openai/answer.js';
import { repairInstruction } from '../../openai/answer-turn.js';
import { answerSchema } from '../../openai/contract-schema.js';
import { readContractAnswer } from '../../openai/contract.js';
import { RolePrompts, systemPrompt } from '../../openai/prompt.js';
import type { AttemptOutcome, ErrorClass, ExecutorRunOptions, TaskInput } from '../../types.js';
import type { AgentRunner, AgentSettings } from '../settings.js';
import { codexExecArgs, kCodexKeyEnv } from './args.js';
import { CodexStreamReader, type CodexStream, type CodexUsage } from './stream.js';
import { killGroupQuietly, spawnTaskProcess } from '../../task-process.js';

export interface CodexExecutorOptions {
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
 * Runs a task as `codex exec` (DESIGN.md section 6, issue 24), with the settings the agent
 * dispatcher chose for the task (agent-executor.ts): the role's prompt of the session's
 * pipeline with the answer contract's instructions on stdin, the contract's JSON Schema as
 * `--output-schema`, the JSONL events read as they come. Codex does not hold its answer to
 * the schema, so the last message is held to the same contract as the openai executor's
 * answers; one that breaks it gets one repair turn in the same thread (`codex exec …
 * resume <thread id>`) naming what was wrong, and fails as `invalid-output` if the repair
 * breaks it too. codex starts in a process group of its own: a timeout or a stop kills it
 * with everything it started. Its environment carries the task's CSV_WAVE_* marks, so a
 * run that stops finds it as it finds commands.
 */
export class CodexExecutor implements AgentRunner {
  readonly #options: CodexExecutorOptions;
  readonly #prompts: RolePrompts;

  constructor(options: CodexExecutorOptions = {}) {
    this.#options = options;
    this.#prompts = new RolePrompts(options.promptsDir);
    if (!staleSwept) {
      staleSwept = true;
      removeStaleScratchFolders(kScratchPrefix);
    }
  }

  async run(task: TaskInput, options: ExecutorRunOptions, settings: AgentSettings): Promise<AttemptOutcome> {
    // The key (and any other secret of the environment) never leaves in a result or an error.
    return SecretScrubber.fromEnv().deep(await this.#attempt(task, options, settings));
  }

  async #attempt(task: TaskInput, options: ExecutorRunOptions, settings: AgentSettings): Promise<AttemptOutcome> {
    if (options.signal.aborted) return { kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' };
    const context = options.prompt;
    if (context === undefined) {
      return { kind: 'error', errorClass: 'task-failure', error: 'The codex executor needs the prompt context of the task (ExecutorRunOptions.prompt)' };
    }
    if (settings.model.trim() === '') return { kind: 'error', errorClass: 'task-failure', error: 'The codex executor needs a model: --model, session.json or a model cell' };
    const role = task.row.role ?? '';
    let prompt: string;
    try {
      prompt = `${systemPrompt(context.pipeline)}\n\n${this.#prompts.render(task, context)}`;
    } catch (error) {
      return { kind: 'error', errorClass: 'task-failure', error: describe(error) };
    }
    const schema = JSON.stringify(answerSchema(context.pipeline, role));
    const deadline = options.timeoutMs > 0 ? Date.now() + options.timeoutMs : undefined;
    return withScratchFolder(kScratchPrefix, { 'answer-schema.json': schema }, async (scratch) => {
      const turnArgs = (lastMessageFile: string, resume?: string) =>
        codexExecArgs({
          model: settings.model,
          ...(settings.baseUrl === undefined ? {} : { baseUrl: settings.baseUrl }),
          sandbox: settings.sandbox ?? 'read-only',
          workdir: options.workdir ?? task.session,
          schemaFile: join(scratch, 'answer-schema.json'),
          lastMessageFile,
          hasKey: (process.env[kCodexKeyEnv] ?? '') !== '',
          ...(settings.effort === undefined ? {} : { effort: settings.effort }),
          ...(settings.args === undefined ? {} : { extra: settings.args }),
          ...(resume === undefined ? {} : { resume }),
        });
      const requests: RequestUsage[] = [];
      const turn = async (number: 1 | 2, input: string, resume?: string, before?: CodexUsage) => {
        const lastMessageFile = join(scratch, `last-message-${number}.txt`);
        const ran = await this.#spawn(turnArgs(lastMessageFile, resume), input, task, options, remaining(deadline));
        for (const request of this.#requests(ran, settings.model, number, before)) {
          options.reportUsage?.(request);
          requests.push(request);
        }
        return { ran, judged: this.#outcome(ran, lastMessageFile, task, context.pipeline, options.timeoutMs) };
      };
      const first = await turn(1, prompt);
      let outcome: AttemptOutcome;
      const thread = first.ran.stream.threadId;
      if (first.judged.kind !== 'repair') outcome = first.judged;
      else if (thread === undefined) outcome = invalidAnswer(first.judged, '(no repair turn: codex named no thread to resume)');
      else if (options.signal.aborted) outcome = { kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' };
      else {
        // The repair turn resumes the thread: codex sends the conversation so far with it.
        const second = await turn(2, repairInstruction(task.id, first.judged.problem), thread, first.ran.stream.usage);
        outcome = second.judged.kind === 'repair' ? invalidAnswer(second.judged, 'after one repair turn') : second.judged;
      }
      const usage = sumUsage(requests);
      return { ...outcome, ...(usage === undefined ? {} : { usage }), ...(requests.length === 0 ? {} : { requests }) };
    });
  }

  #spawn(args: string[], prompt: string, task: TaskInput, options: ExecutorRunOptions, timeoutMs: number): Promise<CodexRun> {
    const binary = this.#options.binary ?? 'codex';
    return new Promise((resolve) => {
      const reader = new CodexStreamReader();
      let stderr = '';
      let stoppedBy: 'timeout' | 'abort' | undefined;
      let child: ReturnType<typeof spawnTaskProcess>;
      try {
        child = spawnTaskProcess(binary, args, task, { cwd: options.workdir ?? task.session });
      } catch (error) {
        resolve({ startError: describe(error), stream: reader.end(), stderr: '', code: null, signal: null });
        return;
      }
      const killGroup = () => killGroupQuietly(child.pid);
      const stop = (why: 'timeout' | 'abort') => {
        stoppedBy ??= why;
        killGroup();
      };
      const timer = timeoutMs > 0 ? setTimeout(() => stop('timeout'), timeoutMs) : undefined;
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

  /**
   * The usage.ndjson line of a turn: its tokens, or an unreported line for a turn stopped on
   * its way. A resumed thread's `turn.completed` counts the whole thread (codex 0.171.0
   * reported 1,120 input tokens for a repair turn of 1,000 after a first turn of 120), so
   * the repair's line is its usage less the first turn's (`before`).
   */
  #requests(ran: CodexRun, model: string, request: 1 | 2, before: CodexUsage | undefined): RequestUsage[] {
    const usage = ran.stream.usage;
    const session = ran.stream.threadId === undefined ? {} : { agent_session: ran.stream.threadId };
    if (usage !== undefined) {
      const less = (key: keyof CodexUsage) => Math.max(0, usage[key] - (before?.[key] ?? 0));
      return [
        {
          request,
          kind: 'agent',
          model,
          prompt_tokens: less('input_tokens'),
          completion_tokens: less('output_tokens'),
          cached_tokens: less('cached_input_tokens'),
          reasoning_tokens: less('reasoning_output_tokens'),
          reported: true,
          ...session,
        },
      ];
    }
    if (ran.stoppedBy !== undefined && ran.stream.threadId !== undefined) {
      return [{ request, kind: 'agent', model, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reported: false, ...session }];
    }
    return [];
  }

  /** How a turn ended: an outcome, or an answer that breaks the contract (for the repair turn, or to fail). */
  #outcome(ran: CodexRun, lastMessageFile: string, task: TaskInput, pipeline: string, timeoutMs: number): AttemptOutcome | BrokenAnswer {
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
    if (!answer.ok) return { kind: 'repair', content, problem: answer.problem };
    return { kind: 'result', result: { ...answer.result, id: task.id }, ...(answer.notes.length === 0 ? {} : { notes: answer.notes }) };
  }
}

/** An answer that breaks the contract, and what is wrong with it. */
interface BrokenAnswer {
  kind: 'repair';
  content: string;
  problem: string;
}

/** The failure of an answer that breaks the contract, saying why no repair turn fixed it. */
function invalidAnswer(answer: BrokenAnswer, why: string): AttemptOutcome {
  return { kind: 'error', errorClass: 'invalid-output', error: `Invalid agent answer ${why}: ${answer.problem}${quoteAnswer(answer.content)}` };
}

/** The milliseconds left before the attempt's deadline (at least 1: 0 would mean none), or 0 without one. */
function remaining(deadline: number | undefined): number {
  return deadline === undefined ? 0 : Math.max(1, deadline - Date.now());
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
