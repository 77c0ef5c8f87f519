import { isAbsolute, resolve } from 'node:path';
import { WaveError } from '../errors.js';
import type { ExecutorSpec } from '../executors/messages.js';
import { sessionPathForRead } from '../knowledge/session-path.js';
import type { SessionConfig } from '../schema/session.js';
import type { RunOptions } from './options.js';

/** Command-line options win; session.json fills what they leave out. */
export function withSessionDefaults(options: RunOptions, config: SessionConfig, sessionDir: string): RunOptions {
  const merged: RunOptions = { ...options };
  // A relative module path is relative to the session folder, given as an option (--module)
  // or in session.json alike: commands run there too.
  if (merged.executor?.type === 'module' && !isAbsolute(merged.executor.path)) {
    merged.executor = { ...merged.executor, path: resolve(sessionDir, merged.executor.path) };
  }
  if (!merged.executor && config.executor) merged.executor = executorFromConfig(config.executor, sessionDir);
  if (merged.concurrency === undefined && config.concurrency !== undefined) merged.concurrency = config.concurrency;
  if (merged.timeoutSeconds === undefined && config.timeout !== undefined) merged.timeoutSeconds = config.timeout;
  if (merged.retries === undefined && config.retries !== undefined) merged.retries = config.retries;
  if (merged.schedule === undefined && config.schedule !== undefined) merged.schedule = config.schedule;
  if (merged.output === undefined && config.output !== undefined) merged.output = config.output;
  if (merged.prevContextCap === undefined && config.prev_context_cap !== undefined) {
    merged.prevContextCap = config.prev_context_cap;
  }
  if (merged.maxStdoutBytes === undefined && config.max_stdout_bytes !== undefined) merged.maxStdoutBytes = config.max_stdout_bytes;
  if (merged.maxArtifactsPerTask === undefined && config.max_artifacts_per_task !== undefined) {
    merged.maxArtifactsPerTask = config.max_artifacts_per_task;
  }
  if (merged.maxArtifactBytes === undefined && config.max_artifact_bytes !== undefined) merged.maxArtifactBytes = config.max_artifact_bytes;
  // Without either, the pipeline decides, once it is settled from the roles.
  if (merged.discoveryFiles === undefined && config.discovery_files !== undefined) merged.discoveryFiles = config.discovery_files;
  if (merged.maxDiscoveryLineBytes === undefined && config.max_discovery_line_bytes !== undefined) {
    merged.maxDiscoveryLineBytes = config.max_discovery_line_bytes;
  }
  if (merged.pricing === undefined && config.pricing !== undefined) merged.pricing = config.pricing;
  if (merged.batch === undefined && config.batch !== undefined) merged.batch = config.batch;
  if (merged.batchRepair === undefined && config.batch_repair !== undefined) merged.batchRepair = config.batch_repair;
  return merged;
}

/** session.json's executor as a run takes it; one missing the field it needs is INVALID_SESSION. */
export function executorFromConfig(executor: NonNullable<SessionConfig['executor']>, sessionDir: string): ExecutorSpec {
  if (executor.type === 'command' && executor.cmd) return { type: 'command', template: executor.cmd };
  if (executor.type === 'openai' && executor.model) {
    return { type: 'openai', model: executor.model, ...(executor.base_url ? { baseUrl: executor.base_url } : {}) };
  }
  if (executor.type === 'module' && executor.module) {
    return { type: 'module', path: modulePathFromConfig(executor.module, sessionDir) };
  }
  throw new WaveError(
    'INVALID_SESSION',
    `session.json: executor ${executor.type} needs ${executor.type === 'command' ? '"cmd"' : executor.type === 'module' ? '"module"' : '"model"'}`,
  );
}

/**
 * A module path in session.json. A relative one is relative to the session folder and
 * must stay inside it, through symlinks too. An absolute one is taken as written: it is
 * configuration, like a `cmd` (which may run anything), and `init --module` records the
 * path given on its command line that way.
 */
function modulePathFromConfig(module: string, sessionDir: string): string {
  if (isAbsolute(module)) return module;
  try {
    return sessionPathForRead(sessionDir, module);
  } catch (error) {
    throw new WaveError(
      'INVALID_SESSION',
      `session.json: executor.module: ${(error as Error).message}. ` +
        'A relative module path must stay inside the session folder: give an absolute path, or pass --module PATH',
      { cause: error },
    );
  }
}
