export { buildDag, TaskDag, type GraphTask } from './dag.js';
export { computeWaves, type WaveAssignment } from './waves.js';
export { downstream } from './cascade.js';
export { stronglyConnected } from './strongly-connected.js';
export { buildPrevContext, kNoPreviousContext, kDefaultPrevContextCap, type ContextSource } from './prev-context.js';
