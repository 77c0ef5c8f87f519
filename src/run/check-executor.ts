import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { promisify } from 'node:util';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WaveError } from '../errors.js';
import { isAgentKind, type AgentKind } from '../executors/agents/settings.js';
import type { ExecutorSpec } from '../executors/messages.js';
import { templateProblems } from '../executors/template.js';

const execFileAsync = promisify(execFile);

/**
 * Checks once, before any task starts, what would otherwise fail every task one by one:
 * a command template with a placeholder that cannot be quoted, a command whose program is
 * not on PATH (exit 127 per task), a module that is missing or has no default export.
 * Throws WaveError INVALID_EXECUTOR (exit code 2) saying what to do.
 */
export async function checkExecutor(
  spec: ExecutorSpec,
  columns: readonly string[],
  sessionDir: string,
  moduleLoadTimeoutMs = kModuleLoadTimeoutMs,
  agents: readonly AgentKind[] = isAgentKind(spec.type) ? [spec.type] : [],
  agentCheck: AgentCheckOptions = {},
): Promise<void> {
  if (spec.type === 'command') checkCommand(spec.template, columns, sessionDir);
  else if (spec.type === 'module') await checkModule(spec.path, moduleLoadTimeoutMs);
  await checkAgentClis(agents, sessionDir, agentCheck);
}

/** How the agent CLIs are checked. */
export interface AgentCheckOptions {
  /**
   * Whether the agents run on this machine. A run whose attempts go to workers (`--backend
   * bullmq`) checks the CLIs but not their login: the key is the workers', and each
   * `csv-wave worker` checks its own login when it starts. @default true
   */
  runHere?: boolean;
}

/**
 * The check of each agent CLI, before any task: on PATH, recent enough. One line per agent;
 * an agent without one is not checked here (its tasks say what is wrong).
 */
const kAgentChecks: Partial<Record<AgentKind, (sessionDir: string, options: AgentCheckOptions) => Promise<void>>> = {
  codex: checkCodex,
  claude: checkClaude,
};

/**
 * Checks every agent CLI a session will use (checkAgentSettings lists them: the run's, its
 * roles', its rows'), each once: a codex run whose rows name claude needs claude too.
 */
export async function checkAgentClis(agents: readonly AgentKind[], sessionDir: string, options: AgentCheckOptions = {}): Promise<void> {
  for (const agent of new Set(agents)) await kAgentChecks[agent]?.(sessionDir, options);
}

/**
 * The oldest Codex CLI csv-wave runs: the one its tests run (test/agents/), which showed
 * every option and event it relies on (`exec --json --output-schema --ephemeral`, `turn.completed` usage).
 */
export const kMinCodexVersion = '0.171.0';
/** How long `codex --version` may take. */
const kVersionTimeoutMs = 30_000;

/**
 * The Codex CLI must be on PATH and no older than kMinCodexVersion: `Cannot start codex`, or
 * options it does not know, on every task otherwise. Its `--version` is asked once.
 */
async function checkCodex(sessionDir: string): Promise<void> {
  const path = process.env['PATH'] ?? '';
  const program = findOnPath('codex', path, sessionDir);
  if (program === undefined) {
    throw new WaveError(
      'INVALID_EXECUTOR',
      '--executor codex: the Codex CLI (codex) is not on PATH; install it with npm install -g @openai/codex, or add its folder to PATH',
    );
  }
  let printed: string;
  try {
    printed = (await execFileAsync(program, ['--version'], { timeout: kVersionTimeoutMs, encoding: 'utf8' })).stdout;
  } catch (error) {
    throw new WaveError('INVALID_EXECUTOR', `--executor codex: \`${program} --version\` failed (${(error as Error).message.trim()}); reinstall it with npm install -g @openai/codex`);
  }
  const version = /(\d+)\.(\d+)\.(\d+)/.exec(printed);
  if (version === null || compareVersions(version.slice(1, 4).map(Number), kMinCodexVersion.split('.').map(Number)) < 0) {
    throw new WaveError(
      'INVALID_EXECUTOR',
      `--executor codex: ${program} is ${version === null ? `of an unknown version (${JSON.stringify(printed.trim().slice(0, 80))})` : version[0]}, ` +
        `older than ${kMinCodexVersion}, the oldest csv-wave runs; update it with npm install -g @openai/codex@latest`,
    );
  }
}

