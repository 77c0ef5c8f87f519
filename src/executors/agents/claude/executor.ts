import type { RequestUsage } from '../../../knowledge/usage.js';
import { sumUsage } from '../../../knowledge/usage.js';
import { SecretScrubber } from '../../../text/secret-scrubber.js';
import { kMaxEventLineChars } from '../../../text/text-lines.js';
import { describe } from '../../module.js';
import { quoteAnswer } from '../../openai/answer.js';
import { answerSchema } from '../../openai/contract-schema.js';
import { readContractAnswer } from '../../openai/contract.js';
import { RolePrompts, systemPrompt } from '../../openai/prompt.js';
import type { AttemptOutcome, ErrorClass, ExecutorRunOptions, TaskInput } from '../../types.js';
import { killGroupQuietly, spawnTaskProcess } from '../../task-process.js';
import type { AgentRunner, AgentSettings } from '../settings.js';
import { claudeArgs, kClaudeReadOnlyTools, kClaudeWriteTools, kDefaultClaudeMaxTurns } from './args.js';
import { ClaudeStreamReader, type ClaudeResult, type ClaudeStream } from './stream.js';

export interface ClaudeExecutorOptions {
  /** A folder of `<pipeline>/<role>.md` prompt templates looked at before the built-in ones. */
  promptsDir?: string;
  /** The program to run. @default `claude`, found on PATH */
  binary?: string;
}

/** Characters of stderr kept for an error message: its end, where programs say what went wrong. */
const kStderrTail = 2000;

/** How the answer reaches csv-wave: claude's --json-schema asks for it through its StructuredOutput tool. */
const kStructuredNote = 'Give that JSON object as the input of your StructuredOutput tool call: it is your answer.';

/**
 * Runs a task as `claude -p` (issue 24): the role's prompt of the session's pipeline with
 * the answer contract's instructions on stdin, the contract's JSON Schema as
 * `--json-schema` (claude holds its StructuredOutput tool call to it), the events read as
 * they come. The answer is held again to the contract of the openai executor; one that
 * breaks it gets one repair turn in the same session (`--resume <session id>`) naming what
 * was wrong, then fails as `invalid-output`. Each invocation is one usage line, with the
 * tokens and the `total_cost_usd` claude reported. claude starts in a process group of its
 * own: a timeout or a stop kills it with everything it started.
 */
export class ClaudeExecutor implements AgentRunner {
  readonly #binary: string;
  readonly #prompts: RolePrompts;

  constructor(options: ClaudeExecutorOptions = {}) {
    this.#binary = options.binary ?? 'claude';
    this.#prompts = new RolePrompts(options.promptsDir);
  }

