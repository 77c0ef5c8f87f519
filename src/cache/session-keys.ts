import { splitList } from '../core/id-list.js';
import type { TaskRow } from '../core/task.js';
import { rowCells } from '../csv/tasks-table.js';
import type { AttemptRequest, ExecutorSpec, TaskLimits, WorkerRequest } from '../executors/messages.js';
import { buildPrevContext } from '../graph/prev-context.js';
import { KnownFiles } from '../knowledge/known-files.js';
import { buildUpstream } from '../knowledge/upstream.js';
import { kRunDefaults, type WorkdirMode } from '../option-table.js';
import { runExecutor } from '../options/executor-option.js';
import { pipelineFor, SettingsReader } from '../pipelines/index.js';
import { settlePipeline, type Session } from '../session/session.js';
import { readLastRun } from './last-run.js';
import type { PipelineName } from '../schema/session.js';
import { attemptInput, type AttemptInputSetup } from './attempt-input.js';
import { KeyMaker, kWorktreeUncacheable, type TaskKey, type Uncacheable } from './task-key.js';

/** The session as the keys read it. */
export interface KeySession {
  dir: string;
  pipeline: PipelineName;
  /** The session's topic (model prompts show it). */
  topic: string;
  /** Every row, as the session stands (tasks.csv with the journal applied). */
  rows: readonly TaskRow[];
}

/** What a run would run the tasks with: the last run's record (last-run.ts), or a rerun's own settings. */
export interface KeyRun {
  executor: ExecutorSpec;
  workdir: WorkdirMode;
  limits: TaskLimits;
  prevContextCap: number;
}

/** Why an interactive task has no key. */
const kInteractive = 'it is an interactive task (a GC check, a discussion gate): it decides anew each time, and is never cached';

/**
 * The key each task of `ids` would get if it were about to run now, from the session as it
 * stands: its row, its dependencies' states and files, its prev_context, the last run's
 * executor. The same request a run builds (attemptsNow), so the same key. Used by status
 * (stale tasks), `rerun --stale` and the plan of the next run (next-run.ts).
 * `inputKeysOnly`: only `inputKey` is right (the board and wisdom are not read), which is
 * all that staleness compares.
 */
export function keysNow(session: KeySession, run: KeyRun, ids: Iterable<string>, options: { inputKeysOnly?: boolean } = {}): Map<string, TaskKey | Uncacheable> {
  const byId = new Map(session.rows.map((row) => [row.id, row]));
  const keys = new KeyMaker({ sessionDir: session.dir, lookup: (id) => byId.get(id) });
  const out = new Map<string, TaskKey | Uncacheable>();
  for (const [id, attempt] of attemptsNow(session, run, ids, options)) out.set(id, 'uncacheable' in attempt ? attempt : keys.keyOf(attempt));
  return out;
}

/**
 * The attempt each task of `ids` would be sent if it were about to run now (attempt-input.ts,
 * as a run builds it), from the session as it stands; an interactive or worktree task gets
 * why the cache never holds it instead. What keysNow keys, and what `run --dry-run` shows.
 */
export function attemptsNow(session: KeySession, run: KeyRun, ids: Iterable<string>, options: { inputKeysOnly?: boolean } = {}): Map<string, AttemptRequest | Uncacheable> {
  const byId = new Map(session.rows.map((row) => [row.id, row]));
  const known = new KnownFiles(session.dir);
  const input: AttemptInputSetup = {
    sessionDir: session.dir,
    pipeline: session.pipeline,
    topic: session.topic,
    limits: run.limits,
    upstream: (deps) => buildUpstream(session.dir, deps, known),
    ...(run.workdir === 'task' ? { workdir: () => ({ mode: 'task' as const }) } : {}),
    ...(options.inputKeysOnly === true ? { noDigests: true } : {}),
  };
  const out = new Map<string, AttemptRequest | Uncacheable>();
  for (const id of ids) {
    const row = byId.get(id);
    if (row === undefined) continue;
    if (row.exec_mode === 'interactive') {
      out.set(id, { uncacheable: kInteractive });
      continue;
    }
    if (run.workdir === 'worktree') {
      out.set(id, { uncacheable: kWorktreeUncacheable });
      continue;
    }
    const request: WorkerRequest = {
      executor: run.executor,
      task: {
        id,
        wave: Number(row.wave) || 1,
        attempt: 1,
        session: session.dir,
        row: rowCells(row),
        prev_context: buildPrevContext(splitList(row.context_from), (source) => byId.get(source), run.prevContextCap),
      },
      deps: splitList(row.deps).flatMap((dep) => {
        const state = byId.get(dep);
        return state ? [{ id: dep, status: state.status, findings: state.findings }] : [];
      }),
      timeoutMs: 0,
    };
    out.set(id, attemptInput(request, input));
  }
  return out;
}

/**
 * The session as keys read it, and what a run would run its tasks with: the last run's
 * record (`.csv-wave/last-run.json`), else session.json's executor (with its roles), its
 * limits and cap. Undefined when neither names an executor, or the session's settings do
 * not read. What status, explain and estimate start from.
 */
export function keySessionOf(session: Session, rows: readonly TaskRow[]): { session: KeySession; run: KeyRun } | undefined {
  const pipeline = settlePipeline(session, rows.map((row) => row.role));
  try {
    const last = readLastRun(session.dir);
    const { config, configFile } = session;
    // A run with session.json's executor has it with session.json's roles (runExecutor).
    const executor = last?.executor ?? (config.executor === undefined ? undefined : runExecutor(undefined, config, session.dir));
    if (executor === undefined) return undefined;
    const run: KeyRun = {
      executor,
      workdir: last?.workdir ?? config.workdir ?? 'session',
      limits: last?.limits ?? {
        maxStdoutBytes: config.max_stdout_bytes ?? kRunDefaults.maxStdoutBytes,
        maxArtifactsPerTask: config.max_artifacts_per_task ?? kRunDefaults.maxArtifactsPerTask,
        maxArtifactBytes: config.max_artifact_bytes ?? kRunDefaults.maxArtifactBytes,
      },
      prevContextCap: last?.prev_context_cap ?? config.prev_context_cap ?? kRunDefaults.prevContextCap,
    };
    const topic = pipelineFor(pipeline).settings(SettingsReader.of(pipeline, config, configFile)).topic;
    return { session: { dir: session.dir, pipeline, topic, rows }, run };
  } catch {
    return undefined;
  }
}

/** The file of the template a role's tasks are rendered from, for words; undefined for an executor without templates. */
export function templateLabelOf(run: KeyRun, pipeline: PipelineName, role: string, sessionDir: string): string | undefined {
  return new KeyMaker({ sessionDir, lookup: () => undefined }).templateLabel(run.executor, pipeline, role);
}
