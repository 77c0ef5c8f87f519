import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temporary session folder holding the given tasks.csv text. */
export function tempSession(tasksCsv: string, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-test-'));
  writeFileSync(join(dir, 'tasks.csv'), tasksCsv);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

/** A temporary copy of a folder under samples/. */
export function copySample(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `csv-wave-${name}-`));
  cpSync(new URL(`../../samples/${name}/`, import.meta.url), dir, { recursive: true });
  return dir;
}
