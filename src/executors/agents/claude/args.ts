/**
 * The tools a claude agent may use when its settings name none: reading and searching
 * files. Anything else it asks for is refused (`--permission-mode dontAsk`), so a
 * read-only role cannot write, run a shell, fetch from the web or start sub-agents.
 */
export const kClaudeReadOnlyTools: readonly string[] = ['Read', 'Grep', 'Glob'];
/**
 * The tools added for a role whose sandbox is `workspace-write`: editing files of its
 * working folder, and of no other. A rule of claude's `Edit` covers every tool that edits
 * files (Edit, Write, NotebookEdit); `./**` is the working folder and what is under it. A
 * bare `Write` would let the agent write wherever the user may (seen with claude 2.1.197):
 * `~/.bashrc`, or claude's own settings with a hook that runs a shell.
 */
export const kClaudeWriteTools: readonly string[] = ['Edit(./**)'];
/**
 * claude's permission mode: a tool not pre-approved by `--allowedTools` is refused, never
 * asked about (no one is there to answer). `settings.args` may name another mode: the
 * last `--permission-mode` wins.
 */
export const kClaudePermissionMode = 'dontAsk';
/** Turns of one claude invocation when the settings give no `max_turns`: a runaway agent stops. */
export const kDefaultClaudeMaxTurns = 30;

/** What one `claude -p` of an attempt is given. */
export interface ClaudeArgs {
  model: string;
  /** The answer contract as JSON Schema text (`--json-schema`). */
  schema: string;
  /** @default kDefaultClaudeMaxTurns */
  maxTurns?: number;
  /** Pre-approved tools. @default kClaudeReadOnlyTools */
  allowedTools?: readonly string[];
  /** `--effort` (low, medium, high, xhigh, max). */
  effort?: string;
  /** Dollars the invocation may spend (`--max-budget-usd`): what is left of the run's --max-cost. */
  maxBudgetUsd?: number;
  /** Keep the session on disk so that a repair can resume it; else `--no-session-persistence`. */
  persist: boolean;
  /** Resume this session (the repair turn). */
  resume?: string;
  /** More arguments, after csv-wave's own. */
  extra?: readonly string[];
}

/**
 * The arguments of `claude -p` for one invocation; the prompt goes on stdin. The events
 * come as JSON lines (`stream-json`, which needs `--verbose`), read as they come. Values
 * that come from settings go as `--flag=value`, one argument each: a model name or a tool
 * list that begins with `-` stays a value, and `--allowedTools`, which takes several
 * values, cannot swallow the arguments after it.
 */
export function claudeArgs(args: ClaudeArgs): string[] {
  const tools = args.allowedTools ?? kClaudeReadOnlyTools;
  return [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    `--json-schema=${args.schema}`,
    `--model=${args.model}`,
    '--max-turns',
    String(args.maxTurns ?? kDefaultClaudeMaxTurns),
    '--permission-mode',
    kClaudePermissionMode,
    `--allowedTools=${tools.join(',')}`,
    ...(args.effort === undefined ? [] : [`--effort=${args.effort}`]),
    ...(args.maxBudgetUsd === undefined ? [] : ['--max-budget-usd', budgetText(args.maxBudgetUsd)]),
    ...(args.resume === undefined ? [] : [`--resume=${args.resume}`]),
    ...(args.persist ? [] : ['--no-session-persistence']),
    ...(args.extra ?? []),
  ];
}

const kMinBudgetUsd = 0.000001;

/** Dollars as claude takes them: a plain decimal, never an exponent (1e-7), never negative. */
function budgetText(usd: number): string {
  // claude refuses a budget of 0; a run with nothing left starts no task anyway.
  const value = Math.max(kMinBudgetUsd, usd);
  return value.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
}
