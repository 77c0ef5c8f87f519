import { describe, expect, test } from 'vitest';
import { grammarSchema } from '../helpers/model-server/grammar-schema.js';

describe("the model server's reading of a response_format schema", () => {
  test('keeps only the required properties, recursively, and closes the object', () => {
    expect(
      grammarSchema({
        type: 'object',
        properties: {
          status: { type: 'string', enum: ['completed', 'failed'] },
          findings: { type: 'string', minLength: 1, pattern: '^x' },
          wisdom: { type: 'object', properties: { learnings: { type: 'array', items: { type: 'string' } } } },
          nested: { type: 'object', properties: { a: { type: 'integer', minimum: 0 }, b: { type: 'string' } }, required: ['a'] },
        },
        required: ['status', 'findings', 'nested'],
      }),
    ).toEqual({
      type: 'object',
      properties: {
        status: { enum: ['completed', 'failed'] },
        findings: { type: 'string', minLength: 1 },
        nested: { type: 'object', properties: { a: { type: 'integer' } } },
      },
    });
  });

  test('no required at all is the empty object a llama.cpp server may answer', () => {
    expect(grammarSchema({ type: 'object', properties: { findings: { type: 'string' } } })).toEqual({ type: 'object', properties: {} });
  });

  test('anyOf becomes oneOf, a type list with object in it one branch per type, a free-form object keeps its values open', () => {
    expect(grammarSchema({ anyOf: [{ type: 'number', maximum: 1 }, { type: 'null' }] })).toEqual({ oneOf: [{ type: 'number' }, { type: 'null' }] });
    expect(grammarSchema({ type: ['object', 'null'] })).toEqual({ oneOf: [{ type: 'object', properties: {} }, { type: 'null' }] });
    expect(grammarSchema({ type: 'object', additionalProperties: {} })).toEqual({ type: 'object', properties: {}, additionalProperties: {} });
    expect(grammarSchema({ type: ['number', 'null'] })).toEqual({ type: ['number', 'null'] });
  });

  test('refuses what is no schema: an unknown type, a non-object, a schema nested past 64 levels', () => {
    expect(() => grammarSchema({ type: 'date' })).toThrow(/unknown type "date"/);
    expect(() => grammarSchema('object')).toThrow(/must be an object/);
    let deep: unknown = { type: 'string' };
    for (let i = 0; i < 70; i++) deep = { type: 'array', items: deep };
    expect(() => grammarSchema(deep)).toThrow(/deeper than 64/);
  });
});
