import { cleanText } from '../../text/clean-text.js';
import { scrubSecrets } from '../../text/secret-scrubber.js';
import type { BackendContext } from '../backend-context.js';
import type { ExecutionBackend } from '../execution-backend.js';
import { BatchBackend, type BatchBackendOptions } from './batch-backend.js';
import { endOf, type OpenBatch } from './batch-record.js';

/** The settings of a `--batch` run's backend: the model's, and how batches are repaired, cancelled and polled. */
export type BatchSettings = Omit<BatchBackendOptions, 'open' | 'record' | 'progress' | 'warn'>;

/**
 * The Batch API backend of a `--batch` run, wired to the run's journal and events. Loaded
 * only for such a run: the openai client stays out of every other run's start.
 */
export function openBatchBackend(settings: BatchSettings, context: BackendContext): ExecutionBackend {
  const open: OpenBatch[] = [];
  for (const batch of context.left.batches) {
    // An open batch that holds none of the run's tasks is ended: nothing will wait on it.
    if (batch.requests.some((request) => context.pending.has(request.task))) open.push(batch);
    else context.record(endOf(batch));
  }
  return new BatchBackend({
    ...settings,
    open,
    // A launch and a new batch are flushed at once: a batch the journal does not name would
    // be sent again after a crash. Its end goes with the group commit of the results it gave.
    record: (entry) => {
      context.record(entry);
      if (entry.type === 'batch-launch' || entry.type === 'batch') context.flush();
    },
    progress: (progress) => context.batchProgress(progress),
    // A server's error message may echo the key, or hold escapes meant for a terminal.
    warn: (message) => context.warn(scrubSecrets(cleanText(message))),
  });
}
