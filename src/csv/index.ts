export * from './columns.js';
export * from './tasks-file.js';
export { guardCell, unguardCell } from './formula-guard.js';
export { writeFileAtomic } from './atomic-write.js';
export { serializeWaveFile } from './wave-file.js';
