import { Option, type Command } from 'commander';
import type { SessionOverrides } from '../session/session.js';
import { kPipelines, type PipelineName } from '../schema/session.js';

/** `--pipeline`, on every command that reads a session: it wins over session.json. */
export function addPipelineFlag(command: Command): Command {
  return command.addOption(
    new Option(
      '--pipeline <name>',
      'the pipeline whose roles the tasks use (default: session.json\'s; else brainstorm when every role is a brainstorm role, generic otherwise)',
    ).choices(kPipelines),
  );
}

/** The session overrides a command's flags ask for. */
export function sessionOverrides(flags: { pipeline?: PipelineName }): SessionOverrides {
  return flags.pipeline === undefined ? {} : { pipeline: flags.pipeline };
}
