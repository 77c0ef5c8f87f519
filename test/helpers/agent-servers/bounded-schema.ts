/**
 * A copy of a grammar schema (grammarSchema's output) with every string, array and free-form
 * object bounded: at most `maxStringLength` characters, `maxItems` items or properties (a
 * `minLength` or `minItems` over the bound wins). A value of any type (`{}`) becomes a short
 * string, a number or a boolean: an open JSON value has no length to bound.
 */
export function boundedSchema(schema: unknown, bounds: { maxStringLength: number; maxItems: number }): unknown {
  const walk = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const node = value as Record<string, unknown>;
    const keys = Object.keys(node).filter((key) => key !== 'description' && key !== '$defs');
    if (keys.length === 0) return { oneOf: [{ type: 'string', maxLength: bounds.maxStringLength }, { type: 'number' }, { type: 'boolean' }] };
    const out: Record<string, unknown> = { ...node };
    if (isRecord(node['$defs'])) out['$defs'] = mapValues(node['$defs'], walk);
    if (isRecord(node['properties'])) out['properties'] = mapValues(node['properties'], walk);
    if (node['items'] !== undefined) out['items'] = walk(node['items']);
    if (Array.isArray(node['prefixItems'])) out['prefixItems'] = node['prefixItems'].map(walk);
    if (Array.isArray(node['oneOf'])) out['oneOf'] = node['oneOf'].map(walk);
    const types = Array.isArray(node['type']) ? node['type'] : [node['type']];
    if (types.includes('string') && node['enum'] === undefined && node['const'] === undefined && node['format'] === undefined) {
      out['maxLength'] = bounded(node['maxLength'], node['minLength'], bounds.maxStringLength);
    }
    if (types.includes('array')) out['maxItems'] = bounded(node['maxItems'], node['minItems'], bounds.maxItems);
    if (node['additionalProperties'] !== undefined && node['additionalProperties'] !== false) {
      out['additionalProperties'] = walk(node['additionalProperties'] === true ? {} : node['additionalProperties']);
      out['maxProperties'] = bounded(node['maxProperties'], node['minProperties'], bounds.maxItems);
    }
    return out;
  };
  return walk(schema);
}

/** The smaller of a schema's own maximum and the bound, but never under its minimum. */
function bounded(max: unknown, min: unknown, bound: number): number {
  const upper = typeof max === 'number' ? Math.min(max, bound) : bound;
  return typeof min === 'number' ? Math.max(upper, min) : upper;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function mapValues(value: Record<string, unknown>, map: (inner: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, map(inner)]));
}
