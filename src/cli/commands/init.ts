import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { WaveError } from '../../errors.js';
import { initSession } from '../../commands/init-session.js';
import { ExitCode, printJson, type CliIo } from '../io.js';

interface InitFlags {
  template: 'brainstorm' | 'analyze' | 'generic' | 'lifecycle';
  topic?: string;
  angles?: string;
  perspectives?: string;
  mode?: string;
  maxGcRounds?: string;
  spec?: string;
  cmd?: string;
  module?: string;
  executor?: 'openai' | 'codex' | 'claude';
  model?: string;
  baseUrl?: string;
  bom?: boolean;
  force?: boolean;
  json?: boolean;
}

export function registerInit(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('init')
    .description('the decomposer: write a new session (tasks.csv and session.json) from a pipeline template')
    .argument('<dir>', 'the session folder to create')
    .addOption(new Option('--template <name>', 'pipeline template').choices(['brainstorm', 'analyze', 'generic', 'lifecycle']).makeOptionMandatory())
    .option('--topic <text>', 'what the session is about (required but for generic)')
    .option('--angles <a;b;c>', 'brainstorm angles (default Technical;Product;Innovation;Risk)')
    .option('--perspectives <a;b;c>', 'analyze perspectives (default architecture;risks;user-impact)')
    .option('--mode <mode>', 'brainstorm: quick|deep|full (default full); analyze: quick|standard|deep (default standard); lifecycle: spec|impl|full (default full)')
    .option('--spec <file>', 'lifecycle --mode impl: the specification the plan starts from (copied into the session as spec/<name>)')
    .option('--max-gc-rounds <n>', 'brainstorm: generator-critic rounds before convergence is forced (default 2)')
    .option('--cmd <template>', 'executor to record in session.json: a shell command per task')
    .option('--module <path>', 'executor to record in session.json: a JS module per task')
    .addOption(new Option('--executor <type>', 'executor to record in session.json').choices(['openai', 'codex', 'claude']))
    .option('--model <name>', 'with --executor openai, codex or claude: the model')
    .option('--base-url <url>', 'with --executor openai: an OpenAI-compatible endpoint; with codex: a Responses-API endpoint; with claude: a Messages-API endpoint')
    .option('--bom', 'write tasks.csv with a UTF-8 byte order mark')
    .option('--force', "replace an existing session, with everything its runs wrote (journal, wave files, discoveries, artifacts, wisdom, …); other files stay")
    .option('--json', 'print {dir, config, tasks, waveCount}')
    .action((dir: string, flags: InitFlags) => {
      const result = initSession(dir, {
        template: flags.template,
        topic: flags.topic ?? '',
        ...(flags.angles === undefined ? {} : { angles: flags.angles }),
        ...(flags.perspectives === undefined ? {} : { perspectives: flags.perspectives }),
        ...(flags.mode === undefined ? {} : { mode: flags.mode }),
        ...(flags.maxGcRounds === undefined ? {} : { maxGcRounds: flags.maxGcRounds }),
        ...(flags.spec === undefined ? {} : { spec: flags.spec }),
        ...executorFlag(dir, flags),
        bom: flags.bom ?? false,
        force: flags.force ?? false,
        warn: (message) => io.stderr(`warning: ${message}\n`),
      });
      if (flags.json) printJson(io, { ...result, tasks: result.tasks.map((row) => row.id) });
      else {
        const mode = result.config.mode === undefined ? '' : `, ${result.config.mode} mode`;
        io.stdout(`Wrote ${result.tasks.length} tasks in ${result.waveCount} waves to ${dir}/tasks.csv (${result.config.pipeline}${mode})\n`);
        if (result.config.pipeline === 'generic') io.stdout(`Edit ${dir}/tasks.csv: replace the starter rows with your own tasks (any role)\n`);
        if (!result.config.executor) {
          io.stdout(`Run it with: csv-wave run ${dir} --cmd '…' (or --module PATH, or --executor openai|codex|claude --model NAME)\n`);
        }
        else io.stdout(`Run it with: csv-wave run ${dir}\n`);
      }
      done(ExitCode.Ok);
    });
}

function executorFlag(dir: string, flags: InitFlags): { executor?: NonNullable<Parameters<typeof initSession>[1]['executor']> } {
  const named = [flags.cmd, flags.module, flags.executor].filter((value) => value !== undefined).length;
  if (named > 1) throw new WaveError('USAGE', 'Pass one of --cmd, --module or --executor openai|codex|claude');
  if ((flags.model !== undefined || flags.baseUrl !== undefined) && flags.executor === undefined) {
    throw new WaveError('USAGE', '--model and --base-url go with --executor openai, codex or claude');
  }
  if (flags.cmd !== undefined) return { executor: { type: 'command', cmd: flags.cmd } };
  // Relative to the session folder, as `run --module` and session.json take it; recorded absolute.
  if (flags.module !== undefined) return { executor: { type: 'module', module: resolve(dir, flags.module) } };
  if (flags.executor !== undefined) {
    if (!flags.model) throw new WaveError('USAGE', `--executor ${flags.executor} needs --model NAME`);
    return { executor: { type: flags.executor, model: flags.model, ...(flags.baseUrl ? { base_url: flags.baseUrl } : {}) } };
  }
  return {};
}
