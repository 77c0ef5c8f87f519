import { CommandExecutor } from './command.js';
import type { ExecutorSpec } from './messages.js';
import { ModuleExecutor } from './module.js';
import type { Executor } from './types.js';

export function createExecutor(spec: ExecutorSpec): Executor {
  switch (spec.type) {
    case 'command':
      return new CommandExecutor({
        template: spec.template,
        ...(spec.maxStdoutBytes === undefined ? {} : { maxStdoutBytes: spec.maxStdoutBytes }),
      });
    case 'module':
      return new ModuleExecutor(spec.path);
  }
}
