import { hash } from 'node:crypto';

/**
 * JSON in one spelling for one value, the form a key part is hashed in (docs/cache.md):
 * object keys sorted by UTF-16 code units, no white space, strings as JSON.stringify
 * writes them; `undefined` members left out, as JSON.stringify leaves them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .filter((name) => record[name] !== undefined)
    .sort()
    .map((name) => `${JSON.stringify(name)}:${canonicalJson(record[name])}`);
  return `{${members.join(',')}}`;
}

/** The SHA-256 of a text's UTF-8 bytes (or of bytes), in lower-case hex. */
export function sha256(data: string | Buffer): string {
  return hash('sha256', data, 'hex');
}

