import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../files/atomic-write.js';
import { isKnownColumn } from '../csv/columns.js';
import { emptyRow, type TaskOutcome, type TaskRow } from '../core/task.js';
import { WaveError } from '../errors.js';
import { followBatchEntry, isBatchEntry, openBatches, openKey, type BatchJournalEntry, type OpenBatch } from '../backend/openai-batch/batch-record.js';
import { sessionPathForWrite } from '../files/session-path.js';
import type { AttemptLine } from '../schema/attempt.js';
import { AppendOnlyFile } from './append-only-file.js';
import { attemptLineText } from './attempt-line-text.js';
import { kLayout } from '../layout.js';

/**
 * An attempt started. `job`: the BullMQ job it runs as (--backend bullmq), recorded before
 * the job is added, so that every job in Redis is named by a journaled attempt: a resume
 * awaits again only such jobs (run/job-reattach.ts).
 */
export interface JournalStart {
  type: 'start';
  id: string;
  attempt: number;
  job?: string;
}

/** The attempts log in the session folder (README "Seeing a run"). */
export const kAttemptsFile = kLayout.attempts;

/** A state change, in the order it happened. The journal is the durable record of a run. */
export type JournalEntry =
  | JournalStart
  | ({
      type: 'finish';
      id: string;
      /** The BullMQ job whose reply finished the task (--backend bullmq). */
      job?: string;
      /** Pending tasks this result skips (a converged GC check), with their errors; their own finish entries follow. */
      skips?: readonly { id: string; error: string }[];
    } & TaskOutcome)
  /** A task an interactive task appended, or a person's save of tasks.csv added (every cell by column name). */
  | { type: 'add'; row: Record<string, string> }
  /**
   * A pending task an interactive task rewired; or input cells a person's save of tasks.csv
   * changed (`cells`: any input column, known or the person's own).
   */
  | { type: 'update'; id: string; deps?: string; context_from?: string; cells?: Record<string, string> }
  /** A task that had not started, removed by a person's save of tasks.csv. */
  | { type: 'remove'; id: string }
  /**
   * Cells a person's save of tasks.csv changed and the run put back (a running or finished
   * task's output cells, or a running task's inputs): the journal holds them until tasks.csv
   * shows them again, so that a kill in between does not leave the save's values.
   */
  | { type: 'restore'; id: string; cells: Record<string, string> };

export function engineDir(sessionDir: string): string {
  return join(sessionDir, kLayout.engine);
}

function journalPath(sessionDir: string): string {
  return join(sessionDir, kLayout.journal);
}

/**
 * The batches and launches open at the last checkpoint (`--batch`), written whole before the
 * journal is emptied: a kill between emptying the journal and writing them back into it
 * finds them here. Absent when none was open.
 */
/** What a checkpoint carries over (open batches, the jobs of attempts out), kept while the journal is emptied. */
const kCarriedFile = kLayout.carried;

/**
 * Append-only journal under `.csv-wave/`. Entries are buffered for at most one turn of the
 * event loop and written together (group commit): a result is accepted once written, and
 * write() to the page cache survives kill -9. After tasks.csv is rewritten with everything
 * the journal holds, the journal is emptied (a checkpoint).
 *
 * The file stays open for the whole run, so a session folder made read-only during the
 * run does not stop the journal. A write that fails all the same (a full disk) keeps what
 * it did not write for the next flush and tells `onError`; it never throws from the event
 * loop.
 */
export class Journal {
  /** The journal file; what a failed write left unwritten goes first at the next flush. */
  readonly #file: AppendOnlyFile;
  readonly #onError: (error: WaveError) => void;
  #buffer: string[] = [];
  #flushScheduled = false;
  /** attempts.ndjson, when the journal keeps it; it is never emptied by a checkpoint. */
  readonly #attempts: AppendOnlyFile | undefined;
  #attemptLines: string[] = [];
  /** The entries of batches launched or created and not ended: tasks.csv cannot hold them, so a checkpoint writes them again. */
  readonly #openBatches = new Map<string, string>();
  /**
   * The start entries of attempts out as jobs (with `job`), by task, until the task's next
   * start or its finish: tasks.csv cannot hold a job id, so a checkpoint writes them again,
   * and a resume after kill -9 still knows which jobs to await.
   */
  readonly #openJobs = new Map<string, string>();
  readonly #sessionDir: string;
  /** Whether carried.ndjson may be there, to be removed once nothing is carried. */
  #snapshotMayExist: boolean;

