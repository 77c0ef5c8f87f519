import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { jsonSchemas, jsonSchemaText } from '../../src/schema/json-schema.js';
import { taskResultSchema } from '../../src/schema/result.js';
import { sessionConfigSchema } from '../../src/schema/session.js';

const kSchemasFolder = new URL('../../schemas/', import.meta.url);
const kHint = 'schemas/ is out of date with src/schema: run `npm run schemas` and commit the result';

describe('schemas/ (checked in)', () => {
  const documents = jsonSchemas();

  test('holds exactly the exported files', () => {
    expect(readdirSync(kSchemasFolder).sort(), kHint).toEqual(Object.keys(documents).sort());
  });

  test.each(Object.keys(documents))('%s matches src/schema', (file) => {
    const onDisk = readFileSync(new URL(file, kSchemasFolder), 'utf8');
    expect(onDisk, `${kHint} (${file} differs)`).toBe(jsonSchemaText(documents[file]));
  });
});

describe('taskResultSchema', () => {
  test('accepts a minimal result and fills the defaults', () => {
    expect(taskResultSchema.parse({})).toEqual({ status: 'completed', findings: '' });
    expect(taskResultSchema.parse({ findings: 'done' })).toEqual({ status: 'completed', findings: 'done' });
  });

  test.each([
    [{ findings: 42 }, ['findings']],
    [{ status: 'done' }, ['status']],
    [{ gc_signal: ['CONVERGED'] }, ['gc_signal']],
    [{ discoveries: [{ type: 'idea', data: 'not an object' }] }, ['discoveries', 0, 'data']],
    [{ artifacts: [{ name: '../escape', content: 'x' }] }, ['artifacts', 0, 'name']],
    [{ supervision_score: 2 }, ['supervision_score']],
  ])('rejects %j naming the field', (input, path) => {
    const result = taskResultSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((issue) => issue.path)).toEqual([path]);
    expect(result.error!.message).toContain(String(path[0]));
  });

  test('rejects unknown keys', () => {
    const result = taskResultSchema.safeParse({ findings: 'x', finding: 'typo' });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['finding'] });
  });
});

describe('sessionConfigSchema', () => {
  test('accepts an empty session, naming no pipeline: settlePipeline picks it from the roles', () => {
    expect(sessionConfigSchema.parse({})).toEqual({});
  });

  test('rejects unknown keys, at the top and in the executor', () => {
    const top = sessionConfigSchema.safeParse({ pipeline: 'generic', concurency: 4 });
    expect(top.success).toBe(false);
    expect(top.error!.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['concurency'], path: [] });

    const nested = sessionConfigSchema.safeParse({ executor: { type: 'command', command: 'echo' } });
    expect(nested.success).toBe(false);
    expect(nested.error!.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['command'], path: ['executor'] });
  });
});
