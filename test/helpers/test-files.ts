import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';

/** A CSV file as records keyed by column name. */
export function readCsvRecords(path: string): Record<string, string>[] {
  return parse(readFileSync(path, 'utf8'), { columns: true, bom: true }) as Record<string, string>[];
}

/** Absolute path of a file under test/fixtures/. */
export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

/** A task result as a command prints it: `printf %s {description}` with this as the description. */
export function resultText(result: unknown): string {
  return JSON.stringify(result);
}
