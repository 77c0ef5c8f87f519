import type { Command } from 'commander';

/** What `--help` of a command adds after its flags: one or two examples, and its exit codes. */
export interface CommandHelp {
  /** Command lines as a person types them, each with a line saying what it does. */
  examples: ReadonlyArray<readonly [command: string, what: string]>;
  /** The exit codes this command can end with, and what each means here. */
  exitCodes: ReadonlyArray<readonly [code: string, meaning: string]>;
}

/** The exit codes of a run (run, resume, rerun): the README's rule, as each of them applies it. */
const kRunExitCodes: CommandHelp['exitCodes'] = [
  ['0', 'every task completed (or was skipped by a converged GC check)'],
  ['1', 'failed tasks, or tasks skipped for a failure; a halt, a stall, or a session folder that could not be written'],
  ['2', 'invalid input, flag or session.json, or an executor that cannot run'],
  ['3', 'the session is locked by another run, or tasks.csv was edited in a way that cannot be merged'],
  ['130, 143, 129', 'stopped by Ctrl-C, SIGTERM or SIGHUP; resume goes on'],
];

const kReadExitCodes: CommandHelp['exitCodes'] = [
  ['0', 'done'],
  ['2', 'the session cannot be read, or a bad flag'],
];

/**
 * The examples and exit codes of every command, in one place: a test holds each example to
 * its command's own flags, so an example cannot name a flag that does not exist.
 */
