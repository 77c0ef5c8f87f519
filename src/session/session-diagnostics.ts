import { z } from 'zod';
import { showCell } from '../csv/columns.js';
import type { Violation } from '../errors.js';
import { sessionConfigSchema } from '../schema/session.js';
import { jsonErrorPosition, lineOfPath } from '../text/json-error-position.js';
import { nearestName } from '../text/nearest-name.js';
import { runOptionEntries } from '../option-table.js';

/**
 * The message for a session.json JSON.parse refused, in a compiler's terms:
 * `<path>:<line>:<column>: not valid JSON: …`.
 */
export function jsonSyntaxMessage(shown: string, text: string, error: Error): string {
  const { line, column, detail } = jsonErrorPosition(text, error);
  return `${shown}:${line}:${column}: not valid JSON: ${detail}: fix it, or delete session.json to use the defaults`;
}

/** The run options' definitions by their session.json key. */
const kByKey = new Map(runOptionEntries().flatMap(([, definition]) => (definition.key === undefined ? [] : [[definition.key, definition] as const])));

/**
 * zod's issues with session.json as violations at the line of their key, in line order:
 * an unknown key is named with the key it most likely meant, or the keys there are; a run
 * option's bad value in the table's words, as its flag's would be
 * (`session.json:7: concurrency: expected a positive integer, got 0`).
 */
export function sessionViolations(issues: readonly z.core.$ZodIssue[], text: string, raw: unknown): Violation[] {
  const violations: Violation[] = [];
  for (const issue of issues) {
    const where = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      const known = Object.keys(objectShapeAt(where) ?? {});
      for (const key of issue.keys) {
        const name = [...where, key].join('.');
        const near = nearestName(key, known);
        const hint = near === undefined ? `known keys: ${known.join(', ')}` : `did you mean ${near}?`;
        violations.push({ line: lineOfPath(text, [...where, key]), message: `Unknown key: ${showCell(name)} (${hint})` });
      }
    } else {
      const name = where.length > 0 ? where.join('.') : '(top level)';
      const key = where.at(-1);
      const option = where.length === 1 ? kByKey.get(where[0]!) : undefined;
      const value = option === undefined ? undefined : (raw as Record<string, unknown>)[where[0]!];
      const message = option === undefined ? issue.message : `expected ${option.what}, got ${JSON.stringify(value)}`;
      violations.push({ line: key === undefined ? 1 : lineOfPath(text, where), message: `${showCell(name)}: ${message}` });
    }
  }
  return violations.sort((a, b) => a.line - b.line);
}

/** The keys an object in session.json may have, found by walking the schema along `path`. */
function objectShapeAt(path: readonly string[]): Record<string, unknown> | undefined {
  let schema: z.ZodType = sessionConfigSchema;
  for (const key of ['', ...path]) {
    while (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault) schema = schema.unwrap() as z.ZodType;
    // A record's entries (a role of `roles`, a model of `pricing`) have the record's value shape.
    if (key !== '' && schema instanceof z.ZodRecord) {
      schema = schema.valueType as z.ZodType;
      continue;
    }
    // A list's items (a rule of `inject`) have the list's item shape.
    if (key !== '' && schema instanceof z.ZodArray) {
      schema = schema.element as z.ZodType;
      continue;
    }
    if (!(schema instanceof z.ZodObject)) return undefined;
    if (key === '') continue;
    const next = (schema.shape as Record<string, z.ZodType | undefined>)[key];
    if (next === undefined) return undefined;
    schema = next;
  }
  while (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault) schema = schema.unwrap() as z.ZodType;
  return schema instanceof z.ZodObject ? (schema.shape as Record<string, unknown>) : undefined;
}
