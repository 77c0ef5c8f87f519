import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { kTaskColumns, type TaskRow } from '../core/task.js';
import { writeTasksFile } from '../csv/serialize-tasks.js';
import type { TasksTable } from '../csv/tasks-table.js';
import { WaveError } from '../errors.js';
import { analyzeTasks, kDefaultPerspectives } from '../pipelines/analyze/decompose.js';
import { analyzeSettings } from '../pipelines/analyze/settings.js';
import { brainstormTasks, kDefaultAngles } from '../pipelines/brainstorm/decompose.js';
import { brainstormSettings } from '../pipelines/brainstorm/settings.js';
import { SettingsReader, topicSettings, type SettingFlags } from '../pipelines/settings.js';
import { splitList } from '../core/id-list.js';
import { genericStarterTasks } from '../pipelines/generic/starter.js';
import { lifecycleTasks } from '../pipelines/lifecycle/decompose.js';
import { lifecycleSettings } from '../pipelines/lifecycle/settings.js';
import type { PipelineName, SessionConfig } from '../schema/session.js';
import { SessionLock } from '../session/lock.js';
import { validateTasks } from '../session/validate.js';
import { addFilledColumns, withPipelineColumns } from '../pipelines/pipeline-columns.js';
import { fillWaveColumn } from '../core/wave-column.js';
import { writeWholeFile } from '../files/write-all.js';
import { isWaveFile, kLayout, kRunOutputs } from '../layout.js';

export interface InitOptions {
  /** `generic` writes a starter: two tasks and a report of them, to be replaced by the user's own. */
  template: 'brainstorm' | 'analyze' | 'generic' | 'lifecycle';
  /** What the session is about; required but for the generic template. */
  topic: string;
  /** brainstorm: `;`-separated angles. @default Technical;Product;Innovation;Risk */
  angles?: string;
  /** analyze: `;`-separated perspectives. @default architecture;risks;user-impact */
  perspectives?: string;
  /** brainstorm: quick|deep|full (default full); analyze: quick|standard|deep (default standard); lifecycle: spec|impl|full (default full). */
  mode?: string;
  /** lifecycle, `impl` mode: the specification file the plan starts from; copied into the session as `spec/<name>`. */
  spec?: string;
  /** brainstorm: generator-critic rounds before convergence is forced; a number, or the flag's text. @default 2 */
  maxGcRounds?: number | string;
  executor?: SessionConfig['executor'];
  bom?: boolean;
  /**
   * Replace an existing session: besides tasks.csv and session.json, what its runs wrote
   * goes too (journal, wave files, discoveries, artifacts, wisdom, explorations, reports),
   * so that nothing of it leaks into the new one; other files in the folder stay.
   * @default false
   */
  force?: boolean;
  /** Told when a stale lock of a crashed run is taken over. @default ignore */
  warn?: (message: string) => void;
}

export interface InitResult {
  dir: string;
  config: SessionConfig;
  tasks: TaskRow[];
  waveCount: number;
}

/** The decomposer: writes a new session's tasks.csv and session.json. */
export function initSession(dir: string, options: InitOptions): InitResult {
  // Laid out before the folder is looked at: a flag that does not fit writes nothing.
  const { tasks, config } = layOut(options);
  const spec = options.spec === undefined ? undefined : specFile(options.spec);
  const tasksPath = join(dir, kLayout.tasks);
  const configPath = join(dir, kLayout.config);
  const exists = existsSync(tasksPath) || existsSync(configPath);
  if (exists && !options.force) {
    throw new WaveError('USAGE', `${dir} already holds a session (tasks.csv or session.json): pass --force to overwrite it`, {
      path: dir,
    });
  }
  if (options.executor) config.executor = options.executor;
  if (options.bom) config.bom = true;

  // A plain batch starts with the columns its starter rows use, and those a run writes; a seed pipeline with every seed column.
  const own = config.pipeline === 'generic' ? ['id', 'description', 'role', 'deps', 'context_from'] : [...kTaskColumns];
  const table: TasksTable = withPipelineColumns({ columns: own, rows: tasks, format: { bom: options.bom ?? false, eol: '\n' } }, config.pipeline, tasksPath);
  // The lifecycle's priority and branch cells need their columns from the start.
  addFilledColumns(table);
  const { violations, plan } = validateTasks(table, config.pipeline);
  if (violations.length > 0) {
    // The decomposer's own output must always be valid; this names the bug if it is not.
    throw new Error(`init made an invalid session: ${violations.map((v) => v.message).join('; ')}`);
  }
  fillWaveColumn(tasks, plan.waves);
  // Replacing a session: not under a run that holds it, and without its state (a journal
  // left by a crash would be applied to the new tasks by the next run).
  const lock = exists ? SessionLock.acquire(dir, options.warn ?? (() => {})) : undefined;
  try {
    if (exists) removeSessionOutputs(dir);
    mkdirSync(dir, { recursive: true });
    if (spec !== undefined) {
      mkdirSync(join(dir, 'spec'), { recursive: true });
      copyFileSync(spec, join(dir, 'spec', basename(spec)));
    }
    writeTasksFile(tasksPath, table);
    writeWholeFile(configPath, `${JSON.stringify(config, null, 2)}\n`);
  } finally {
    lock?.release();
  }
  return { dir, config, tasks, waveCount: plan.waveCount };
}