export const kCommandHelp: Readonly<Record<string, CommandHelp>> = {
  init: {
    examples: [
      ['csv-wave init ideas --template brainstorm --topic "Cheaper public transport"', 'a brainstorm session; run it with --cmd, --module or --executor'],
      ["csv-wave init batch --template generic --cmd 'echo {id}: {description}'", 'a plain batch: replace the starter rows of batch/tasks.csv with your own'],
    ],
    exitCodes: [
      ['0', 'the session was written'],
      ['2', 'a bad flag, or the folder already holds a session (--force replaces it)'],
    ],
  },
  validate: {
    examples: [
      ['csv-wave validate my-session', 'OK, or every violation as tasks.csv:LINE: message'],
      ['csv-wave validate my-session/tasks.csv --json', 'the same as one JSON document'],
    ],
    exitCodes: [
      ['0', 'tasks.csv follows every rule'],
      ['2', 'violations (each printed with its line), or the session cannot be read'],
    ],
  },
  plan: {
    examples: [['csv-wave plan my-session --json', 'check tasks.csv, fill its wave column and print the waves, without running anything']],
    exitCodes: [
      ['0', 'planned'],
      ['2', 'tasks.csv breaks a rule, or the session cannot be read'],
    ],
  },
  status: {
    examples: [
      ['csv-wave status my-session --only failed,skipped', 'what went wrong, with each error'],
      ['csv-wave status my-session && ./deploy.sh', 'a gate: deploy only when nothing failed'],
    ],
    exitCodes: [
      ['0', 'no task failed, and none was skipped for a failure or a blocking checkpoint'],
      ['1', 'failed tasks, or tasks skipped for a failure or a blocking checkpoint'],
      ['2', 'the session cannot be read, or a bad flag'],
    ],
  },
  explain: {
    examples: [
      ['csv-wave explain my-session', 'one line per task: up to date, will run, from cache, blocked by …, and why'],
      ['csv-wave explain my-session IDEA-002 --no-cache --json', 'only IDEA-002, for a run with --no-cache, as JSON'],
    ],
    exitCodes: [
      ['0', 'explained'],
      ['2', 'no such task, a bad flag, no executor to explain a run of, or the session cannot be read'],
    ],
  },
  estimate: {
    examples: [
      ['csv-wave estimate my-session', 'the tasks the next run would execute or take from the cache, and its tokens and cost as a range'],
      ['csv-wave estimate my-session --batch --max-tokens 400 --json', 'the same for a run with --batch and --max-tokens 400, as JSON'],
    ],
    exitCodes: [
      ['0', 'estimated'],
      ['2', 'a bad flag, no executor to estimate a run of, or the session cannot be read'],
    ],
  },
  graph: {
    examples: [
      ['csv-wave graph my-session > dag.mmd', 'the DAG as Mermaid, waves as ranks, status as colour'],
      ['csv-wave graph my-session --format dot | dot -Tsvg > dag.svg', 'the same for Graphviz'],
    ],
    exitCodes: kReadExitCodes,
  },
  run: {
    examples: [
      ["csv-wave run my-session --cmd 'node work.mjs {id}' --concurrency 8 --retries 3 --timeout 600", 'each row as a command, 8 at once'],
      ['csv-wave run ideas --executor claude --model claude-sonnet-4-5 --max-cost 2', 'an agent per row, stopping at $2'],
      ["csv-wave run my-session --cmd 'node work.mjs {id}' --dry-run", 'print each command the run would start, and run none'],
    ],
    exitCodes: kRunExitCodes,
  },
  resume: {
    examples: [['csv-wave resume my-session', 'go on after a crash, a Ctrl-C or a halt: finished tasks are never run again']],
    exitCodes: kRunExitCodes,
  },
  rerun: {
    examples: [
      ['csv-wave rerun my-session --failed', 'the failed tasks and those skipped because of them'],
      ['csv-wave rerun my-session --wave 2 --dry-run', 'list what --wave 2 would reset, and change nothing'],
    ],
    exitCodes: kRunExitCodes,
  },
  revise: {
    examples: [['csv-wave revise ideas IDEA-002 --feedback "Cost it per rider"', 'a revision task after IDEA-002; its dependents wait for it']],
    exitCodes: [
      ['0', 'the revision was added'],
      ['2', 'no such task, a bad flag, or the session cannot be read'],
      ['3', 'a run holds the session'],
    ],
  },
  cache: {
    examples: [
      ['csv-wave cache my-session --stats', "what the session's result cache holds: entries, bytes, the oldest and newest, the hits"],
      ['csv-wave cache my-session --prune --older-than 30d --max-size 1G', 'remove what no run took for 30 days, then the least recently used beyond 1 GB'],
      ['csv-wave cache my-session --clear', 'remove every entry: the next run executes every task'],
    ],
    exitCodes: [
      ['0', 'done'],
      ['2', 'a bad flag (an age or a size that does not read), or the session cannot be read'],
    ],
  },
  report: {
    examples: [
      ['csv-wave report my-session', 'write my-session/report.html again'],
      ['csv-wave report my-session --json', 'the data the page shows, as JSON'],
    ],
    exitCodes: kReadExitCodes,
  },
  serve: {
    examples: [
      ['csv-wave serve my-session', 'the live report at http://127.0.0.1:8765/'],
      ['csv-wave serve my-session --host 0.0.0.0 --token "$(openssl rand -hex 16)"', 'readable from other machines, with a token'],
    ],
    exitCodes: [
      ['0', 'stopped by Ctrl-C or SIGTERM'],
      ['2', 'a bad flag, a host other than loopback without --token, or the session cannot be read'],
    ],
  },
  worker: {
    examples: [
      ['csv-wave worker --concurrency 16 --secret-file ~/.csv-wave-secret', 'take the jobs of every session run with --backend bullmq on CSV_WAVE_REDIS_URL'],
      ['csv-wave worker --executors command,codex,claude --secret-file ~/.csv-wave-secret', 'also run codex and claude agents (read-only unless --allow-sandbox)'],
    ],
    exitCodes: [
      ['0', 'stopped by a signal after its running jobs finished'],
      ['2', 'a bad flag, no secret, Redis that cannot be reached, or an agent CLI that cannot run (or claude without a login)'],
    ],
  },
};

/** The text `--help` shows after a command's flags. */
export function commandHelpText(help: CommandHelp): string {
  const examples = help.examples.map(([command, what]) => `  $ ${command}\n      ${what}`).join('\n');
  const width = Math.max(...help.exitCodes.map(([code]) => code.length));
  const codes = help.exitCodes.map(([code, meaning]) => `  ${code.padEnd(width)}  ${meaning}`).join('\n');
  return `\nExamples:\n${examples}\n\nExit codes:\n${codes}\n`;
}

/** Adds each command's examples and exit codes to its `--help`. A command without an entry is a bug a test catches. */
export function addCommandHelp(program: Command): void {
  for (const command of program.commands) {
    const help = kCommandHelp[command.name()];
    if (help !== undefined) command.addHelpText('after', commandHelpText(help));
  }
  program.addHelpText('after', '\nEach command has examples and its exit codes in its own --help: csv-wave run --help.\n');
}
