export * from './row.js';
export * from './result.js';
export * from './discovery.js';
export * from './discovery-file.js';
export * from './session.js';
export * from './task-input.js';
export { jsonSchemas, jsonSchemaText } from './json-schema.js';
export * from './attempt.js';
export * from './artifact-manifest.js';
