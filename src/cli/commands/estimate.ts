import type { Command } from 'commander';
import { explainLine } from '../../cache/next-run.js';
import { InputRenderer } from '../../cache/rendered-input.js';
import { estimateLines, estimateRun, type RunEstimate } from '../../cache/run-estimate.js';
import { readUsageLines } from '../../knowledge/usage.js';
import { previewRun, type RunPreview } from '../../run/prepare-run.js';
import { ExitCode, printJson, type CliIo } from '../io.js';
import { sessionOverrides } from '../pipeline-flag.js';
import { addRunFlags, runOptionsFromFlags, type RunFlags } from '../run-flags.js';

export function registerEstimate(program: Command, io: CliIo, done: (code: number) => void): void {
  addRunFlags(
    program
      .command('estimate')
      .description('the tasks the next run would execute, those the cache would answer, and the tokens and cost expected, as a range with its assumptions; writes nothing')
      .argument('<session>', 'session folder, or the path of its tasks.csv'),
    'print {"tasks": {run, after, cached, blocked, kept}, "model", "known"?, "after"?, "total"?: {tasks, prompt_tokens, completion_tokens, cost_usd}, "cached"?, "chars_per_token", "assumptions"}',
  ).action(async (sessionPath: string, flags: RunFlags) => {
    const preview = previewRun(sessionPath, { ...runOptionsFromFlags(flags), ...sessionOverrides(flags) }, (message) => io.stderr(`warning: ${message}\n`));
    const estimate = estimateOf(preview);
    if (flags.json) printJson(io, estimate);
    else io.stdout(`${estimateLines(estimate).join('\n')}\n`);
    done(ExitCode.Ok);
  });
}

/** The estimate of the next run previewRun worked out: its plan, the session's history of usage.ndjson, the run's prices. */
export function estimateOf(preview: RunPreview): RunEstimate {
  const { settings } = preview;
  const roles = new Map(preview.rows.map((row) => [row.id, row.role]));
  return estimateRun({
    plan: preview.plan,
    executor: settings.executor,
    history: readUsageLines(preview.dir),
    roleOf: (id) => roles.get(id),
    pricing: settings.pricing,
    batch: settings.batch,
    maxTokens: settings.executor.type === 'openai' ? settings.executor.maxTokens : undefined,
    renderer: new InputRenderer(),
  });
}

/**
 * `run --dry-run`: each command or prompt the run would send, on stdout, as `parallel
 * --dry-run` prints its commands (a prompt under a `#` line naming its task; the system
 * prompt once); then the estimate on stderr. With `--json`, one document with both.
 * Nothing runs and nothing is written.
 */
export function printDryRun(sessionPath: string, flags: RunFlags, io: CliIo): void {
  const preview = previewRun(sessionPath, { ...runOptionsFromFlags(flags), ...sessionOverrides(flags) }, (message) => io.stderr(`warning: ${message}\n`));
  const renderer = new InputRenderer();
  const sent = preview.plan.tasks.flatMap((task) => {
    const next = task.next;
    if (next.step !== 'run') return [];
    const attempt = preview.plan.attempts.get(task.id);
    // An interactive task decides in csv-wave itself; a worktree task's input is its checkout.
    const rendered = attempt === undefined ? undefined : renderer.render(attempt);
    return [{ id: task.id, role: task.role, after: next.after, rendered }];
  });
  const estimate = estimateOf(preview);
  if (flags.json) {
    printJson(io, { sent: sent.map(({ id, role, after, rendered }) => ({ id, role, after, ...(rendered ?? { kind: 'none' }) })), estimate });
    return;
  }
  let system: string | undefined;
  for (const { id, role, after, rendered } of sent) {
    const waits = after.length > 0 ? `, after ${after.join(', ')}: shown with what is known now` : '';
    if (rendered === undefined) io.stdout(`# ${id} (${role}): nothing is sent: ${explainLine(preview.plan.tasks.find((task) => task.id === id)!)}\n`);
    else if (rendered.kind === 'error') io.stdout(`# ${id} (${role}) would fail: ${rendered.text}\n`);
    else if (rendered.kind === 'prompt') {
      if (rendered.system !== system) {
        system = rendered.system;
        io.stdout(`# the system prompt of the prompts below:\n${system}\n\n`);
      }
      io.stdout(`# prompt of ${id} (${role})${waits}\n${rendered.text}\n\n`);
    } else io.stdout(`${waits === '' ? '' : `# ${id}${waits}\n`}${rendered.text}\n`);
  }
  io.stderr(`${estimateLines(estimate).join('\n')}\n`);
}
