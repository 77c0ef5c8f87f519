import type { Command } from 'commander';
import { loadSession } from '../../session/load.js';
import { ExitCode, printJson, type CliIo } from '../io.js';
import { addPipelineFlag, sessionOverrides } from '../pipeline-flag.js';
import type { PipelineName } from '../../schema/session.js';
import { readSessionContracts } from '../../dynamic/session-contracts.js';

export function registerValidate(program: Command, io: CliIo, done: (code: number) => void): void {
  addPipelineFlag(program
    .command('validate')
    .description('check tasks.csv against every rule; print OK or each violation as file:line: message')
    .argument('<session>', 'session folder, or the path of its tasks.csv')
    .option('--json', 'print one JSON document: {ok, tasks, waves, violations}'))
    .action((sessionPath: string, options: { json?: boolean; pipeline?: PipelineName }) => {
      const { session, table, plan } = loadSession(sessionPath, sessionOverrides(options));
      // session.json's injection rules and artifact-registry.json, as a run checks them before any task.
      const { config, configFile } = session;
      readSessionContracts(session.dir, config.pipeline ?? 'generic', config, configFile);
      if (options.json) printJson(io, { ok: true, tasks: table.rows.length, waves: plan.waveCount, violations: [] });
      else io.stdout(`OK: ${table.rows.length} tasks, ${plan.waveCount} waves\n`);
      done(ExitCode.Ok);
    });
}
