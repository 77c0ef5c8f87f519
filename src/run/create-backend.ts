import type { ExecutionBackend } from '../backend/execution-backend.js';
import { cleanText } from '../text/clean-text.js';
import { scrubSecrets } from '../text/secret-scrubber.js';
import { endOf, type OpenBatch } from '../backend/openai-batch/batch-record.js';
import type { RunEmitter } from '../events/events.js';
import type { Journal } from '../session/journal.js';
import type { NormalizedRunOptions } from '../options/options.js';

export interface BatchBackendWiring {
  /** The batches an earlier run left open, created or launched (its journal's). */
  open: readonly OpenBatch[];
  /** The tasks this run runs: an open batch that holds none of them is ended (nothing will wait on it). */
  pending: ReadonlySet<string>;
  journal: Journal;
  events: RunEmitter;
  warn: (message: string) => void;
}

/**
 * The Batch API backend of a `--batch` run, wired to the run's journal and events. Loaded
 * only for such a run: the openai client stays out of every other run's start.
 */
export async function createBackend(settings: NormalizedRunOptions, wiring: BatchBackendWiring): Promise<ExecutionBackend> {
  const { executor } = settings;
  if (executor.type !== 'openai') throw new Error('Batch mode needs the openai executor (checked by normalizeRunOptions)');
  const { BatchBackend } = await import('../backend/openai-batch/batch-backend.js');
  const { journal, events } = wiring;
  const open: OpenBatch[] = [];
  for (const batch of wiring.open) {
    if (batch.requests.some((request) => wiring.pending.has(request.task))) open.push(batch);
    else journal.append(endOf(batch));
  }
  return new BatchBackend({
    model: executor.model,
    baseUrl: executor.baseUrl,
    promptsDir: executor.promptsDir,
    maxTokens: executor.maxTokens,
    repair: settings.batchRepair,
    cancelOnStop: settings.cancelBatch,
    maxPollMs: settings.batchPollSeconds * 1000,
    open,
    // A launch and a new batch are flushed at once: a batch the journal does not name would
    // be sent again after a crash. Its end goes with the group commit of the results it gave.
    record: (entry) => {
      journal.append(entry);
      if (entry.type === 'batch-launch' || entry.type === 'batch') journal.flush();
    },
    progress: (progress) => events.emit('batch:progress', progress),
    // A server's error message may echo the key, or hold escapes meant for a terminal.
    warn: (message) => wiring.warn(scrubSecrets(cleanText(message))),
  });
}
