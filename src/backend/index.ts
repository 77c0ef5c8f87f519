import type { BackendContext } from './backend-context.js';
import type { BackendPlan } from './backend-choice.js';
import type { ExecutionBackend } from './execution-backend.js';
import { LocalBackend } from './local/local-backend.js';

export type { BackendContext } from './backend-context.js';
export { chooseBackend, type BackendAsk, type BackendChoice, type BackendPlan } from './backend-choice.js';
export type { AttemptJobs, ExecutionBackend } from './execution-backend.js';

/**
 * What opening the backend would refuse, asked before a run writes its session folder
 * (a bullmq session id held by another run, Redis away), so that a refused run leaves the
 * folder as it was. Opening asks again: this only answers early.
 */
export async function checkBackendFree(plan: BackendPlan, sessionDir: string, sessionId: () => string): Promise<void> {
  if (plan.type === 'bullmq') await (await import('./bullmq/open-coordinator.js')).checkCoordinatorFree(plan, sessionDir, sessionId());
}

/**
 * Opens the backend a run chose (chooseBackend): this machine's threads and processes, BullMQ
 * jobs on Redis, or OpenAI's Batch API. BullMQ, ioredis and the openai client are loaded
 * only by a run that uses them: they are most of a start-up.
 */
export async function openBackend(plan: BackendPlan, context: BackendContext): Promise<ExecutionBackend> {
  if (plan.type === 'batch') return (await import('./openai-batch/open-batch.js')).openBatchBackend(plan.batch, context);
  const backend =
    plan.type === 'bullmq'
      ? await (await import('./bullmq/open-coordinator.js')).openCoordinator(plan, context)
      : new LocalBackend({ sessionDir: context.sessionDir, ...plan.local });
  // Only the batch backend answers from an earlier run's batches: they are left for a later --batch run.
  if (context.left.batches.length > 0) {
    context.warn(
      `${context.left.batches.length} batch(es) of an earlier --batch run are still open; this run sends its tasks one by one. ` +
        'Stop it and resume with --batch to take their answers instead',
    );
  }
  return backend;
}
