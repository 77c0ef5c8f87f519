import type { BackendAsk, BackendChoice } from '../backend/index.js';
import type { SecretOptions } from '../backend/bullmq/trust/secret-source.js';
import type { BatchSettings } from '../backend/openai-batch/open-batch.js';
import type { NormalizedRunOptions } from '../options/options.js';

/** The options of a run that are its backends' (RunSessionOptions). */
export interface BackendOptions {
  backend?: BackendChoice | undefined;
  redisTimeoutSeconds?: number | undefined;
  bullmqSecret?: SecretOptions | undefined;
}

/** What a run asks of its backend (chooseBackend), from its options and settled settings. */
export function backendAsk(options: BackendOptions, settings: NormalizedRunOptions): BackendAsk {
  return {
    backend: options.backend,
    redisTimeoutSeconds: options.redisTimeoutSeconds,
    bullmqSecret: options.bullmqSecret,
    batch: settings.batch ? batchSettings(settings) : undefined,
    local: {
      threads: settings.threads,
      tasksPerThread: Math.ceil(settings.concurrency / settings.threads),
      workerMemoryMb: settings.workerMemoryMb,
      // One limit per run is one per endpoint: a run talks to one model server.
      endpointConcurrency: settings.executor.type === 'openai' ? settings.endpointConcurrency : undefined,
    },
  };
}

function batchSettings(settings: NormalizedRunOptions): BatchSettings {
  const { executor } = settings;
  if (executor.type !== 'openai') throw new Error('Batch mode needs the openai executor (checked by normalizeRunOptions)');
  return {
    model: executor.model,
    baseUrl: executor.baseUrl,
    promptsDir: executor.promptsDir,
    maxTokens: executor.maxTokens,
    repair: settings.batchRepair,
    cancelOnStop: settings.cancelBatch,
    maxPollMs: settings.batchPollSeconds * 1000,
  };
}
