export { CodexExecutor, type CodexExecutorOptions } from './executor.js';
export { codexArgsProblem } from './args.js';
