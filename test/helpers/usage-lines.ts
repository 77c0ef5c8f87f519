import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UsageLine } from '../../src/knowledge/usage.js';

/** The lines of a session's usage.ndjson, one per model request; none when the file is not there. */
export function usageLinesOf(dir: string): UsageLine[] {
  const path = join(dir, 'usage.ndjson');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as UsageLine);
}
