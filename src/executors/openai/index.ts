export { OpenAiExecutor, type OpenAiExecutorOptions, type OpenAiOutcome } from './executor.js';
export { parseRetryAfter } from './errors.js';
export { renderPrompt } from './prompt.js';
