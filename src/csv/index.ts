export * from './columns.js';
export * from './tasks-table.js';
export * from './parse-tasks.js';
export * from './serialize-tasks.js';
export { decodeUtf8Text, textProblem } from './utf8-text.js';
export { guardCell, unguardCell } from '../text/formula-guard.js';
export { serializeWaveFile } from './wave-file.js';
