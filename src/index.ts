export { main } from './cli/main.js';
export { WaveError, type WaveErrorCode, type Violation } from './errors.js';
export * from './csv/index.js';
export { emptyRow, kPriorityColumn, kTaskColumns, type KnownColumn, type SeedColumn, type TaskRow } from './core/task.js';
export { splitList } from './core/id-list.js';
export * from './graph/index.js';
export * from './schema/index.js';
export { loadSession, type LoadedSession } from './session/load.js';
export { openSession, type Session } from './session/session.js';
export { validateTasks, type TaskPlan, type ValidationReport } from './commands/validate.js';
export { runSession, type RunSessionOptions } from './run/run-session.js';
export {
  RunEmitter,
  type RunEvents,
  type RunSummary,
  type StopReason,
  type TaskStartEvent,
  type TaskRetryEvent,
  type TaskDoneEvent,
  type WaveDoneEvent,
} from './events/events.js';
export {
  kDefaultGraceSeconds,
  normalizeRunOptions,
  parseHalt,
  type ExecutorOption,
  type HaltPolicy,
  type RunOptions,
} from './options/options.js';
export type { ExecutorSpec } from './executors/messages.js';
export type { TaskInput, ErrorClass } from './executors/types.js';
export type { ModuleTaskContext, TaskModule } from './executors/module.js';
export type { AnswerSource, InteractiveHandler, SessionChanges } from './interactive/types.js';
