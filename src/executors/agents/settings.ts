import { kAgentKinds, type AgentKind, type CodexSandbox } from '../../schema/session.js';
import type { AttemptOutcome, ExecutorRunOptions, TaskInput } from '../types.js';

export { kAgentKinds, type AgentKind } from '../../schema/session.js';

/** Whether a text (a row's `agent` cell, an executor's type) names an agent CLI csv-wave runs. */
export function isAgentKind(value: string): value is AgentKind {
  return (kAgentKinds as readonly string[]).includes(value);
}

/**
 * How one agent attempt is set up. The run's settings (flags, session.json's executor block)
 * are the base; a role's entry in session.json's `roles` wins over them, and a row's
 * `agent`, `model` and `effort` cells win over both (agentSettingsFor).
 */
export interface AgentSettings {
  agent: AgentKind;
  model: string;
  /** codex: a Responses-API endpoint; claude: a Messages-API endpoint (ANTHROPIC_BASE_URL). */
  baseUrl?: string;
  /** codex `-s`. @default 'read-only' */
  sandbox?: CodexSandbox;
  /** claude `--max-turns`. */
  maxTurns?: number;
  /** claude `--allowedTools`. @default read-only tools */
  allowedTools?: string[];
  /** Reasoning effort: codex `-c model_reasoning_effort=…`, claude `--effort`. */
  effort?: string;
  /**
   * More arguments for the CLI, after csv-wave's own and before the prompt. One that repeats
   * a flag csv-wave passes is refused before any task: the CLI would refuse it on every task.
   */
  args?: string[];
}

/** A role's entry in session.json's `roles`: any setting but the agent's kind may differ. */
export type AgentOverride = Partial<AgentSettings>;

/**
 * An agent executor as a run names it: the run's agent and settings, the roles' overrides,
 * and where the role prompts are. Plain JSON: it goes to workers inside each request.
 */
export type AgentSpec = { type: AgentKind; promptsDir?: string; roles?: Record<string, AgentOverride> } & Omit<AgentSettings, 'agent'>;

/** The run's own settings of an agent spec, before any role or row. */
export function baseAgentSettings(spec: AgentSpec): AgentSettings {
  const { type, promptsDir: _prompts, roles: _roles, ...settings } = spec;
  return { agent: type, ...settings };
}

/** The row cells that choose an agent's settings. */
export interface AgentRowCells {
  role?: string;
  agent?: string;
  model?: string;
  effort?: string;
}

/** The columns of tasks.csv that choose a row's agent settings (optional, extra columns). */
export const kAgentColumns = ['agent', 'model', 'effort'] as const;

/** A row's cells that choose its agent settings, from the row as a task gets it (`task.row`: every column by name). */
export function agentRowCells(row: Readonly<Record<string, string | undefined>>): AgentRowCells {
  const cells: AgentRowCells = {};
  for (const name of ['role', ...kAgentColumns] as const) {
    const value = row[name];
    if (value !== undefined) cells[name] = value;
  }
  return cells;
}

/**
 * The settings of one task: the base, then its role's override, then its row's non-empty
 * cells. A row that names another agent than the base keeps the other settings: the model
 * and effort it names (if any) are the ones that matter to that agent.
 */
export function agentSettingsFor(base: AgentSettings, roles: Readonly<Record<string, AgentOverride>> | undefined, row: AgentRowCells): AgentSettings {
  const role = row.role === undefined ? undefined : roles?.[row.role];
  const cell = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());
  const agent = cell(row.agent) ?? role?.agent ?? base.agent;
  const model = cell(row.model) ?? role?.model ?? base.model;
  const effort = cell(row.effort) ?? role?.effort ?? base.effort;
  return {
    ...base,
    ...withoutUndefined(role ?? {}),
    agent: agent as AgentKind,
    model,
    ...(effort === undefined ? {} : { effort }),
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** One agent CLI (codex/, claude/): runs an attempt with the settings chosen for its task. */
export interface AgentRunner {
  run(task: TaskInput, options: ExecutorRunOptions, settings: AgentSettings): Promise<AttemptOutcome>;
}
