/** Writes the JSON Schema files under schemas/ from the zod schemas in src/schema. */
import { writeFileSync } from 'node:fs';
import { jsonSchemas, jsonSchemaText } from '../src/schema/json-schema.js';

const folder = new URL('../schemas/', import.meta.url);
for (const [file, document] of Object.entries(jsonSchemas())) {
  writeFileSync(new URL(file, folder), jsonSchemaText(document));
  console.log(`wrote schemas/${file}`);
}
