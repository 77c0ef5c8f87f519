import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { readRows } from '../session-builder.js';
import { usageLinesOf } from '../usage-lines.js';
import type { ModelServerLog } from './server-log.js';

export interface Tokens {
  prompt_tokens: number;
  completion_tokens: number;
}

interface AttemptLine {
  task: string;
  attempt: number;
  outcome: 'completed' | 'failed' | 'retried';
  error_class: string;
}

function ndjson<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

function add(sums: Map<string, Tokens>, task: string, tokens: Tokens): void {
  const sum = sums.get(task) ?? { prompt_tokens: 0, completion_tokens: 0 };
  sums.set(task, { prompt_tokens: sum.prompt_tokens + tokens.prompt_tokens, completion_tokens: sum.completion_tokens + tokens.completion_tokens });
}

/** usage.ndjson's tokens, summed per task. */
export function usageByTask(dir: string): Record<string, Tokens> {
  const sums = new Map<string, Tokens>();
  for (const line of usageLinesOf(dir)) add(sums, line.task, line);
  return Object.fromEntries(sums);
}

/** The server's own counts of the requests it answered, summed per task. */
export function serverTokensByTask(log: ModelServerLog): Record<string, Tokens> {
  const sums = new Map<string, Tokens>();
  for (const record of log.answered()) if (record.usage !== undefined) add(sums, record.task ?? '(none)', record.usage);
  return Object.fromEntries(sums);
}

/**
 * Checks what the engine did with a run of real model answers, never what the answers say.
 * The server never fails, so nothing is retried: each task ran one attempt of one request,
 * or two when the first answer was unusable (the repair). A failed task failed by the rules:
 * an answer still unusable after its repair (invalid-output) or a model that answered
 * "failed" (task-failure); a skipped task names why; the exit code follows from the failures;
 * and usage.ndjson holds, task by task, exactly the tokens the server reported.
 */
export function expectEndedByTheRules(dir: string, log: ModelServerLog, exitCode: number): void {
  const rows = readRows(dir);
  const attempts = ndjson<AttemptLine>(join(dir, 'attempts.ndjson'));
  const requests = new Map<string, boolean[]>();
  // Requests the client gave up (a Ctrl-C) belong to no attempt: the task ran again later.
  // So do those answered before them in the same task (a first request whose repair was cut
  // off): their attempt was cancelled, and its tokens are in usage.ndjson all the same.
  const cutOff = new Map<string, number>();
  for (const record of log.aborted()) cutOff.set(record.task ?? '(none)', Math.max(record.n, cutOff.get(record.task ?? '(none)') ?? 0));
  for (const record of log.answered()) {
    if (record.n < (cutOff.get(record.task ?? '(none)') ?? 0)) continue;
    requests.set(record.task ?? '(none)', [...(requests.get(record.task ?? '(none)') ?? []), record.repair]);
  }
  expect([...requests.keys()].filter((task) => !rows.has(task)), 'requests for tasks of no session').toEqual([]);

  let failures = 0;
  for (const [id, row] of rows) {
    const status = row.status;
    expect(['completed', 'failed', 'skipped'], `${id} ended ${status}`).toContain(status);
    const mine = attempts.filter((line) => line.task === id);
    const sent = requests.get(id) ?? [];
    if (status === 'skipped') {
      expect(row.error, id).toMatch(/^(Dependency failed or skipped: \S+ \((failed|skipped)\)|Skipped: GC converged)/);
      expect(sent, `${id} was skipped but sent`).toEqual([]);
      if (row.error.startsWith('Dependency failed')) failures++;
      continue;
    }
    // An interactive task (a GC check, the discussion gate) may call no model at all.
    if (row.exec_mode === 'interactive' && sent.length === 0) continue;
    expect([[false], [false, true]], `${id}: its requests (true: a repair)`).toContainEqual(sent);
    if (row.exec_mode !== 'interactive') expect(mine.map((line) => line.outcome), `${id}: one attempt, nothing retried`).toEqual([status]);
    if (status === 'failed') {
      failures++;
      const errorClass = mine.at(-1)?.error_class ?? '';
      expect(['invalid-output', 'task-failure'], `${id} failed as ${errorClass}: ${row.error}`).toContain(errorClass);
      if (errorClass === 'invalid-output') expect(sent, `${id}: invalid after its one repair`).toEqual([false, true]);
    }
  }
  expect(exitCode, 'exit code').toBe(failures > 0 ? 1 : 0);
  expect(usageByTask(dir)).toEqual(serverTokensByTask(log));
}


interface UsageLine {
  task: string;
  attempt: number;
  request: number;
  kind: 'first' | 'repair';
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reported: boolean;
}

/**
 * usage.ndjson line by line against the server's log: for each task, its reported lines in
 * order are the requests the server answered for it, in order, with the same prompt,
 * completion and cached tokens, and a repair where the server saw one. A request cut off
 * (Ctrl-C) is at most an unreported line, never tokens the server did not count.
 */
export function expectUsageLinesAsServed(dir: string, log: ModelServerLog): void {
  const lines = ndjson<UsageLine>(join(dir, 'usage.ndjson'));
  const tasks = new Set([...lines.map((line) => line.task), ...log.records.flatMap((record) => (record.task === undefined ? [] : [record.task]))]);
  for (const task of tasks) {
    const written = lines
      .filter((line) => line.task === task && line.reported)
      .map((line) => ({ kind: line.kind, prompt: line.prompt_tokens, completion: line.completion_tokens, cached: line.cached_tokens }));
    const served = log
      .answered()
      .filter((record) => record.task === task && record.usage !== undefined)
      .map((record) => ({ kind: record.repair ? 'repair' : 'first', prompt: record.usage!.prompt_tokens, completion: record.usage!.completion_tokens, cached: record.usage!.cached_tokens }));
    expect(written, `usage.ndjson of ${task}`).toEqual(served);
    const unreported = lines.filter((line) => line.task === task && !line.reported).length;
    expect(unreported, `${task}: unreported lines, at most its cut-off requests`).toBeLessThanOrEqual(log.aborted().filter((record) => record.task === task).length);
  }
}
