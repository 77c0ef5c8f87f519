import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kAttemptsFile } from '../engine/journal.js';
import { attemptLineSchema, type AttemptLine } from '../schema/attempt.js';

/**
 * Every well-formed line of attempts.ndjson, in file order. A torn last line (a crash
 * mid-write) or a line that is not an attempt is skipped: the file is a log, not an input.
 */
export function readAttempts(sessionDir: string): AttemptLine[] {
  const path = join(sessionDir, kAttemptsFile);
  if (!existsSync(path)) return [];
  const lines: AttemptLine[] = [];
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (text === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      continue;
    }
    const result = attemptLineSchema.safeParse(parsed);
    if (result.success) lines.push(result.data);
  }
  return lines;
}
