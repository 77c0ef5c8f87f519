import { describe, expect, test } from 'vitest';
import { grammarSchema } from '../model-server/grammar-schema.js';
import { boundedSchema } from './bounded-schema.js';

const kBounds = { maxStringLength: 24, maxItems: 1 };

describe("the model mode's bounds on a grammar schema", () => {
  test('bounds every free string and array, at any depth, and keeps a longer minimum', () => {
    const schema = grammarSchema({
      type: 'object',
      properties: {
        findings: { type: 'string', minLength: 1 },
        title: { type: 'string', minLength: 40 },
        short: { type: 'string', maxLength: 5 },
        list: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }, minItems: 2 },
        status: { type: 'string', enum: ['completed', 'failed'] },
        when: { type: 'string', format: 'date' },
      },
      required: ['findings', 'title', 'short', 'list', 'status', 'when'],
    });
    expect(boundedSchema(schema, kBounds)).toEqual({
      type: 'object',
      properties: {
        findings: { type: 'string', minLength: 1, maxLength: 24 },
        title: { type: 'string', minLength: 40, maxLength: 40 },
        short: { type: 'string', maxLength: 5 },
        list: { type: 'array', items: { type: 'object', properties: { name: { type: 'string', maxLength: 24 } } }, minItems: 2, maxItems: 2 },
        status: { enum: ['completed', 'failed'] },
        when: { type: 'string', format: 'date' },
      },
    });
  });

  test('a free-form object gets at most maxItems properties of short scalars; a value of any type becomes a short scalar', () => {
    expect(boundedSchema(grammarSchema({ type: 'object', additionalProperties: true }), kBounds)).toEqual({
      type: 'object',
      properties: {},
      additionalProperties: { oneOf: [{ type: 'string', maxLength: 24 }, { type: 'number' }, { type: 'boolean' }] },
      maxProperties: 1,
    });
    expect(boundedSchema({ oneOf: [{ type: ['string', 'null'] }, {}] }, kBounds)).toEqual({
      oneOf: [{ type: ['string', 'null'], maxLength: 24 }, { oneOf: [{ type: 'string', maxLength: 24 }, { type: 'number' }, { type: 'boolean' }] }],
    });
  });

  test('leaves the schema it was given as it was', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const before = JSON.stringify(schema);
    boundedSchema(schema, kBounds);
    expect(JSON.stringify(schema)).toBe(before);
  });
});
