import { CommandExecutor } from './command.js';
import type { ExecutorSpec } from './messages.js';
import { ModuleExecutor } from './module.js';
import type { Executor } from './types.js';

/**
 * The executor a spec names. The openai and agent ones are imported only when a spec names them: the
 * launcher process that runs commands loads this file, and it forks every command, so it
 * stays as small as it can (the openai client alone took about 0.15 s to load there).
 */
export async function createExecutor(spec: ExecutorSpec): Promise<Executor> {
  switch (spec.type) {
    case 'command':
      // Its stdout cap comes with each request (WorkerRequest.limits).
      return new CommandExecutor({ template: spec.template, ...(spec.output === undefined ? {} : { output: spec.output }) });
    case 'module':
      return new ModuleExecutor(spec.path);
    case 'openai': {
      const { OpenAiExecutor } = await import('./openai/index.js');
      return new OpenAiExecutor({
        model: spec.model,
        ...(spec.baseUrl === undefined ? {} : { baseUrl: spec.baseUrl }),
        ...(spec.promptsDir === undefined ? {} : { promptsDir: spec.promptsDir }),
        ...(spec.maxTokens === undefined ? {} : { maxTokens: spec.maxTokens }),
        ...(spec.contextWindow === undefined ? {} : { contextWindow: spec.contextWindow }),
      });
    }
    case 'codex':
    case 'claude': {
      const { AgentExecutor } = await import('./agents/agent-executor.js');
      return new AgentExecutor(spec);
    }
  }
}
