export { main } from './cli/main.js';
export { WaveError, type WaveErrorCode, type Violation } from './errors.js';
export * from './csv/index.js';
export * from './graph/index.js';
export * from './schema/index.js';
export { loadSession, type LoadedSession } from './engine/load.js';
export { openSession, type Session } from './engine/session.js';
export { validateTasks, type TaskPlan, type ValidationReport } from './engine/validate.js';