/**
 * The template's rows and session.json. Its settings (topic, mode, max_gc_rounds) are parsed
 * by its pipeline's own parser, named by their flags; the template's other flags are checked here.
 */
function layOut(options: InitOptions): { tasks: TaskRow[]; config: SessionConfig & { pipeline: PipelineName } } {
  const flags: SettingFlags = { topic: options.topic, mode: options.mode, maxGcRounds: options.maxGcRounds };
  const reader = new SettingsReader(options.template, { from: 'flags', command: 'init', flags });
  if (options.spec !== undefined && options.template !== 'lifecycle') throw new WaveError('USAGE', '--spec goes with --template lifecycle --mode impl');
  if (options.template === 'lifecycle') {
    const { topic, mode } = lifecycleSettings(reader);
    for (const [flag, given] of [
      ['--angles', options.angles],
      ['--perspectives', options.perspectives],
      ['--max-gc-rounds', options.maxGcRounds],
    ] as const) {
      if (given !== undefined) throw new WaveError('USAGE', `${flag} goes with --template brainstorm or analyze, not lifecycle`);
    }
    if (mode === 'impl' && options.spec === undefined) throw new WaveError('USAGE', '--mode impl starts from a specification: pass --spec FILE');
    if (mode !== 'impl' && options.spec !== undefined) throw new WaveError('USAGE', `--spec goes with --mode impl (the ${mode} mode writes the specification itself)`);
    const specPath = options.spec === undefined ? undefined : `spec/${basename(options.spec)}`;
    return { tasks: lifecycleTasks({ topic, mode, specPath }), config: { pipeline: 'lifecycle', topic, mode } };
  }
  if (options.template === 'brainstorm') {
    const { topic, mode, maxGcRounds } = brainstormSettings(reader);
    if (options.perspectives !== undefined) throw new WaveError('USAGE', '--perspectives goes with --template analyze (brainstorm takes --angles)');
    const angles = options.angles === undefined ? kDefaultAngles : splitList(options.angles);
    if (angles.length === 0) throw new WaveError('USAGE', '--angles needs at least one angle');
    return { tasks: brainstormTasks({ angles, mode }), config: { pipeline: 'brainstorm', topic, mode, max_gc_rounds: maxGcRounds } };
  }
  if (options.template === 'generic') {
    const { topic } = topicSettings(reader);
    for (const [flag, given] of [
      ['--angles', options.angles],
      ['--perspectives', options.perspectives],
      ['--mode', options.mode],
      ['--max-gc-rounds', options.maxGcRounds],
    ] as const) {
      if (given !== undefined) throw new WaveError('USAGE', `${flag} goes with --template brainstorm or analyze, not generic`);
    }
    return { tasks: genericStarterTasks(topic), config: { pipeline: 'generic', ...(topic.trim() === '' ? {} : { topic }) } };
  }
  const { topic, mode } = analyzeSettings(reader);
  if (options.angles !== undefined) throw new WaveError('USAGE', '--angles goes with --template brainstorm (analyze takes --perspectives)');
  if (options.maxGcRounds !== undefined) throw new WaveError('USAGE', '--max-gc-rounds goes with --template brainstorm');
  const perspectives = options.perspectives === undefined ? kDefaultPerspectives : splitList(options.perspectives);
  if (perspectives.length === 0) throw new WaveError('USAGE', '--perspectives needs at least one perspective');
  return { tasks: analyzeTasks({ topic, perspectives, mode }), config: { pipeline: 'analyze', topic, mode } };
}

/** The specification file of `--spec`: a readable file, not a folder. */
function specFile(path: string): string {
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new WaveError('USAGE', `--spec ${path}: not a file`);
    size = stat.size;
  } catch (error) {
    if (error instanceof WaveError) throw error;
    throw new WaveError('USAGE', `--spec ${path}: cannot be read: ${(error as Error).message}`, { path, cause: error });
  }
  if (size > 10 * 1024 * 1024) throw new WaveError('USAGE', `--spec ${path}: ${size} bytes; a specification of more than 10 MiB is no document to plan from`);
  return path;
}

/** Deletes what runs wrote into a session folder (the layout's run outputs and wave files); the engine folder keeps only the lock. */
function removeSessionOutputs(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (kRunOutputs.includes(name) || isWaveFile(name)) rmSync(join(dir, name), { recursive: true, force: true });
  }
  const engine = join(dir, kLayout.engine);
  for (const name of readdirSync(engine)) {
    if (join(kLayout.engine, name) !== kLayout.lock) rmSync(join(engine, name), { recursive: true, force: true });
  }
}
