import { CommandExecutor } from './command.js';
import type { ExecutorSpec } from './messages.js';
import { ModuleExecutor } from './module.js';
import { OpenAiExecutor } from './openai/index.js';
import type { Executor } from './types.js';

export function createExecutor(spec: ExecutorSpec): Executor {
  switch (spec.type) {
    case 'command':
      // Its stdout cap comes with each request (WorkerRequest.limits).
      return new CommandExecutor({ template: spec.template, ...(spec.output === undefined ? {} : { output: spec.output }) });
    case 'module':
      return new ModuleExecutor(spec.path);
    case 'openai':
      return new OpenAiExecutor({
        model: spec.model,
        ...(spec.baseUrl === undefined ? {} : { baseUrl: spec.baseUrl }),
        ...(spec.promptsDir === undefined ? {} : { promptsDir: spec.promptsDir }),
        ...(spec.maxTokens === undefined ? {} : { maxTokens: spec.maxTokens }),
      });
  }
}
