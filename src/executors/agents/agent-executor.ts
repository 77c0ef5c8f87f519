import type { AttemptOutcome, Executor, ExecutorRunOptions, TaskInput } from '../types.js';
import { agentRowCells, agentSettingsFor, baseAgentSettings, type AgentKind, type AgentRunner, type AgentSettings, type AgentSpec } from './settings.js';

/** What makes an agent CLI's runner, from the run's spec (its prompts folder). Imported when a task first needs it. */
type RunnerLoader = (spec: AgentSpec) => Promise<AgentRunner>;

/**
 * The agent CLIs csv-wave runs, one line each. An agent without a line here fails the tasks
 * that ask for it (agentNotBuilt); check-executor's agent checks are keyed the same way.
 */
const kRunners: Partial<Record<AgentKind, RunnerLoader>> = {
  codex: async (spec) => new (await import('./codex/index.js')).CodexExecutor(spec.promptsDir === undefined ? {} : { promptsDir: spec.promptsDir }),
  claude: async (spec) => new (await import('./claude/index.js')).ClaudeExecutor(spec.promptsDir === undefined ? {} : { promptsDir: spec.promptsDir }),
};

/** The agents this build of csv-wave runs. */
export function builtAgents(): AgentKind[] {
  return Object.keys(kRunners) as AgentKind[];
}

/**
 * The executor of `--executor codex|claude` (issue 24): per task, the settings of its role and
 * row (agentSettingsFor: the run's settings, then session.json's `roles` entry, then the row's
 * `agent`, `model` and `effort` cells), then the runner of the agent they name, which runs
 * the attempt with them. So one run may send some rows to codex and others to claude, each
 * with its own model and effort. The runners are loaded once, on first use.
 */
export class AgentExecutor implements Executor {
  readonly #spec: AgentSpec;
  readonly #base: AgentSettings;
  readonly #runners = new Map<AgentKind, Promise<AgentRunner>>();

  constructor(spec: AgentSpec) {
    if (typeof spec.model !== 'string' || spec.model.trim() === '') {
      throw new TypeError(`Expected \`model\` to be a non-empty string, got \`${String(spec.model)}\` (${typeof spec.model})`);
    }
    this.#spec = spec;
    this.#base = baseAgentSettings(spec);
  }

  /** The settings a task runs with. */
  settingsFor(task: Pick<TaskInput, 'row'>): AgentSettings {
    return agentSettingsFor(this.#base, this.#spec.roles, agentRowCells(task.row));
  }

  async run(task: TaskInput, options: ExecutorRunOptions): Promise<AttemptOutcome> {
    const settings = this.settingsFor(task);
    const runner = this.#runner(settings.agent);
    if (runner === undefined) return agentNotBuilt(settings.agent);
    return (await runner).run(task, options, settings);
  }

  #runner(agent: AgentKind): Promise<AgentRunner> | undefined {
    let runner = this.#runners.get(agent);
    if (runner === undefined) {
      const load = kRunners[agent];
      if (load === undefined) return undefined;
      runner = load(this.#spec);
      this.#runners.set(agent, runner);
    }
    return runner;
  }
}

/** A task that asks for an agent this build does not run (its `agent` cell, or its role's entry). */
function agentNotBuilt(agent: AgentKind): AttemptOutcome {
  return {
    kind: 'error',
    errorClass: 'task-failure',
    error: `This task asks for agent ${agent} (its agent cell, or its role's "agent" in session.json), which this csv-wave does not run yet; use ${builtAgents().join(' or ')}`,
  };
}
