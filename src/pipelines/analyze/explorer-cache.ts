import { isFolderWriteFailure } from '../../files/write-all.js';
import type { WorkerReply, WorkerRequest } from '../../executors/messages.js';
import { angleKey, ExplorationCache } from '../../knowledge/exploration-cache.js';
import type { AroundAttempt, AttemptHookContext } from '../pipeline.js';

/**
 * The exploration cache of seed 000, around each attempt of a run: an `explorer` whose
 * angle was explored before in the session reuses that result — also when the first
 * exploration of the angle is still running, which it then waits for. The hook runs in the
 * engine's main thread, the cache's only writer.
 */
export function reuseExplorations(context: AttemptHookContext): AroundAttempt {
  const { warn, finish } = context;
  const explorations = new ExplorationCache(context.files);
  /** The running first exploration of each angle key, settled or not. */
  const exploring = new Map<string, Promise<unknown>>();

  const reuse = (request: WorkerRequest): WorkerReply | undefined => {
    const cached = explorations.lookup(request.task.row.angle ?? '');
    // A task run again (a rerun) explores anew rather than reading back its own result.
    if (!cached || cached.createdBy === request.task.id) return undefined;
    warn(`${request.task.id} reused the exploration of ${cached.createdBy} (angle ${request.task.row.angle})`);
    return finish(request, { findings: cached.findings });
  };

  // Not async itself: a task that is no explorer gets the attempt's own promise, not two
  // more wrapped around it (100,000 attempts may wait at once).
  return (request, run) => {
    const { role, angle } = request.task.row;
    const key = role === 'explorer' && angle ? angleKey(angle) : '';
    return key === '' ? run(request) : explore(request, run, key, angle!);
  };

  async function explore(request: WorkerRequest, run: (request: WorkerRequest) => Promise<WorkerReply>, key: string, angle: string): Promise<WorkerReply> {
    const earlier = exploring.get(key);
    if (earlier) await earlier;
    const reused = reuse(request);
    if (reused) return reused;
    const explored = run(request).then((reply): WorkerReply => {
      if (reply.kind !== 'finished' || reply.status !== 'completed') return reply;
      try {
        explorations.store(angle, request.task.id, reply.findings);
      } catch (error) {
        // A cache the session folder cannot take (a full disk) stops the run like any write
        // that fails; the task is not to blame and stays pending (error class io).
        if (!isFolderWriteFailure(error)) throw error;
        return { kind: 'error', errorClass: 'io', error: `Cannot cache the exploration: ${(error as Error).message}` };
      }
      return reply;
    });
    const settled = explored.catch(() => undefined);
    exploring.set(key, settled);
    void settled.then(() => {
      if (exploring.get(key) === settled) exploring.delete(key);
    });
    return explored;
  }
}
