import type { GbnfJsonSchema } from 'node-llama-cpp';

type Json = Record<string, unknown>;

const kScalarTypes = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const kStringFormats = new Set(['date-time', 'time', 'date']);

/**
 * A request's JSON Schema as the schema of node-llama-cpp's grammar, which knows a subset
 * of JSON Schema and makes every property it lists required. llama.cpp's server lets the
 * model leave out a property the schema does not require, so an optional property here is
 * left out of the grammar: the answer is one a llama.cpp server may legally give (with no
 * `required` at all, `{}`), never one it would refuse. `anyOf` becomes `oneOf`; what no
 * grammar enforces (`pattern`, `minimum`, `maximum`, `default`) is dropped, as servers do.
 */
export function grammarSchema(schema: unknown): GbnfJsonSchema {
  return translate(schema, 0) as GbnfJsonSchema;
}

/** Deeper than this is a hostile schema, not a result format. */
const kMaxDepth = 64;

function translate(value: unknown, depth: number): Json {
  if (depth > kMaxDepth) throw new Error(`the schema nests deeper than ${kMaxDepth} levels`);
  if (value === true || value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('a schema must be an object');
  const schema = value as Json;
  const out: Json = {};
  if (isObject(schema['$defs'])) out['$defs'] = mapValues(schema['$defs'], (inner) => translate(inner, depth + 1));
  if (typeof schema['$ref'] === 'string') return { ...out, $ref: schema['$ref'] };
  if ('const' in schema) return { ...out, const: schema['const'] };
  if (Array.isArray(schema['enum'])) return { ...out, enum: schema['enum'] };
  const choices = schema['anyOf'] ?? schema['oneOf'];
  if (Array.isArray(choices)) return { ...out, oneOf: choices.map((inner) => translate(inner, depth + 1)) };

  const type = schema['type'];
  if (Array.isArray(type)) {
    if (type.every((name) => typeof name === 'string' && kScalarTypes.has(name))) return { ...out, type };
    // A list with object or array in it: one branch per type, each with the keywords of its type.
    return { ...out, oneOf: type.map((name) => translate({ ...schema, type: name }, depth + 1)) };
  }
  switch (type) {
    case 'object':
      return { ...out, ...objectSchema(schema, depth) };
    case 'array':
      return { ...out, ...arraySchema(schema, depth) };
    case 'string':
      return { ...out, type, ...pick(schema, ['minLength', 'maxLength']), ...(kStringFormats.has(String(schema['format'])) ? { format: schema['format'] } : {}) };
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return { ...out, type };
    case undefined:
      // No type: any JSON value (node-llama-cpp's grammar for an empty schema).
      return out;
    default:
      throw new Error(`unknown type ${JSON.stringify(type)}`);
  }
}

function objectSchema(schema: Json, depth: number): Json {
  const required = new Set(Array.isArray(schema['required']) ? schema['required'].filter((key) => typeof key === 'string') : []);
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const kept: Json = {};
  for (const [key, inner] of Object.entries(properties)) if (required.has(key)) kept[key] = translate(inner, depth + 1);
  const extra = schema['additionalProperties'];
  // Extra keys are allowed only where the schema says what they hold and lists no properties
  // (a free-form `data` object); an open object with listed properties gets just those.
  const additional = Object.keys(properties).length === 0 && extra !== undefined && extra !== false ? { additionalProperties: extra === true ? {} : translate(extra, depth + 1) } : {};
  return { type: 'object', properties: kept, ...additional, ...pick(schema, ['minProperties', 'maxProperties']) };
}

function arraySchema(schema: Json, depth: number): Json {
  return {
    type: 'array',
    ...(schema['items'] === undefined ? {} : { items: translate(schema['items'], depth + 1) }),
    ...(Array.isArray(schema['prefixItems']) ? { prefixItems: schema['prefixItems'].map((inner) => translate(inner, depth + 1)) } : {}),
    ...pick(schema, ['minItems', 'maxItems']),
  };
}

function pick(schema: Json, keys: readonly string[]): Json {
  const out: Json = {};
  for (const key of keys) if (typeof schema[key] === 'number') out[key] = schema[key];
  return out;
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function mapValues(value: Json, map: (inner: unknown) => Json): Json {
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, map(inner)]));
}
