import { join } from 'node:path';

/** The folder of the engine's own files, which a person never edits. */
const kEngine = '.csv-wave';

/**
 * The session folder's layout: every file csv-wave keeps there, by its path relative to
 * the folder (README "The session folder"). The one place these names are spelled; it
 * imports nothing but node:path, so any layer may read it.
 */
export const kLayout = {
  /** The tasks, when a session is named by its folder. */
  tasks: 'tasks.csv',
  /** The session's settings (schema/session.ts). */
  config: 'session.json',
  /** The discoveries board: one JSON line per finding, shared by the tasks. */
  discoveries: 'discoveries.ndjson',
  /** A task's discoveries record, `discoveries/<id>.json`. */
  discoveryRecords: 'discoveries',
  /** An interactive task's result, `interactive/<id>-result.json`. */
  interactive: 'interactive',
  /** The files tasks left, `artifacts/<id>/…`. */
  artifacts: 'artifacts',
  /** The wisdom files, `wisdom/<kind>.md`. */
  wisdom: 'wisdom',
  /** The exploration cache of the analyze pipeline. */
  explorations: 'explorations',
  /** The run's context report. */
  context: 'context.md',
  /** The analyze pipeline's discussion rounds. */
  discussion: 'discussion.md',
  /** The lifecycle pipeline's quality gate: each check's scores and the action chosen. */
  quality: 'quality.md',
  /** The session's artifacts: the latest manifest of each, with its validation status (written by the engine alone). */
  artifactRegistry: 'artifact-registry.json',
  /** One line per model request: its tokens and cost. */
  usage: 'usage.ndjson',
  /** One line per attempt of a task. */
  attempts: 'attempts.ndjson',
  /** The HTML report. */
  report: 'report.html',
  /** With `--workdir task`: each task's own working folder, `workdirs/<id>`, emptied for each attempt. */
  workdirs: 'workdirs',
  /** With `--workdir worktree`: each task's git worktree, `worktrees/<id>`, while it runs (or kept by --keep-worktrees). */
  worktrees: 'worktrees',
  /** The engine's folder. */
  engine: kEngine,
  /** The journal of the run: every state change, before tasks.csv shows it. */
  journal: join(kEngine, 'journal.ndjson'),
  /** What a checkpoint carries over (open batches, the jobs of attempts out). */
  carried: join(kEngine, 'carried.ndjson'),
  /** The session lock. */
  lock: join(kEngine, 'lock'),
  /** Which tasks file owns the folder. */
  owner: join(kEngine, 'tasks-file'),
  /** The session's id on Redis (--backend bullmq). */
  sessionId: join(kEngine, 'session-id'),
  /** The result cache (docs/cache.md): packs of entries, each `packs/<pack>.pack` with its `.index`, and the runs' hits in `packs/<name>.uses`; session.json's `cache_dir` may name another folder. */
  cache: join(kEngine, 'cache'),
  /** What the last run ran with: its executor (no secret), output limits and workdir, for status's keys. */
  lastRun: join(kEngine, 'last-run.json'),
  /** The tasks a rerun chose, which execute rather than take a cached result, kept until they ran (a resume keeps them forced). */
  forced: join(kEngine, 'forced.json'),
} as const;

/** The wave file of wave `wave`: its csv-wave rows with their prev_context. */
export function waveFile(wave: number): string {
  return `wave-${wave}.csv`;
}

/** The working folder of task `id` with `--workdir task`, relative to the session folder. */
export function taskWorkdir(id: string): string {
  return join(kLayout.workdirs, id);
}

/** The git worktree of task `id` with `--workdir worktree`, relative to the session folder. */
export function taskWorktree(id: string): string {
  return join(kLayout.worktrees, id);
}

/** Whether a name in the session folder is a wave file. */
export function isWaveFile(name: string): boolean {
  return /^wave-\d+\.csv$/.test(name);
}

/**
 * What runs write at the top of the session folder, beside tasks.csv and session.json
 * (and the wave files): what `init --force` removes when it replaces a session.
 */
export const kRunOutputs: readonly string[] = [
  kLayout.discoveries,
  kLayout.discoveryRecords,
  kLayout.interactive,
  kLayout.artifacts,
  kLayout.wisdom,
  kLayout.explorations,
  kLayout.context,
  kLayout.discussion,
  kLayout.quality,
  kLayout.artifactRegistry,
  kLayout.usage,
  kLayout.attempts,
  kLayout.report,
  kLayout.workdirs,
];

/**
 * What writes the files of the session folder: the face of the session layer's writer
 * (session/files/session-writer.ts) handed down to the code below it (the interactive
 * lane, the pipelines' handlers), which never writes the folder itself. A `path` is
 * relative to the folder, made from kLayout. A write that fails throws as it failed: a
 * WaveError IO for a path refused (a symlink out of the session), else the system's error
 * or an IncompleteWrite (files/write-all.ts's isFolderWriteFailure tells them apart).
 */
export interface SessionFileWriter {
  /** The session folder, for reading (every write goes through the methods). */
  readonly dir: string;
  /** Replaces the file at `path` with `data` (not atomic: for a file a reader may see half of). */
  write(path: string, data: string): void;
  /** Appends `data` to the file at `path`; an append that fails is taken back whole. */
  append(path: string, data: string): void;
  /** Replaces the file at `path` by a rename, for a file a reader must never see half of; returns its absolute path. */
  replace(path: string, data: string): string;
  /** Removes the file at `path` when it is there. */
  remove(path: string): void;
}
