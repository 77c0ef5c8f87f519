import { closeSync, openSync, readSync } from 'node:fs';
import type { Command } from 'commander';
import { writeTasksFile } from '../../csv/serialize-tasks.js';
import { loadSession } from '../../session/load.js';
import { summarizePlan, writeWaveColumn } from '../../commands/plan.js';
import { ExitCode, printJson, type CliIo } from '../io.js';
import { addPipelineFlag, sessionOverrides } from '../pipeline-flag.js';
import type { PipelineName } from '../../schema/session.js';

/** Ids listed per wave before the line is cut short (all of them are in --json). */
const kIdsPerLine = 20;

export function registerPlan(program: Command, io: CliIo, done: (code: number) => void): void {
  addPipelineFlag(program
    .command('plan')
    .description('validate, fill the wave column of tasks.csv, and print the waves')
    .argument('<session>', 'session folder, or the path of its tasks.csv')
    .option('--json', 'print one JSON document: {tasks, waveCount, longestChain, waves}')
    .option('--bom', 'write tasks.csv with a UTF-8 byte order mark (for spreadsheets that need one)'))
    .action((sessionPath: string, options: { json?: boolean; bom?: boolean; pipeline?: PipelineName }) => {
      const loaded = loadSession(sessionPath, sessionOverrides(options));
      if (options.bom) loaded.table.format.bom = true;
      const rewritten = writeWaveColumn(loaded);
      // A BOM that was asked for (--bom or session.json) is written even when no wave changed.
      if (!rewritten && loaded.table.format.bom && !startsWithBom(loaded.session.tasksPath)) {
        writeTasksFile(loaded.session.tasksPath, loaded.table);
      }
      const summary = summarizePlan(loaded);
      if (options.json) {
        printJson(io, summary);
        done(ExitCode.Ok);
        return;
      }
      const interactive = new Set(summary.waves.flatMap((wave) => wave.interactive));
      for (const { wave, ids } of summary.waves) {
        const shown = ids.slice(0, kIdsPerLine).map((id) => (interactive.has(id) ? `${id} [interactive]` : id));
        const more = ids.length > kIdsPerLine ? `, … and ${ids.length - kIdsPerLine} more` : '';
        const noun = ids.length === 1 ? 'task' : 'tasks';
        io.stdout(`Wave ${wave} (${ids.length} ${noun}): ${shown.join(', ')}${more}\n`);
      }
      io.stdout(
        `${count(summary.waveCount, 'wave')}, ${count(summary.tasks, 'task')}; ` +
          `longest dependency chain: ${count(summary.longestChain, 'task')}\n`,
      );
      done(ExitCode.Ok);
    });
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function startsWithBom(path: string): boolean {
  const head = Buffer.alloc(3);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 3, 0);
  } finally {
    closeSync(fd);
  }
  return head.equals(Buffer.from([0xef, 0xbb, 0xbf]));
}
