import { isAgentKind } from '../executors/agents/settings.js';
import type { AttemptRequest } from '../executors/messages.js';
import { RolePrompts, systemPrompt } from '../executors/openai/prompt.js';
import { renderCommand } from '../executors/template.js';

/** What an executor would be sent for one task, as `run --dry-run` shows it. */
export type RenderedInput =
  /** The shell command, as `/bin/sh -c` would get it. */
  | { kind: 'command'; text: string }
  /** The module and the task it would be called with (its row and prev_context; the rest is the run's). */
  | { kind: 'module'; text: string }
  /** A model or agent prompt: the role's template filled in, and the system prompt that goes before it. */
  | { kind: 'prompt'; text: string; system: string }
  /** The executor would refuse it (a command template where no quoting is safe, no template for the role). */
  | { kind: 'error'; text: string };

/**
 * Renders attempts as their executors do, without running them: the command as
 * CommandExecutor fills its template, the prompt as the openai executor and the agents fill
 * the role's template (before any cut to fit a context window). Templates are read once.
 */
export class InputRenderer {
  readonly #prompts = new Map<string, RolePrompts>();

  render(attempt: AttemptRequest): RenderedInput {
    const { executor, task } = attempt;
    try {
      if (executor.type === 'command') return { kind: 'command', text: renderCommand(executor.template, { ...task.row, prev_context: task.prev_context }) };
      if (executor.type === 'module') {
        return { kind: 'module', text: `${executor.path} ${JSON.stringify({ id: task.id, row: task.row, prev_context: task.prev_context })}` };
      }
      if (executor.type !== 'openai' && !isAgentKind(executor.type)) return { kind: 'error', text: `no rendering for executor ${executor.type}` };
      const pipeline = attempt.pipeline ?? 'generic';
      const context = attempt.prompt ?? { pipeline, topic: '', discoveries: '', upstream: '', wisdom: '' };
      return { kind: 'prompt', text: this.#rolePrompts(executor.promptsDir).render(task, context), system: systemPrompt(pipeline) };
    } catch (error) {
      return { kind: 'error', text: error instanceof Error ? error.message : String(error) };
    }
  }

  #rolePrompts(dir: string | undefined): RolePrompts {
    const key = dir ?? '';
    let prompts = this.#prompts.get(key);
    if (prompts === undefined) this.#prompts.set(key, (prompts = new RolePrompts(dir)));
    return prompts;
  }
}