  async run(task: TaskInput, options: ExecutorRunOptions, settings: AgentSettings): Promise<AttemptOutcome> {
    // The key (and any other secret of the environment) never leaves in a result or an error.
    return SecretScrubber.fromEnv().deep(await this.#attempt(task, options, settings));
  }

  async #attempt(task: TaskInput, options: ExecutorRunOptions, settings: AgentSettings): Promise<AttemptOutcome> {
    if (options.signal.aborted) return { kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' };
    if (settings.agent !== 'claude') {
      return { kind: 'error', errorClass: 'task-failure', error: `The claude executor cannot run a task whose agent is ${settings.agent}` };
    }
    if (typeof settings.model !== 'string' || settings.model.trim() === '') {
      return { kind: 'error', errorClass: 'task-failure', error: 'The claude executor needs a model (--model NAME, session.json, or the row)' };
    }
    const context = options.prompt;
    if (context === undefined) {
      return { kind: 'error', errorClass: 'task-failure', error: 'The claude executor needs the prompt context of the task (ExecutorRunOptions.prompt)' };
    }
    const role = task.row.role ?? '';
    let prompt: string;
    try {
      prompt = `${systemPrompt(context.pipeline)}\n${kStructuredNote}\n\n${this.#prompts.render(task, context)}`;
    } catch (error) {
      return { kind: 'error', errorClass: 'task-failure', error: describe(error) };
    }
    const schema = JSON.stringify(answerSchema(context.pipeline, role));
    const deadline = options.timeoutMs > 0 ? Date.now() + options.timeoutMs : undefined;
    const requests: RequestUsage[] = [];
    const invoke = async (input: string, resume: string | undefined): Promise<ClaudeRun> => {
      const spent = requests.reduce((sum, request) => sum + (request.cost_usd ?? 0), 0);
      const args = claudeArgs({
        model: settings.model,
        schema,
        maxTurns: settings.maxTurns ?? kDefaultClaudeMaxTurns,
        allowedTools: settings.allowedTools ?? (settings.sandbox === 'workspace-write' ? [...kClaudeReadOnlyTools, ...kClaudeWriteTools] : kClaudeReadOnlyTools),
        ...(settings.effort === undefined ? {} : { effort: settings.effort }),
        ...(options.maxBudgetUsd === undefined ? {} : { maxBudgetUsd: options.maxBudgetUsd - spent }),
        // The first turn's session is kept for a repair; the repair is the last turn.
        persist: resume === undefined,
        ...(resume === undefined ? {} : { resume }),
        ...(settings.args === undefined ? {} : { extra: settings.args }),
      });
      const ran = await this.#spawn(args, input, task, options, settings, deadline);
      const line = usageLine(ran, requests.length + 1, settings.model);
      if (line !== undefined) {
        requests.push(line);
        options.reportUsage?.(line);
      }
      return ran;
    };
    const withUsage = (outcome: AttemptOutcome): AttemptOutcome => {
      const usage = sumUsage(requests);
      return { ...outcome, ...(usage === undefined ? {} : { usage }), ...(requests.length === 0 ? {} : { requests }) };
    };

    const first = await invoke(prompt, undefined);
    const failed = this.#failure(first, settings, options);
    if (failed !== undefined) return withUsage(failed);
    const content = answerText(first.stream.result);
    const answer = readContractAnswer(content, undefined, context.pipeline, role);
    if (answer.ok) return withUsage(result(task, answer));
    const session = first.stream.sessionId;
    if (session === undefined) {
      return withUsage({ kind: 'error', errorClass: 'invalid-output', error: `Invalid agent answer: ${answer.problem}${quoteAnswer(content)}` });
    }
    const repaired = await invoke(repairPrompt(task.id, answer.problem), session);
    const repairFailed = this.#failure(repaired, settings, options);
    if (repairFailed !== undefined) return withUsage(repairFailed);
    const repairedContent = answerText(repaired.stream.result);
    const second = readContractAnswer(repairedContent, undefined, context.pipeline, role);
    if (second.ok) return withUsage(result(task, second));
    return withUsage({
      kind: 'error',
      errorClass: 'invalid-output',
      error: `Invalid agent answer after one repair turn: ${second.problem}${quoteAnswer(repairedContent)}`,
    });
  }

  #spawn(args: string[], input: string, task: TaskInput, options: ExecutorRunOptions, settings: AgentSettings, deadline: number | undefined): Promise<ClaudeRun> {
    return new Promise((resolve) => {
      const reader = new ClaudeStreamReader();
      let stderr = '';
      let stoppedBy: 'timeout' | 'abort' | undefined;
      if (deadline !== undefined && Date.now() >= deadline) {
        resolve({ stream: reader.end(), stderr: '', code: null, signal: null, stoppedBy: 'timeout' });
        return;
      }
      let child: ReturnType<typeof spawnTaskProcess>;
      try {
        child = spawnTaskProcess(this.#binary, args, task, { cwd: options.workdir ?? task.session, env: claudeEnv(settings) });
      } catch (error) {
        resolve({ startError: describe(error), stream: reader.end(), stderr: '', code: null, signal: null });
        return;
      }
      const killGroup = () => killGroupQuietly(child.pid);
      const stop = (why: 'timeout' | 'abort') => {
        stoppedBy ??= why;
        killGroup();
      };
      const timer = deadline === undefined ? undefined : setTimeout(() => stop('timeout'), Math.max(0, deadline - Date.now()));
      const onAbort = () => stop('abort');
      options.signal.addEventListener('abort', onAbort, { once: true });
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => reader.push(chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-4 * kStderrTail);
      });
      child.stdin.on('error', () => {});
      child.stdin.end(input);
      let startError: string | undefined;
      child.on('error', (error) => {
        startError = describe(error);
      });
      child.on('close', (code, signal) => {
        if (timer) clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        // What claude left running in its group goes with it.
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

  /** Why an invocation gave no answer to judge; undefined when it ended with one. */
  #failure(ran: ClaudeRun, settings: AgentSettings, options: ExecutorRunOptions): Extract<AttemptOutcome, { kind: 'error' }> | undefined {
    if (ran.stoppedBy === 'timeout') {
      return { kind: 'error', errorClass: 'timeout', error: `Timed out after ${options.timeoutMs / 1000}s; claude and what it started were killed` };
    }
    if (ran.stoppedBy === 'abort') return { kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' };
    if (ran.startError !== undefined) {
      return {
        kind: 'error',
        errorClass: 'task-failure',
        error: `Cannot start ${this.#binary}: ${ran.startError}. Install Claude Code (npm install -g @anthropic-ai/claude-code) or put it on PATH`,
      };
    }
    const result = ran.stream.result;
    if (result === undefined) {
      const how = ran.signal ? `was killed by ${ran.signal}` : `exited with code ${ran.code}`;
      const reason = stderrTail(ran.stderr);
      const dropped = ran.stream.droppedLines ? ` (${ran.stream.droppedLines} line(s) of its output over ${kMaxEventLineChars / 1024 / 1024} MiB were dropped)` : '';
      return { kind: 'error', errorClass: failureClass(reason), error: `claude ${how} without a result${dropped}${reason === '' ? '' : `: ${reason}`}` };
    }
    if (!result.isError && result.subtype === 'success') return undefined;
    return resultFailure(result, settings.maxTurns ?? kDefaultClaudeMaxTurns, options.maxBudgetUsd);
  }
}

/** How one `claude -p` ended. */
interface ClaudeRun {
  stream: ClaudeStream;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stoppedBy?: 'timeout' | 'abort';
  startError?: string;
}

/**
 * The environment claude gets on top of the run's: the Messages-API endpoint of
 * `--base-url`, and no retries of its own unless the user asked for them (CLAUDE_CODE_MAX_RETRIES):
 * the engine retries, by error class, as it does for every executor.
 */
function claudeEnv(settings: AgentSettings): Record<string, string> {
  return {
    ...(settings.baseUrl === undefined ? {} : { ANTHROPIC_BASE_URL: settings.baseUrl }),
    ...(process.env['CLAUDE_CODE_MAX_RETRIES'] === undefined ? { CLAUDE_CODE_MAX_RETRIES: '0' } : {}),
  };
}

/**
 * The usage line of one invocation: its result's tokens and cost; an unreported line for
 * an invocation stopped on its way once its session had started (tokens unknown, not zero).
 */
function usageLine(ran: ClaudeRun, request: number, model: string): RequestUsage | undefined {
  const result = ran.stream.result;
  const session = ran.stream.sessionId === undefined ? {} : { agent_session: ran.stream.sessionId };
  const usage = result?.usage;
  if (result !== undefined && usage !== undefined) {
    return {
      request,
      kind: 'agent',
      model,
      prompt_tokens: usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
      completion_tokens: usage.output_tokens,
      cached_tokens: usage.cache_read_input_tokens,
      cache_creation_tokens: usage.cache_creation_input_tokens,
      reported: true,
      ...(result.costUsd === undefined ? {} : { cost_usd: result.costUsd }),
      ...session,
    };
  }
  if (ran.stream.sessionId !== undefined && (ran.stoppedBy !== undefined || ran.stream.assistantMessages > 0)) {
    return { request, kind: 'agent', model, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reported: false, ...session };
  }
  return undefined;
}

/** The answer to judge: the StructuredOutput call's input, else the result's text. */
function answerText(result: ClaudeResult | undefined): string {
  if (result?.structuredOutput !== undefined) return JSON.stringify(result.structuredOutput);
  return result?.text ?? '';
}

function result(task: TaskInput, answer: Extract<ReturnType<typeof readContractAnswer>, { ok: true }>): AttemptOutcome {
  return { kind: 'result', result: { ...answer.result, id: task.id }, ...(answer.notes.length === 0 ? {} : { notes: answer.notes }) };
}

/** The repair turn's prompt: what was wrong, and what to give instead (the openai executor's repair wording). */
export function repairPrompt(taskId: string, problem: string): string {
  return (
    `Your answer could not be used: ${problem}. Answer again with only the corrected JSON object for task ${taskId}, ` +
    'following the result schema and your role instructions, as the input of your StructuredOutput tool call.'
  );
}

/**
 * A result event that is not a success, as an error of its class: max turns and max
 * budget fail the task naming the limit; a schema claude could not get answered is
 * invalid output; an API error goes by its HTTP status (429 rate-limited, 5xx and 529
 * overloaded transient), else by its message.
 */
export function resultFailure(result: ClaudeResult, maxTurns: number, maxBudgetUsd: number | undefined): Extract<AttemptOutcome, { kind: 'error' }> {
  const text = (result.text ?? '').trim();
  const said = text === '' ? '' : `: ${text}`;
  switch (result.subtype) {
    case 'error_max_turns':
      return {
        kind: 'error',
        errorClass: 'task-failure',
        error: `claude stopped at its turn limit (--max-turns ${maxTurns}, error_max_turns) before answering; raise max_turns in session.json (the executor block or the role's entry)`,
      };
    case 'error_max_budget_usd':
      return {
        kind: 'error',
        errorClass: 'task-failure',
        error: `claude stopped at its budget (--max-budget-usd${maxBudgetUsd === undefined ? '' : ` ${maxBudgetUsd}`}, what was left of --max-cost; error_max_budget_usd)`,
      };
    case 'error_max_structured_output_retries':
      return { kind: 'error', errorClass: 'invalid-output', error: `claude gave no answer that fits the answer schema (error_max_structured_output_retries)${said}` };
  }
  const status = result.apiErrorStatus;
  if (status !== undefined) {
    const errorClass: ErrorClass = status === 429 ? 'rate-limited' : status >= 500 || status === 408 ? 'transient' : 'task-failure';
    return { kind: 'error', errorClass, error: `claude's API call failed with HTTP ${status}${said}` };
  }
  if (/not logged in|\/login|invalid api key|authentication/i.test(text)) {
    return {
      kind: 'error',
      errorClass: 'task-failure',
      error: `claude is not logged in${said}; run \`claude\` and /login, or set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN)`,
    };
  }
  const subtype = result.subtype === '' || result.subtype === 'success' ? 'an error' : result.subtype;
  return { kind: 'error', errorClass: failureClass(text), error: `claude ended with ${subtype}${said}` };
}

/** The class of an error known only by its message: rate limits, then overload and server or network trouble. */
export function failureClass(message: string): ErrorClass {
  if (/\b429\b|too many requests|rate.?limit/i.test(message)) return 'rate-limited';
  if (/\b5\d\d\b|overloaded|timed? ?out|connection (refused|reset|closed|error)|ECONNREFUSED|ECONNRESET|unavailable/i.test(message)) return 'transient';
  return 'task-failure';
}

function stderrTail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > kStderrTail ? `…${trimmed.slice(-kStderrTail)}` : trimmed;
}
