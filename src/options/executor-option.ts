import { isAbsolute, resolve } from 'node:path';
import { WaveError } from '../errors.js';
import type { ExecutorSpec } from '../executors/messages.js';
import { isAgentKind, type AgentOverride } from '../executors/agents/settings.js';
import { sessionPathForRead } from '../files/session-path.js';
import type { SessionConfig } from '../schema/session.js';
import type { OutputMode } from '../option-table.js';

/**
 * What runs each task, as a caller names it. A command's template is `cmd`, as in
 * session.json and `--cmd`; `template`, its name before, is still accepted.
 */
export type ExecutorOption =
  | { type: 'command'; cmd: string }
  /** @deprecated the same as `cmd`, its old name. */
  | { type: 'command'; template: string }
  | Exclude<ExecutorSpec, { type: 'command' }>;

/**
 * The executor a run uses: the caller's (a relative module path is relative to the
 * session folder, as in session.json: commands run there too), else session.json's.
 */
export function runExecutor(given: ExecutorOption | undefined, config: SessionConfig, sessionDir: string | undefined): ExecutorSpec {
  return withRoles(namedExecutor(given, config, sessionDir), config);
}

/**
 * An agent executor with session.json's `roles`, whatever named it (flags or session.json):
 * the roles are the session's, not the executor block's. A caller's own `roles` win.
 */
function withRoles(spec: ExecutorSpec, config: SessionConfig): ExecutorSpec {
  if (!isAgentKind(spec.type) || config.roles === undefined || (spec as { roles?: unknown }).roles !== undefined) return spec;
  const roles = Object.fromEntries(
    Object.entries(config.roles).map(([role, entry]) => [role, { ...(entry.agent === undefined ? {} : { agent: entry.agent }), ...agentSettingsFromConfig(entry) }]),
  );
  return { ...spec, roles } as ExecutorSpec;
}

function namedExecutor(given: ExecutorOption | undefined, config: SessionConfig, sessionDir: string | undefined): ExecutorSpec {
  if (given !== undefined) {
    const spec = executorSpec(given);
    if (spec.type === 'module' && sessionDir !== undefined && !isAbsolute(spec.path)) return { ...spec, path: resolve(sessionDir, spec.path) };
    return spec;
  }
  if (config.executor !== undefined && sessionDir !== undefined) return executorFromConfig(config.executor, sessionDir);
  throw new WaveError(
    'USAGE',
    'No executor: pass --cmd TEMPLATE, --module PATH, --executor openai|codex|claude --model NAME, or name one in session.json ("executor": {"type": "command", "cmd": "..."})',
  );
}

/** The executor as the engine runs it: a command's `cmd` (or its old name `template`) becomes its template. */
function executorSpec(executor: ExecutorOption): ExecutorSpec {
  if (executor.type !== 'command') return executor;
  const given = executor as { cmd?: unknown; template?: unknown };
  if (given.cmd !== undefined && given.template !== undefined && given.cmd !== given.template) {
    throw new WaveError('USAGE', 'Pass `executor.cmd` only: `executor.template` is its old name, and the two differ');
  }
  const template = given.cmd ?? given.template;
  if (typeof template !== 'string' || template.trim() === '') {
    throw new WaveError('USAGE', `Expected \`executor.cmd\` to be a shell command template, got \`${String(template)}\` (${typeof template})`);
  }
  return { type: 'command', template };
}

/** The command executor with its output mode; other executors return objects, so a mode other than auto is a mistake there. */
export function withOutputMode(executor: ExecutorSpec, output: OutputMode | undefined): ExecutorSpec {
  if (output === undefined) return executor;
  if (executor.type === 'command') return { ...executor, output };
  if (output !== 'auto') {
    throw new WaveError('USAGE', `\`output\` (--output ${output}) is for commands (--cmd): a ${executor.type} executor returns a result object`);
  }
  return executor;
}

/** session.json's executor as a run takes it; one missing the field it needs is INVALID_SESSION. */
export function executorFromConfig(executor: NonNullable<SessionConfig['executor']>, sessionDir: string): ExecutorSpec {
  if (executor.type === 'command' && executor.cmd) return { type: 'command', template: executor.cmd };
  if (executor.type === 'openai' && executor.model) {
    return { type: 'openai', model: executor.model, ...(executor.base_url ? { baseUrl: executor.base_url } : {}) };
  }
  if ((executor.type === 'codex' || executor.type === 'claude') && executor.model) {
    return { type: executor.type, ...agentSettingsFromConfig(executor), model: executor.model };
  }
  if (executor.type === 'module' && executor.module) {
    return { type: 'module', path: modulePathFromConfig(executor.module, sessionDir) };
  }
  throw new WaveError(
    'INVALID_SESSION',
    `session.json: executor ${executor.type} needs ${executor.type === 'command' ? '"cmd"' : executor.type === 'module' ? '"module"' : '"model"'}`,
  );
}

/** An agent's settings as session.json spells them (executor block or a role's entry), in the spec's names. */
export function agentSettingsFromConfig(given: AgentConfigFields): AgentOverride {
  return {
    ...(given.model ? { model: given.model } : {}),
    ...(given.base_url ? { baseUrl: given.base_url } : {}),
    ...(given.sandbox ? { sandbox: given.sandbox } : {}),
    ...(given.max_turns === undefined ? {} : { maxTurns: given.max_turns }),
    ...(given.allowed_tools === undefined ? {} : { allowedTools: given.allowed_tools }),
    ...(given.effort ? { effort: given.effort } : {}),
    ...(given.args === undefined ? {} : { args: given.args }),
  };
}

type AgentConfigFields = Omit<NonNullable<SessionConfig['executor']>, 'type' | 'cmd' | 'module'>;

/**
 * A module path in session.json. A relative one is relative to the session folder and
 * must stay inside it, through symlinks too. An absolute one is taken as written: it is
 * configuration, like a `cmd` (which may run anything), and `init --module` records the
 * path given on its command line that way.
 */
function modulePathFromConfig(module: string, sessionDir: string): string {
  if (isAbsolute(module)) return module;
  try {
    return sessionPathForRead(sessionDir, module);
  } catch (error) {
    throw new WaveError(
      'INVALID_SESSION',
      `session.json: executor.module: ${(error as Error).message}. ` +
        'A relative module path must stay inside the session folder: give an absolute path, or pass --module PATH',
      { cause: error },
    );
  }
}
