export { CodexExecutor, type CodexExecutorOptions } from './executor.js';
