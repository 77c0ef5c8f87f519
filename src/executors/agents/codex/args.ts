import type { CodexSandbox } from '../../../schema/session.js';

/** The provider id csv-wave's --base-url defines for codex (`-c model_providers.csvwave.…`). */
export const kCodexProviderId = 'csvwave';
/** The environment variable codex reads the key for csv-wave's provider from, when it is set. */
export const kCodexKeyEnv = 'OPENAI_API_KEY';

/** What one `codex exec` of an attempt is given. */
export interface CodexExecArgs {
  model: string;
  /** A Responses-API endpoint: csv-wave's own provider points there. @default codex's own provider (its config) */
  baseUrl?: string;
  sandbox: CodexSandbox;
  /** Where the agent works (`-C`). */
  workdir: string;
  /** The answer contract as a JSON Schema file (`--output-schema`). */
  schemaFile: string;
  /** Where codex writes its last message (`--output-last-message`). */
  lastMessageFile: string;
  /** Whether the key variable is set: codex fails at once when the env_key it is given is not. */
  hasKey: boolean;
  /** Reasoning effort (`-c model_reasoning_effort=…`). @default codex's own (its config, the model's) */
  effort?: string;
  /** The settings' own arguments, after csv-wave's. */
  extra?: readonly string[];
  /** The repair turn: the thread to resume (`exec … resume <thread id> -`). */
  resume?: string;
}

/**
 * The flags csv-wave passes to `codex exec` itself, by every name codex knows them under.
 * codex refuses a single-value flag given twice ("cannot be used multiple times"), so
 * settings' `args` naming one would fail every task: they are refused before any task
 * (codexArgsProblem). `-c`, `--enable` and the like may repeat: a later `-c` wins, so args
 * may override any configuration value but csv-wave's own provider is then the user's call.
 */
const kOwnFlags = [
  ['--json'],
  ['--skip-git-repo-check'],
  ['--ephemeral'],
  ['-s', '--sandbox'],
  ['-C', '--cd'],
  ['--output-schema'],
  ['-o', '--output-last-message'],
  ['-m', '--model'],
] as const;

/**
 * What is wrong with the settings' `args` for codex, or undefined: a flag csv-wave passes
 * (with the setting to use instead), a `-` or `--` (they would end codex's options before
 * csv-wave's prompt), or `resume` (codex would take it for its subcommand).
 */
export function codexArgsProblem(args: readonly string[]): string | undefined {
  for (const arg of args) {
    const name = arg.startsWith('--') ? arg.split('=')[0]! : arg.length > 2 && arg.startsWith('-') ? arg.slice(0, 2) : arg;
    const own = kOwnFlags.find((names) => (names as readonly string[]).includes(name));
    if (own !== undefined) {
      const setting = own[0] === '-s' ? ' (set "sandbox" instead)' : own[0] === '-m' ? ' (set "model" instead)' : own[0] === '-C' ? ' (csv-wave sets the folder the agent works in)' : '';
      return `\`${arg}\` is a flag csv-wave passes to codex itself${setting}; codex refuses it twice`;
    }
    if (arg === '-' || arg === '--') return `\`${arg}\` would end codex's options before csv-wave's prompt`;
    if (arg === 'resume') return '`resume` would be taken for codex\'s subcommand: csv-wave resumes a thread itself, for the repair turn';
  }
  return undefined;
}

/**
 * The arguments of `codex exec` for one attempt; the prompt goes on stdin (`-`). Not
 * ephemeral: codex keeps the thread in the user's CODEX_HOME (`sessions/`), so that the
 * repair turn can resume it; an ephemeral thread cannot be resumed. The repair turn is the
 * same arguments with `resume <thread id>` before the `-`: codex 0.171.0 applies every exec
 * flag given before `resume` to the resumed thread (its sandbox, folder, model, schema,
 * last-message file, `-c` values), while `resume` itself takes no `-s` or `-C`. With a base
 * URL, a provider of csv-wave's own speaks the Responses API there and retries nothing:
 * the engine retries, by error class. Strings in `-c` values are TOML strings, JSON-quoted.
 */
export function codexExecArgs(args: CodexExecArgs): string[] {
  return [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '-s',
    args.sandbox,
    '-C',
    args.workdir,
    '--output-schema',
    args.schemaFile,
    '--output-last-message',
    args.lastMessageFile,
    // One argument: a model name that begins with `-` stays a value, never a flag of codex's.
    `--model=${args.model}`,
    ...(args.effort === undefined ? [] : ['-c', `model_reasoning_effort=${JSON.stringify(args.effort)}`]),
    ...(args.baseUrl === undefined ? [] : providerArgs(args.baseUrl, args.hasKey)),
    ...(args.extra ?? []),
    ...(args.resume === undefined ? [] : ['resume', args.resume]),
    '-',
  ];
}

function providerArgs(baseUrl: string, hasKey: boolean): string[] {
  const key = `model_providers.${kCodexProviderId}`;
  const settings = [
    `model_provider=${JSON.stringify(kCodexProviderId)}`,
    `${key}.name="csv-wave"`,
    `${key}.base_url=${JSON.stringify(baseUrl)}`,
    `${key}.wire_api="responses"`,
    ...(hasKey ? [`${key}.env_key=${JSON.stringify(kCodexKeyEnv)}`] : []),
    `${key}.request_max_retries=0`,
    `${key}.stream_max_retries=0`,
  ];
  return settings.flatMap((setting) => ['-c', setting]);
}
