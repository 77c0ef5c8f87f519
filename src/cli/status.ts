import type { Command } from 'commander';
import { buildDag } from '../graph/dag.js';
import { computeWaves } from '../graph/waves.js';
import { splitList } from '../csv/columns.js';
import { readSessionTasks } from '../engine/load.js';
import { openSession } from '../engine/session.js';
import { countByStatus, countByWave, rowObject, taskLines } from '../engine/status-report.js';
import { readUsage } from '../knowledge/usage.js';
import { ExitCode, printJson, type CliIo } from './io.js';
import { addPipelineFlag, sessionOverrides } from './pipeline-flag.js';
import type { PipelineName } from '../schema/session.js';

export function registerStatus(program: Command, io: CliIo, done: (code: number) => void): void {
  addPipelineFlag(program
    .command('status')
    .description('one line per task ([DONE] [RUN] [WAIT] [FAIL] [SKIP] [----]), then counts per status and wave')
    .argument('<session>', 'session folder, or the path of its tasks.csv')
    .option('--json', 'print {"tasks": [rows by column name], "counts": {status: n}, "tokens"?: {prompt, completion}}'))
    .action((sessionPath: string, options: { json?: boolean; pipeline?: PipelineName }) => {
      // status reads what is there, even a file that would not validate: it is how a person
      // looks at a session in any state.
      // The pipeline does not change what status shows; the flag is taken like everywhere else.
      const session = openSession(sessionPath, sessionOverrides(options));
      const table = readSessionTasks(session);
      const counts = countByStatus(table.rows);
      const usage = readUsage(session.dir);
      if (options.json) {
        const tokens = usage ? { tokens: { prompt: usage.prompt_tokens, completion: usage.completion_tokens } } : {};
        printJson(io, { tasks: table.rows.map((row) => rowObject(table, row)), counts, ...tokens });
        done(ExitCode.Ok);
        return;
      }
      const lines = taskLines(table);
      const idWidth = Math.min(24, Math.max(0, ...lines.map((line) => line.id.length)));
      const roleWidth = Math.min(16, Math.max(0, ...lines.map((line) => line.role.length + 2)));
      for (const line of lines) {
        io.stdout(
          `${line.tag.padEnd(7)}${line.id.padEnd(idWidth)}  ${`(${line.role})`.padEnd(roleWidth)} -> ${line.detail}\n`,
        );
      }
      const total = table.rows.length;
      const invalid = lines.filter((line) => line.tag === '[????]').length;
      const summary = [...Object.entries(counts), ['invalid status', invalid] as const]
        .filter(([, n]) => n > 0)
        .map(([status, n]) => `${status} ${n}`)
        .join(', ');
      io.stdout(`\n${total} tasks: ${summary || 'none'}\n`);
      if (usage) io.stdout(`Tokens: ${usage.prompt_tokens} prompt, ${usage.completion_tokens} completion\n`);
      const graph = buildDag(table.rows.map((row) => ({ id: row.id, deps: splitList(row.deps) })));
      const { waves } = computeWaves(graph);
      for (const [wave, byStatus] of countByWave(table, waves)) {
        const inWave = Object.values(byStatus).reduce((a, b) => a + b, 0);
        const done = byStatus.completed + byStatus.skipped + byStatus.failed;
        const label = wave === 0 ? 'No wave (on a cycle)' : `Wave ${wave}`;
        io.stdout(`${label}: ${done}/${inWave} finished (completed ${byStatus.completed}, failed ${byStatus.failed}, skipped ${byStatus.skipped}, running ${byStatus.in_progress}, pending ${byStatus.pending})\n`);
      }
      done(ExitCode.Ok);
    });
}
