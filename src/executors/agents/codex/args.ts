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
}

/**
 * The arguments of `codex exec` for one attempt; the prompt goes on stdin (`-`). Ephemeral:
 * no session file is kept in the user's CODEX_HOME. With a base URL, a provider of
 * csv-wave's own speaks the Responses API there and retries nothing: the engine retries,
 * by error class. Strings in `-c` values are TOML strings, JSON-quoted.
 */
export function codexExecArgs(args: CodexExecArgs): string[] {
  return [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '--ephemeral',
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
    ...(args.baseUrl === undefined ? [] : providerArgs(args.baseUrl, args.hasKey)),
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
