// The worker entry of piscina's threads when csv-wave runs from its TypeScript source (the
// tests; see workerEntry in worker-pool.ts). A thread cannot read TypeScript by itself, and
// `--import tsx` in a thread's execArgv does not help on Node 20: piscina then loads the
// entry through tsx's require hook, and a later `import()` (the openai executor's, in
// create-executor.ts) finds no .ts file. tsx's ESM loader registered here covers both.
// Never compiled into dist/: a built csv-wave loads executors/worker.js directly.
import { register } from 'tsx/esm/api';

register();
const entry = await import('../../executors/worker.ts');

export const replyText = entry.replyText;
export const replyBatch = entry.replyBatch;
export default entry.default;
