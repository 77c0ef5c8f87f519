import { Option, type Command } from 'commander';
import { loadSession } from '../../session/load.js';
import { renderDot, renderGraphlibJson, renderMermaid } from '../graph-render.js';
import { ExitCode, printJson, type CliIo } from '../io.js';
import { addPipelineFlag, sessionOverrides } from '../pipeline-flag.js';
import type { PipelineName } from '../../schema/session.js';

export function registerGraph(program: Command, io: CliIo, done: (code: number) => void): void {
  addPipelineFlag(program
    .command('graph')
    .description('print the task DAG with waves as ranks and status as colour')
    .argument('<session>', 'session folder, or the path of its tasks.csv')
    .addOption(new Option('--format <format>', 'output format').choices(['mermaid', 'dot', 'json']).default('mermaid'))
    .option('--json', 'print {"format", "graph"} with the rendered text'))
    .action((sessionPath: string, options: { format: 'mermaid' | 'dot' | 'json'; json?: boolean; pipeline?: PipelineName }) => {
      const { table, plan } = loadSession(sessionPath, sessionOverrides(options));
      const render = { mermaid: renderMermaid, dot: renderDot, json: renderGraphlibJson }[options.format];
      const text = render(table, plan.waves);
      if (options.json) printJson(io, { format: options.format, graph: text });
      else io.stdout(text);
      done(ExitCode.Ok);
    });
}
