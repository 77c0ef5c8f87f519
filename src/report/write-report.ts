import { writeFileAtomic } from '../csv/atomic-write.js';
import type { TasksTable } from '../csv/tasks-file.js';
import { sessionPathForWrite } from '../knowledge/session-path.js';
import { buildReportData } from './report-data.js';
import { reportHtml } from './report-html.js';

export const kReportFile = 'report.html';

/** Writes report.html (or `out`) for the session's rows, atomically; returns its path. */
export function writeReport(sessionDir: string, table: TasksTable, out?: string): string {
  const path = out ?? sessionPathForWrite(sessionDir, kReportFile);
  writeFileAtomic(path, reportHtml(buildReportData(sessionDir, table)));
  return path;
}
