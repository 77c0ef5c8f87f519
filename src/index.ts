// The package's public API, named one by one: what is not here is internal, and a refactor
// of csv/, graph/ or the engine breaks no user. test/cli/library-api.test.ts pins the list.
import type { RunSummary } from './events/events.js';
import { htmlReport } from './report/run-reporter.js';
import { runSession as runEngine, type RunSessionOptions as EngineOptions } from './run/run-session.js';

export { main } from './cli/main.js';
export { WaveError, type WaveErrorCode, type Violation } from './errors.js';
export {
  RunEmitter,
  type AttemptDetail,
  type BatchProgressEvent,
  type RunEvents,
  type RunSummary,
  type StopReason,
  type TaskDoneEvent,
  type TaskRetryEvent,
  type TaskInjectedEvent,
  type TaskStartEvent,
  type TasksChangedEvent,
  type TasksEditedEvent,
  type WaveDoneEvent,
} from './events/events.js';
export type { ExecutorOption, HaltPolicy, RunOptions } from './options/options.js';
export type { BackendChoice } from './backend/backend-choice.js';
export type { SecretOptions } from './backend/bullmq/trust/secret-source.js';
export type { ExecutorSpec } from './executors/messages.js';
export type { ErrorClass, TokenUsage } from './executors/types.js';
export type { ModuleTaskContext, TaskModule } from './executors/module.js';
export type { AnswerSource, InteractiveHandler, SessionChanges } from './interactive/types.js';
export type { TaskRow } from './core/task.js';
// The zod schemas of the session folder's formats (their JSON Schema documents are in schemas/).
export { taskRowSchema, type TaskRowInput } from './schema/row.js';
export { taskResultSchema, type TaskResult, type TaskResultInput } from './schema/result.js';
export { taskInputSchema, type TaskInput } from './schema/task-input.js';
export { sessionConfigSchema, type PipelineName, type SessionConfig } from './schema/session.js';
export { discoveryLineSchema, type DiscoveryLine } from './schema/discovery.js';
export { discoveryFileSchema, type DiscoveryFile } from './schema/discovery-file.js';
export { attemptLineSchema, type AttemptLine } from './schema/attempt.js';
export {
  artifactManifestSchema,
  artifactRegistrySchema,
  type ArtifactManifest,
  type ArtifactValidation,
  type RegistryEntry,
} from './schema/artifact-manifest.js';

/** runSession's options: RunOptions and what only a library caller passes (events, signals, answers). */
export type RunSessionOptions = Omit<EngineOptions, 'report'>;

/**
 * Runs every pending task of a session and resolves with a summary (run/run-session.ts),
 * keeping report.html up to date as the CLI does: the engine itself builds no report.
 */
export function runSession(path: string, options: RunSessionOptions = {}): Promise<RunSummary> {
  return runEngine(path, { ...options, report: htmlReport });
}
