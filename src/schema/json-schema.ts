import { z } from 'zod';
import { attemptLineSchema } from './attempt.js';
import { discoveryLineSchema } from './discovery.js';
import { discoveryFileSchema } from './discovery-file.js';
import { taskResultSchema } from './result.js';
import { taskRowSchema } from './row.js';
import { sessionConfigSchema } from './session.js';
import { taskInputSchema } from './task-input.js';

/** The JSON Schema documents checked in under schemas/, by file name. */
export function jsonSchemas(): Record<string, unknown> {
  const exported = {
    'task-row.schema.json': taskRowSchema,
    'task-result.schema.json': taskResultSchema,
    'discovery-line.schema.json': discoveryLineSchema,
    'discovery-file.schema.json': discoveryFileSchema,
    'session.schema.json': sessionConfigSchema,
    'task-input.schema.json': taskInputSchema,
    'attempt-line.schema.json': attemptLineSchema,
  };
  const documents: Record<string, unknown> = {};
  for (const [file, schema] of Object.entries(exported)) {
    documents[file] = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  }
  return documents;
}

/** The file text for one document: stable, so that a diff means a real change. */
export function jsonSchemaText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
