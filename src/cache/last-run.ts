import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAgentKind, type AgentOverride } from '../executors/agents/settings.js';
import type { ExecutorSpec, TaskLimits } from '../executors/messages.js';
import { kLayout, type SessionFileWriter } from '../layout.js';
import { kWorkdirModes, type WorkdirMode } from '../option-table.js';
import { SecretScrubber } from '../text/secret-scrubber.js';
import { withoutCredentials } from './task-key.js';

/**
 * What a run ran with, recorded in `.csv-wave/last-run.json` as it starts: what `status`
 * needs to compute the keys a run would compute (the executor, the output limits, the
 * working folder, the prev_context cap). No secret: base URLs lose their user and password,
 * and every text is scrubbed of the environment's secrets.
 */
export interface LastRun {
  /** ISO 8601. */
  started_at: string;
  executor: ExecutorSpec;
  workdir: WorkdirMode;
  limits: TaskLimits;
  prev_context_cap: number;
}

/** Writes the record of the run starting now. */
export function recordLastRun(files: SessionFileWriter, run: Omit<LastRun, 'started_at'>): void {
  const record: LastRun = { started_at: new Date().toISOString(), ...run, executor: withoutSecrets(run.executor) };
  files.replace(kLayout.lastRun, `${JSON.stringify(SecretScrubber.fromEnv().deep(record), null, 2)}\n`);
}

/** The record of the session's last run; undefined when there is none, or it cannot be read. */
export function readLastRun(sessionDir: string): LastRun | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(sessionDir, kLayout.lastRun), 'utf8'));
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const record = parsed as Partial<LastRun>;
  const executor = record.executor as { type?: unknown } | undefined;
  const types = ['command', 'module', 'openai', 'codex', 'claude'];
  if (executor === undefined || executor === null || typeof executor !== 'object' || !types.includes(String(executor.type))) return undefined;
  if (!(kWorkdirModes as readonly unknown[]).includes(record.workdir)) return undefined;
  if (typeof record.prev_context_cap !== 'number' || record.limits === null || typeof record.limits !== 'object') return undefined;
  return record as LastRun;
}

/** The executor with no credentials in its URLs. */
function withoutSecrets(executor: ExecutorSpec): ExecutorSpec {
  if (executor.type === 'openai' && executor.baseUrl !== undefined) return { ...executor, baseUrl: withoutCredentials(executor.baseUrl) };
  if (!isAgentKind(executor.type)) return executor;
  const agent = executor as Extract<ExecutorSpec, { roles?: unknown }>;
  const roles =
    agent.roles === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(agent.roles).map(([role, entry]): [string, AgentOverride] => [
            role,
            entry.baseUrl === undefined ? entry : { ...entry, baseUrl: withoutCredentials(entry.baseUrl) },
          ]),
        );
  return {
    ...agent,
    ...(agent.baseUrl === undefined ? {} : { baseUrl: withoutCredentials(agent.baseUrl) }),
    ...(roles === undefined ? {} : { roles }),
  } as ExecutorSpec;
}
