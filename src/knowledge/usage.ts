import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TokenUsage } from '../executors/types.js';
import { sessionPathForWrite } from './session-path.js';
import { writeWholeFile } from '../csv/write-all.js';

const kUsageFile = 'usage.ndjson';

/** Appends the tokens one attempt of a task spent to `usage.ndjson`. */
export function recordUsage(sessionDir: string, taskId: string, usage: TokenUsage): void {
  const line = { ts: new Date().toISOString(), task: taskId, ...usage };
  writeWholeFile(sessionPathForWrite(sessionDir, kUsageFile), `${JSON.stringify(line)}\n`, 'a');
}

export interface UsageTotals {
  prompt_tokens: number;
  completion_tokens: number;
  byTask: Map<string, TokenUsage>;
}

/** Tokens per task and in all, from `usage.ndjson`; undefined when no model was called. */
export function readUsage(sessionDir: string): UsageTotals | undefined {
  const path = join(sessionDir, kUsageFile);
  if (!existsSync(path)) return undefined;
  const totals: UsageTotals = { prompt_tokens: 0, completion_tokens: 0, byTask: new Map() };
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    let entry: { task?: unknown; prompt_tokens?: unknown; completion_tokens?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    const prompt = Number(entry.prompt_tokens) || 0;
    const completion = Number(entry.completion_tokens) || 0;
    totals.prompt_tokens += prompt;
    totals.completion_tokens += completion;
    const task = String(entry.task);
    const sum = totals.byTask.get(task) ?? { prompt_tokens: 0, completion_tokens: 0 };
    totals.byTask.set(task, { prompt_tokens: sum.prompt_tokens + prompt, completion_tokens: sum.completion_tokens + completion });
  }
  return totals;
}
