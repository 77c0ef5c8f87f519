import { basename } from 'node:path';
import { readTasksFile } from '../csv/parse-tasks.js';
import type { TasksTable } from '../csv/tasks-table.js';
import { WaveError } from '../errors.js';
import { killLeftoverCommands } from '../backend/local/child-groups.js';
import { recoverRows } from './journal.js';
import { SessionLock } from './lock.js';
import { settlePipeline, type Session, type SettledSession } from './session.js';
import { checkSessionOwner, claimSession } from './session-owner.js';
import { removeStaleTemporaries } from './stale-temporaries.js';
import { TasksWriter } from './tasks-writer.js';
import { withPipelineColumns } from '../pipelines/pipeline-columns.js';
import { validateTasks, type TaskPlan } from './validate.js';

/** How a command that changes the session (run, revise) holds it. */
export interface HoldSteps {
  warn: (message: string) => void;
  /**
   * A run (not a revise) also clears what a killed run left behind (its temporary files,
   * its commands) and tells what the journal gave back.
   */
  run: boolean;
}

export interface PrepareSteps {
  /**
   * Run and revise change the session: they hold its lock (the caller releases it) once
   * the folder is known to be this tasks file's, and start from tasks.csv brought up to
   * date by the journal. Absent: the session is only read (validate, plan, graph).
   */
  hold?: HoldSteps;
  /** tasks.csv is written with a BOM, whatever it was read with. */
  bom?: boolean | undefined;
}

export interface ReadSession {
  session: SettledSession;
  table: TasksTable;
}

export interface HeldSession extends ReadSession {
  lock: SessionLock;
  /** Rewrites tasks.csv, never over someone else's edit since it was read. */
  writer: TasksWriter;
}

/**
 * The preparation every command that works on a session shares: its tasks read (and, for
 * one that changes them, under the lock and with the journal applied), and its pipeline
 * settled from the roles. Validation (`planTasks`) and the first write (`writeFirst`)
 * follow, at the point each command needs them.
 */
export function prepareSession(session: Session, steps: PrepareSteps & { hold: HoldSteps }): HeldSession;
export function prepareSession(session: Session, steps?: PrepareSteps): ReadSession;
export function prepareSession(session: Session, steps: PrepareSteps = {}): ReadSession | HeldSession {
  const { hold } = steps;
  if (hold) {
    // Before the lock too, so that a refused tasks file never holds the other file's lock.
    checkSessionOwner(session);
  }
  const lock = hold ? SessionLock.acquire(session.dir, hold.warn) : undefined;
  try {
    const read = hold ? readHeld(session, hold) : { table: readSessionTasks(session) };
    const pipeline = settlePipeline(session, read.table.rows.map((row) => row.role));
    withPipelineColumns(read.table, pipeline, session.displayPath);
    if (steps.bom) read.table.format.bom = true;
    return { session: session as SettledSession, ...read, ...(lock ? { lock } : {}) };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/** Under the lock: tasks.csv with a writer for it, brought up to date by the journal of an earlier run. */
function readHeld(session: Session, hold: HoldSteps): { table: TasksTable; writer: TasksWriter } {
  // Again under the lock: another tasks file may have claimed the folder in between.
  checkSessionOwner(session);
  if (hold.run) {
    removeStaleTemporaries(session.dir, basename(session.tasksPath), hold.warn);
    // A resume must not run a task beside its own command, still running from a killed run.
    const leftovers = killLeftoverCommands(session.dir);
    if (leftovers > 0) hold.warn(`Ended ${leftovers} command(s) an interrupted run of this session left running`);
  }
  const { table, writer } = TasksWriter.read(session.tasksPath, { maxRows: session.config.max_rows });
  const { recovered, interrupted } = recoverRows(table.rows, session.dir);
  // A column of the person's own that the journal gives back cells of (a save during a run
  // lacked it, and a kill came before the run wrote it back) is a column again.
  if (recovered > 0) addJournaledColumns(table);
  if (hold.run) {
    if (recovered > 0) hold.warn(`Recovered ${recovered} task state(s) from the journal of an earlier run`);
    if (interrupted > 0) hold.warn(`${interrupted} task(s) left in progress by an interrupted run go back to pending`);
  }
  return { table, writer };
}

/** Appends the columns that rows hold cells of (their `extra`) and the table does not name, in the order first met. */
function addJournaledColumns(table: TasksTable): void {
  const named = new Set(table.columns);
  for (const row of table.rows) {
    for (const name of Object.keys(row.extra)) {
      if (named.has(name)) continue;
      named.add(name);
      table.columns.push(name);
    }
  }
}

/** The session's tasks.csv; a read or parse error names the file as the user did. */
export function readSessionTasks(session: Session): TasksTable {
  try {
    return readTasksFile(session.tasksPath, { maxRows: session.config.max_rows });
  } catch (error) {
    if (error instanceof WaveError) {
      throw new WaveError(error.code, error.message, {
        path: session.displayPath,
        violations: error.violations,
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * The tasks' waves, or WaveError INVALID_TASKS listing every problem with its line.
 * @param headline the error's message. @default `<n> problem(s) in <tasks file>`
 */
export function planTasks(prepared: ReadSession, headline?: string): TaskPlan {
  const { session, table } = prepared;
  const report = validateTasks(table, session.config.pipeline);
  if (report.violations.length > 0) {
    throw new WaveError('INVALID_TASKS', headline ?? `${report.violations.length} problem(s) in ${session.displayPath}`, {
      path: session.displayPath,
      violations: report.violations,
    });
  }
  return report.plan;
}

export interface FirstWriteMessages {
  /** The TASKS_EDITED message: tasks.csv was saved by someone else since it was read. */
  edited: string;
  /** Added to a failed write's message (WRITE_FAILED) to say what to do; @default nothing added */
  failed?: string;
}

/**
 * The first write into the session: the folder claimed for this tasks file, then tasks.csv
 * rewritten from memory. A command refused before it leaves the folder as it was.
 */
export function writeFirst(held: HeldSession, messages: FirstWriteMessages): void {
  claimSession(held.session);
  let written: boolean;
  try {
    written = held.writer.write();
  } catch (error) {
    if (messages.failed === undefined || !(error instanceof WaveError) || error.code !== 'WRITE_FAILED') throw error;
    throw new WaveError('WRITE_FAILED', `${error.message}. ${messages.failed}`, {
      ...(error.path === undefined ? {} : { path: error.path }),
      cause: error,
    });
  }
  if (!written) throw new WaveError('TASKS_EDITED', messages.edited, { path: held.session.displayPath });
}
