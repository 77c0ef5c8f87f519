import type { TaskRow } from '../core/task.js';
import { showCell } from '../csv/columns.js';
import { WaveError, formatViolations, type Violation } from '../errors.js';
import { codexArgsProblem } from '../executors/agents/codex/args.js';
import {
  agentSettingsFor,
  baseAgentSettings,
  isAgentKind,
  kAgentKinds,
  type AgentKind,
  type AgentOverride,
  type AgentSpec,
} from '../executors/agents/settings.js';
import type { ExecutorSpec } from '../executors/messages.js';
import { pipelineRoles, type SettingsFile } from '../pipelines/index.js';
import type { PipelineName } from '../schema/session.js';
import { lineOfPath } from '../text/json-error-position.js';
import { nearestName } from '../text/nearest-name.js';

/** The files the agent settings come from, as messages show them. */
export interface AgentSettingsFiles {
  /** tasks.csv's path as messages show it. */
  tasks: string;
  /** session.json as read; absent without one. */
  session?: SettingsFile;
}

/**
 * Checks once, before any task, the agent settings a session asks for, and returns the
 * agents its tasks will run (for their CLI checks, run/check-executor.ts). What would fail
 * tasks one by one, or run them otherwise than asked, is refused here with its file and line:
 *
 * - a row's `agent` cell that is not codex or claude, or one under a run whose executor is
 *   not an agent (a command run cannot honour it);
 * - a task that switches agent (its cell or its role's entry) with no model for that agent:
 *   the run's model is the other CLI's;
 * - a `roles` entry naming a role no task has and the pipeline does not add (a typo would
 *   silently leave its tasks on the run's settings);
 * - codex `args` that repeat a flag csv-wave passes (codex refuses it on every task).
 *
 * session.json's own shape (unknown keys in a role's entry, a bad sandbox) was checked at
 * its line when it was read (session.ts).
 */
export function checkAgentSettings(spec: ExecutorSpec, rows: readonly TaskRow[], files: AgentSettingsFiles, pipeline: PipelineName): AgentKind[] {
  const { session, tasks, agents } = agentSettingsProblems(spec, rows, files, pipeline);
  throwViolations(session, tasks, files);
  return agents;
}

/**
 * checkAgentSettings's findings without throwing: session.json's problems and tasks.csv's,
 * each at its line in its own file, and the agents the tasks will run. A person's save of
 * tasks.csv during a run is checked with it (session/edits/).
 */
export function agentSettingsProblems(
  spec: ExecutorSpec,
  rows: readonly TaskRow[],
  files: AgentSettingsFiles,
  pipeline: PipelineName,
): { session: Violation[]; tasks: Violation[]; agents: AgentKind[] } {
  if (!isAgentKind(spec.type)) {
    const violations = rows.flatMap((row) => {
      const agent = cell(row.extra['agent']);
      if (agent === undefined) return [];
      return [
        {
          line: row.line,
          message:
            `agent ${showCell(agent)}: the agent column chooses the agent CLI of a row, and this run's executor is ${spec.type}; ` +
            'run it with --executor codex --model NAME (or an agent executor in session.json), or empty the agent column',
        },
      ];
    });
    return { session: [], tasks: violations, agents: [] };
  }
  const agentSpec = spec as AgentSpec;
  const base = baseAgentSettings(agentSpec);
  const roles = agentSpec.roles ?? {};
  const used = new Set<AgentKind>([base.agent]);
  const session: Violation[] = [];
  const tasks: Violation[] = [];
  const at = (path: string[]) => (files.session === undefined ? 1 : lineOfPath(files.session.text, path));

  const argsProblem = (agent: AgentKind, args: readonly string[] | undefined) => (agent === 'codex' && args !== undefined ? codexArgsProblem(args) : undefined);
  const baseArgs = argsProblem(base.agent, base.args);
  if (baseArgs !== undefined) session.push({ line: at(['executor', 'args']), message: `executor.args: ${baseArgs}` });

  const rowRoles = new Set(rows.map((row) => row.role));
  const pipelineKnows = pipelineRoles(pipeline);
  for (const [role, entry] of Object.entries(roles)) {
    const where = `roles.${showCell(role)}`;
    if (!rowRoles.has(role) && !(pipelineKnows?.has(role) ?? false)) {
      const near = nearestName(role, [...rowRoles].filter((name) => name !== ''));
      const hint = near === undefined ? `the tasks' roles: ${[...rowRoles].filter((name) => name !== '').join(', ')}` : `did you mean ${near}?`;
      session.push({ line: at(['roles', role]), message: `${where}: no task has the role ${showCell(role)} (${hint})` });
      continue;
    }
    const agent = entry.agent ?? base.agent;
    used.add(agent);
    if (agent !== base.agent && entry.model === undefined) {
      session.push({ line: at(['roles', role, 'agent']), message: `${where}: agent ${agent} needs its own "model" here: the run's model, ${base.model}, is ${base.agent}'s` });
    }
    const problem = argsProblem(agent, entry.args ?? base.args);
    if (problem !== undefined && entry.args !== undefined) session.push({ line: at(['roles', role, 'args']), message: `${where}.args: ${problem}` });
  }

  for (const row of rows) {
    const agent = cell(row.extra['agent']);
    if (agent !== undefined && !isAgentKind(agent)) {
      tasks.push({ line: row.line, message: `Invalid agent: ${showCell(agent)} (${kAgentKinds.join(' or ')}: the agent CLI that runs the row)` });
      continue;
    }
    const role: AgentOverride | undefined = roles[row.role];
    const settings = agentSettingsFor(base, roles, { role: row.role, ...cellsOf(row) });
    used.add(settings.agent);
    // A role that switches agent was judged above; a row's own switch is judged here.
    const switchedByRow = agent !== undefined && agent !== (role?.agent ?? base.agent);
    if (switchedByRow && cell(row.extra['model']) === undefined && role?.model === undefined) {
      tasks.push({
        line: row.line,
        message: `agent ${agent}: this row needs a model for ${agent} (a model cell, or "model" in roles.${showCell(row.role)} of session.json): the run's model, ${base.model}, is ${base.agent}'s`,
      });
    }
  }
  return { session, tasks, agents: [...used] };
}

/** A row's agent cells, present ones only. */
function cellsOf(row: TaskRow): { agent?: string; model?: string; effort?: string } {
  const cells: { agent?: string; model?: string; effort?: string } = {};
  for (const name of ['agent', 'model', 'effort'] as const) {
    const value = row.extra[name];
    if (value !== undefined) cells[name] = value;
  }
  return cells;
}

function cell(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** Refuses the run with every problem: session.json's (INVALID_SESSION) and tasks.csv's (INVALID_TASKS), each at its line. */
function throwViolations(session: Violation[], tasks: Violation[], files: AgentSettingsFiles): void {
  session.sort((a, b) => a.line - b.line);
  tasks.sort((a, b) => a.line - b.line);
  const shown = files.session?.shown ?? 'session.json';
  if (session.length > 0 && tasks.length > 0) {
    // Two files: the message holds both, each line named by its own file.
    throw new WaveError('INVALID_TASKS', `${formatViolations(shown, session)}\n${formatViolations(files.tasks, tasks)}`);
  }
  if (session.length > 0) throw new WaveError('INVALID_SESSION', formatViolations(shown, session), { path: shown, violations: session });
  if (tasks.length > 0) throw new WaveError('INVALID_TASKS', `${tasks.length} problem(s) in ${files.tasks}`, { path: files.tasks, violations: tasks });
}