/**
 * The oldest Claude Code csv-wave runs: the one its tests run (test/agents/), which showed
 * every option and event it relies on (`-p --output-format stream-json --json-schema
 * --max-turns --max-budget-usd --permission-mode dontAsk --resume`, the result's usage,
 * total_cost_usd and structured_output).
 */
export const kMinClaudeVersion = '2.1.197';

/**
 * Claude Code must be on PATH, no older than kMinClaudeVersion, and have a way to log in
 * that can be seen without the network: a key or token in the environment
 * (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN), a cloud provider
 * (CLAUDE_CODE_USE_BEDROCK, _VERTEX, _FOUNDRY), or its login files: `.credentials.json`
 * (what /login writes), an `apiKeyHelper` in settings.json, a `primaryApiKey` in
 * .claude.json. On macOS /login keeps the token in the keychain, which is not read:
 * there the login is not checked; nor is it where claude does not run (`runHere` false).
 * A login that is there but expired shows on the first task (`Not logged in`, task-failure).
 */
async function checkClaude(sessionDir: string, options: AgentCheckOptions): Promise<void> {
  const install = 'npm install -g @anthropic-ai/claude-code';
  const program = findOnPath('claude', process.env['PATH'] ?? '', sessionDir);
  if (program === undefined) {
    throw new WaveError('INVALID_EXECUTOR', `--executor claude: Claude Code (claude) is not on PATH; install it with ${install}, or add its folder to PATH`);
  }
  let printed: string;
  try {
    printed = (await execFileAsync(program, ['--version'], { timeout: kVersionTimeoutMs, encoding: 'utf8' })).stdout;
  } catch (error) {
    throw new WaveError('INVALID_EXECUTOR', `--executor claude: \`${program} --version\` failed (${(error as Error).message.trim()}); reinstall it with ${install}`);
  }
  const version = /(\d+)\.(\d+)\.(\d+)/.exec(printed);
  if (version === null || compareVersions(version.slice(1, 4).map(Number), kMinClaudeVersion.split('.').map(Number)) < 0) {
    throw new WaveError(
      'INVALID_EXECUTOR',
      `--executor claude: ${program} is ${version === null ? `of an unknown version (${JSON.stringify(printed.trim().slice(0, 80))})` : version[0]}, ` +
        `older than ${kMinClaudeVersion}, the oldest csv-wave runs; update it with ${install}@latest (or claude update)`,
    );
  }
  if (options.runHere !== false && process.platform !== 'darwin' && !claudeLoginSeen(process.env)) {
    throw new WaveError(
      'INVALID_EXECUTOR',
      '--executor claude: Claude Code is not logged in (no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN in the environment, ' +
        `and no login in ${claudeConfigDir(process.env)}); set one of them, or run \`claude\` and log in with /login`,
    );
  }
}

/** Claude Code's config folder: CLAUDE_CONFIG_DIR, else ~/.claude. */
function claudeConfigDir(env: NodeJS.ProcessEnv): string {
  const given = env['CLAUDE_CONFIG_DIR'];
  return given !== undefined && given !== '' ? given : join(env['HOME'] || homedir(), '.claude');
}

/** Whether a login of Claude Code's can be seen without the network (checkClaude says which). */
export function claudeLoginSeen(env: NodeJS.ProcessEnv): boolean {
  const set = (name: string) => (env[name] ?? '').trim() !== '';
  if (['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'].some(set)) return true;
  if (['CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX', 'CLAUDE_CODE_USE_FOUNDRY'].some(set)) return true;
  const config = claudeConfigDir(env);
  if (existsSync(join(config, '.credentials.json'))) return true;
  const mentions = (path: string, key: string) => {
    try {
      return readFileSync(path, 'utf8').includes(`"${key}"`);
    } catch {
      return false;
    }
  };
  if (mentions(join(config, 'settings.json'), 'apiKeyHelper')) return true;
  const home = env['HOME'] || homedir();
  return [join(config, '.claude.json'), join(home, '.claude.json')].some((path) => mentions(path, 'primaryApiKey'));
}

