import { resolve } from 'node:path';
import type { Command } from 'commander';
import { openSession } from '../../session/session.js';
import { buildReportData } from '../../report/report-data.js';
import { currentTasks } from '../../report/session-state.js';
import { writeReport } from '../../report/write-report.js';
import { ExitCode, printJson, type CliIo } from '../io.js';

export function registerReport(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('report')
    .description('write report.html: summary, DAG, timeline, failures and task table in one offline file')
    .argument('<session>', 'session folder, or the path of its tasks.csv')
    .option('--out <file>', 'where to write the page (default: report.html in the session folder)')
    .option('--json', 'print the data the page shows, as one JSON document, and write no file')
    .action((sessionPath: string, options: { out?: string; json?: boolean }) => {
      const session = openSession(sessionPath);
      const table = currentTasks(session);
      // Priced as status prices them: one computation of the cost, in knowledge/.
      const pricing = session.config.pricing;
      if (options.json) {
        printJson(io, buildReportData(session.dir, table, { ...(pricing ? { pricing } : {}) }));
      } else {
        const path = writeReport(session.dir, table, { out: options.out === undefined ? undefined : resolve(options.out), pricing });
        io.stdout(`Wrote ${path}\n`);
      }
      done(ExitCode.Ok);
    });
}
