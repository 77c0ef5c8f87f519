export { ClaudeExecutor, type ClaudeExecutorOptions } from './executor.js';
