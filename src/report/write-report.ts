import { closeSync, openSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../files/atomic-write.js';
import type { TasksTable } from '../csv/tasks-table.js';
import type { PriceTable } from '../knowledge/pricing.js';
import { writeAll } from '../files/write-all.js';
import { WaveError } from '../errors.js';
import { sessionPathForWrite } from '../files/session-path.js';
import { buildReportData } from './report-data.js';
import { reportHtmlParts } from './page/report-html.js';
import type { WaveContexts } from './wave-contexts.js';
import type { AttemptLinesReader } from '../knowledge/attempt-lines.js';
import { kLayout } from '../layout.js';

export const kReportFile = kLayout.report;

/** Where report.html goes and what it is built with. */
export interface WriteReportOptions {
  /** Another file than the session's report.html. */
  out?: string | undefined;
  /** Wave files parsed already (a run's). */
  waveContexts?: WaveContexts | undefined;
  /** Prices by model for usage lines written without a cost (session.json `pricing`, and the run's `--price-*`). */
  pricing?: PriceTable | undefined;
  /** A run's reader of attempts.ndjson, which parses only the lines added since its last report. */
  attempts?: AttemptLinesReader | undefined;
}

/**
 * Writes report.html (or `out`) for the session's rows and returns its path. report.html
 * is replaced by a rename, so a reader never sees half a page. Its temporary file sits in
 * `.csv-wave/`, where one left by a run killed mid-write is in nobody's way, and it is not
 * flushed to disk first: a run writes it at each wave end, with nothing running in waves
 * mode, and the page is a view that the next run or `csv-wave report` writes again.
 * The page is written piece by piece as it is made, never held whole.
 */
export function writeReport(sessionDir: string, table: TasksTable, options: WriteReportOptions = {}): string {
  const { out, waveContexts, pricing, attempts } = options;
  const html = reportHtmlParts(buildReportData(sessionDir, table, { ...(waveContexts ? { waveContexts } : {}), ...(pricing ? { pricing } : {}), ...(attempts ? { attempts } : {}) }));
  if (out !== undefined) {
    writeFileAtomic(out, html);
    return out;
  }
  const path = sessionPathForWrite(sessionDir, kReportFile);
  const temporary = sessionPathForWrite(sessionDir, join(kLayout.engine, `${kReportFile}.${process.pid}.tmp`));
  try {
    // A fresh file, never one planted at the temporary name (a symlink would be written through).
    rmSync(temporary, { force: true });
    const fd = openSync(temporary, 'wx');
    try {
      for (const piece of html) writeAll(fd, piece); // every byte or an error: a full disk must not leave half a page
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new WaveError('IO', `Cannot write ${path}: ${(error as Error).message}`, { path, cause: error });
  }
  return path;
}