function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let index = 0; index < 3; index++) if (a[index] !== b[index]) return (a[index] ?? 0) - (b[index] ?? 0);
  return 0;
}

/**
 * How long a module's top-level code may take to load. One that never finishes (it awaits
 * something that never comes, with a timer keeping its thread alive) would otherwise hold
 * the run, and its lock, before any task starts.
 */
export const kModuleLoadTimeoutMs = 30_000;

function checkCommand(template: string, columns: readonly string[], sessionDir: string): void {
  const shown = JSON.stringify(template);
  const problems = templateProblems(template, [...columns, 'prev_context']);
  if (problems.length > 0) {
    throw new WaveError('INVALID_EXECUTOR', `Command template ${shown}: ${problems.join('; ')}`);
  }
  const program = plainProgram(template);
  // Without PATH, sh searches a default path of its own: nothing to check against.
  const path = process.env['PATH'];
  if (program !== undefined && path !== undefined && findOnPath(program, path, sessionDir) === undefined) {
    throw new WaveError(
      'INVALID_EXECUTOR',
      `Command not found: ${program} (the first word of ${shown}) is not a program on PATH; ` +
        'check its spelling, install it, or give its path',
    );
  }
}

/** sh's keywords and builtins: they need no program on PATH. */
const kShellWords = new Set(
  (
    '! { } case do done elif else esac fi for if in then until while ' +
    ': . [ alias bg break cd command continue echo eval exec exit export false fc fg getopts hash jobs kill ' +
    'local printf pwd read readonly return set shift test times trap true type ulimit umask unalias unset wait'
  ).split(' '),
);

/**
 * The template's first word when it is a plain program name (letters, digits, `._+-`):
 * not a path, a variable, a quoted word, a placeholder, an assignment or a shell word.
 */
function plainProgram(template: string): string | undefined {
  const word = /^\s*([^\s;&|<>()]*)/.exec(template)?.[1] ?? '';
  if (!/^[A-Za-z0-9._+-]+$/.test(word) || kShellWords.has(word)) return undefined;
  return word;
}

/** The program's path as /bin/sh finds it (an empty PATH entry is the working folder, the session's). */
function findOnPath(program: string, path: string, sessionDir: string): string | undefined {
  for (const entry of path.split(delimiter)) {
    const candidate = join(entry === '' ? sessionDir : entry, program);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

async function checkModule(path: string, loadTimeoutMs: number): Promise<void> {
  if (!existsSync(path)) {
    throw new WaveError(
      'INVALID_EXECUTOR',
      `No module at ${path}: a relative module path (--module or session.json) is relative to the session folder; ` +
        'give the right path, or an absolute one',
      { path },
    );
  }
  const loaded = await loadInThread(path, loadTimeoutMs);
  if ('error' in loaded) throw new WaveError('INVALID_EXECUTOR', `Cannot load the module ${path}: ${loaded.error}`, { path });
  if (loaded.type !== 'function') {
    throw new WaveError(
      'INVALID_EXECUTOR',
      `${path} has no default export function (its default export is ${loaded.type}): export default async (task, ctx) => result`,
      { path },
    );
  }
}

/**
 * Imports the module in a throwaway thread, as the workers will, and reports the type of
 * its default export: its top-level code (a process.exit, a thrown error) cannot touch
 * the run, and whatever it leaves running ends with the thread.
 */
function loadInThread(path: string, timeoutMs: number): Promise<{ type: string } | { error: string }> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData).then(
      (namespace) => parentPort.postMessage({ type: namespace.default === null ? 'null' : typeof namespace.default }),
      (error) => parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) }),
    );`;
  const worker = new Worker(code, { eval: true, workerData: pathToFileURL(path).href });
  let timer: NodeJS.Timeout | undefined;
  return new Promise<{ type: string } | { error: string }>((resolve) => {
    timer = setTimeout(
      () => resolve({ error: `its top-level code did not finish within ${timeoutMs / 1000} s (does it await something that never comes?)` }),
      timeoutMs,
    );
    worker.once('message', resolve);
    worker.once('error', (error) => resolve({ error: error.message }));
    worker.once('exit', (code) => resolve({ error: `it ended its thread while loading (exit code ${code})` }));
  }).finally(() => {
    clearTimeout(timer);
    void worker.terminate();
  });
}