  /**
   * @param onError told when a write fails. @default throw (from flush, checkpoint and close)
   * @param options.attempts also keep attempts.ndjson. @default false
   */
  constructor(sessionDir: string, onError?: (error: WaveError) => void, options: { attempts?: boolean } = {}) {
    this.#sessionDir = sessionDir;
    this.#snapshotMayExist = existsSync(join(sessionDir, kCarriedFile));
    const path = sessionPathForWrite(sessionDir, kLayout.journal);
    try {
      this.#file = new AppendOnlyFile(path);
      if (options.attempts) this.#attempts = new AppendOnlyFile(sessionPathForWrite(sessionDir, kAttemptsFile));
    } catch (error) {
      throw new WaveError('IO', `Cannot open ${(error as { path?: string }).path ?? path}: ${(error as Error).message}`, {
        path,
        cause: error,
      });
    }
    this.#onError =
      onError ??
      ((error) => {
        throw error;
      });
  }

  /** Also the entries of OpenAI batches (`--batch`): an open one outlives checkpoints, as only the journal knows it. */
  append(entry: JournalEntry | BatchJournalEntry): void {
    const line = `${JSON.stringify(entry)}\n`;
    if (entry.type === 'start' && entry.job !== undefined) this.#openJobs.set(entry.id, line);
    else if (entry.type === 'start' || entry.type === 'finish') this.#openJobs.delete(entry.id);
    followBatchEntry(this.#openBatches, entry, line);
    this.#buffer.push(line);
    this.#scheduleFlush();
  }

  /** Keeps the open batches of an earlier run's journal through this run's checkpoints (call before the first). */
  carry(batches: readonly OpenBatch[]): void {
    for (const batch of batches) this.#openBatches.set(openKey(batch), `${JSON.stringify(batch)}\n`);
  }

  /**
   * Keeps the start entries of the jobs an earlier run left, which this run may await again
   * (run/job-reattach.ts), through this run's checkpoints until their tasks start or finish
   * here: a run killed before it got to them leaves them to the next resume (call before the first).
   */
  carryJobs(starts: Iterable<JournalStart>): void {
    for (const start of starts) this.#openJobs.set(start.id, `${JSON.stringify(start)}\n`);
  }

  /**
   * Appends a line to attempts.ndjson in the same group commit as the journal entries of
   * this turn, written before them: a finish the journal accepted has its attempt line.
   */
  appendAttempt(line: AttemptLine): void {
    if (!this.#attempts) throw new Error('This journal was opened without attempts.ndjson');
    this.#attemptLines.push(`${attemptLineText(line)}\n`);
    this.#scheduleFlush();
  }

  #scheduleFlush(): void {
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Writes what is buffered. False (what was not written kept for the next flush) when the write failed. */
  flush(): boolean {
    this.#flushScheduled = false;
    if (this.#attempts) {
      const lines = this.#attemptLines.join('');
      this.#attemptLines = [];
      try {
        this.#attempts.write(lines);
      } catch (error) {
        this.#onError(new WaveError('IO', `Cannot write ${kAttemptsFile}: ${(error as Error).message}`, { cause: error }));
      }
    }
    const text = this.#buffer.join('');
    this.#buffer = [];
    try {
      // The next flush goes on from the first byte not written, so that no line is torn or doubled.
      this.#file.write(text);
    } catch (error) {
      this.#onError(new WaveError('IO', `Cannot write the journal: ${(error as Error).message}`, { cause: error }));
      return false;
    }
    return true;
  }

  /**
   * Empties the journal once tasks.csv holds everything in it. Entries still buffered are
   * in tasks.csv too (rows change before their entries are made), so they are dropped.
   */
  checkpoint(): void {
    this.#buffer = [];
    const open = [...this.#openBatches.values(), ...this.#openJobs.values()].join('');
    try {
      // Open batches and the jobs of attempts out are no task state: only the journal knows
      // them. Kept in a file of their own first (replaced whole), then written back after the
      // emptying: two system calls that a kill may come between.
      if (open !== '' || this.#snapshotMayExist) {
        const snapshot = sessionPathForWrite(this.#sessionDir, kCarriedFile);
        if (open !== '') writeFileAtomic(snapshot, open);
        else rmSync(snapshot, { force: true });
        this.#snapshotMayExist = open !== '';
      }
    } catch (error) {
      // The journal is not emptied: it still holds them.
      this.#onError(new WaveError('IO', `Cannot write ${kCarriedFile}: ${(error as Error).message}`, { cause: error }));
      return;
    }
    try {
      this.#file.truncate();
      if (open !== '') this.#file.write(open);
    } catch (error) {
      this.#onError(new WaveError('IO', `Cannot empty the journal: ${(error as Error).message}`, { cause: error }));
    }
  }

  /** Writes what is buffered and closes the file. False when some entries could not be written (they are lost). */
  close(): boolean {
    const written = this.flush();
    this.#file.close();
    this.#attempts?.close();
    return written;
  }
}

/** The task entries of a session's journal (its batch entries left out); a torn last line (a crash mid-write) is dropped. */
export function readJournal(sessionDir: string): JournalEntry[] {
  return readJournalLines(sessionDir).filter((entry): entry is JournalEntry => !isBatchEntry(entry));
}

/**
 * The OpenAI batches (`--batch`) a session's journal names as launched or created and not
 * ended: those open at the last checkpoint, followed by what the journal holds since.
 */
export function readOpenBatches(sessionDir: string): OpenBatch[] {
  return openBatches([...readEntryLines(join(sessionDir, kCarriedFile)), ...readJournalLines(sessionDir)]);
}

/**
 * The task entries of a session's journal preceded by the start entries the last checkpoint
 * carried over (the jobs of attempts out, run/job-reattach.ts): a kill between emptying
 * the journal and writing them back loses none.
 */
export function readJournalWithCarried(sessionDir: string): JournalEntry[] {
  return [...readEntryLines(join(sessionDir, kCarriedFile)), ...readJournalLines(sessionDir)].filter((entry): entry is JournalEntry => !isBatchEntry(entry));
}

function readJournalLines(sessionDir: string): (JournalEntry | BatchJournalEntry)[] {
  return readEntryLines(journalPath(sessionDir));
}

function readEntryLines(path: string): (JournalEntry | BatchJournalEntry)[] {
  if (!existsSync(path)) return [];
  const entries: (JournalEntry | BatchJournalEntry)[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue;
    try {
      entries.push(JSON.parse(line) as JournalEntry | BatchJournalEntry);
    } catch {
      // Only the last line can be torn; anything unparsable is not a record of a result.
    }
  }
  return entries;
}

/**
 * Brings rows read from tasks.csv up to date after an earlier run: applies its journal
 * (results it accepted after its last rewrite of tasks.csv), then puts tasks it left
 * in progress back to pending. Changes the rows only, no file.
 */
export function recoverRows(rows: TaskRow[], sessionDir: string): { recovered: number; interrupted: number } {
  const recovered = replayJournal(rows, readJournal(sessionDir));
  let interrupted = 0;
  for (const row of rows) {
    if (row.status === 'in_progress') {
      row.status = 'pending';
      interrupted++;
    }
  }
  return { recovered, interrupted };
}

/**
 * Applies journal entries to rows, in order: results to the output columns, the rows and
 * cells an interactive task or a person's save added, changed or removed, and the cells a
 * run restored over a save. Returns how many rows changed.
 */
export function replayJournal(rows: TaskRow[], entries: readonly JournalEntry[]): number {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const changed = new Set<string>();
  const removed = new Set<string>();
  for (const entry of entries) {
    if (entry.type === 'add') {
      const id = entry.row['id'] ?? '';
      if (byId.has(id)) continue;
      const row = rowFromCells(entry.row);
      rows.push(row);
      byId.set(id, row);
      removed.delete(id);
      changed.add(id);
      continue;
    }
    const row = byId.get(entry.id);
    if (!row) continue;
    changed.add(entry.id);
    if (entry.type === 'start') {
      row.status = 'in_progress';
    } else if (entry.type === 'update') {
      if (entry.deps !== undefined) row.deps = entry.deps;
      if (entry.context_from !== undefined) row.context_from = entry.context_from;
      setCells(row, entry.cells ?? {});
    } else if (entry.type === 'restore') {
      setCells(row, entry.cells);
    } else if (entry.type === 'remove') {
      byId.delete(entry.id);
      removed.add(entry.id);
    } else {
      row.status = entry.status;
      row.findings = entry.findings;
      row.gc_signal = entry.gc_signal;
      row.severity_summary = entry.severity_summary;
      row.error = entry.error;
      row.route = entry.route ?? '';
      // A journal is read as found (a copied folder): a skip that is not an id and a text is passed over.
      for (const skip of Array.isArray(entry.skips) ? entry.skips : []) {
        if (typeof skip?.id !== 'string' || typeof skip.error !== 'string') continue;
        const skipped = byId.get(skip.id);
        if (skipped === undefined || (skipped.status !== '' && skipped.status !== 'pending')) continue;
        skipped.status = 'skipped';
        skipped.error = skip.error;
        changed.add(skip.id);
      }
    }
  }
  if (removed.size > 0) {
    let kept = 0;
    for (const row of rows) if (byId.get(row.id) === row) rows[kept++] = row;
    rows.length = kept;
  }
  return changed.size;
}

function setCells(row: TaskRow, cells: Record<string, string>): void {
  for (const [name, value] of Object.entries(cells)) {
    if (isKnownColumn(name)) row[name] = value;
    else row.extra[name] = value;
  }
}

/** A journaled row's cells back into a row: known columns by name, the rest as extra. */
function rowFromCells(cells: Record<string, string>): TaskRow {
  const row = emptyRow();
  setCells(row, cells);
  return row;
}
