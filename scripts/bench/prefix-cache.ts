/**
 * Prompt-cache benchmark (`npm run bench:prefix`): the share of the prompt tokens a server's
 * prompt cache serves, for a session of tasks of one role, with the prompt layout of an
 * earlier commit ("before": the task's own lines came early in the template) and with this
 * one's ("after": what the role's tasks share comes first). Section `<!-- bench:prefix -->`
 * of BENCHMARKS.md.
 *
 *   npx tsx scripts/bench/prefix-cache.ts [--tasks 200] [--sequences 4] [--max-tokens 64]
 *                                         [--before-commit 09a98b7] [common options]
 *
 * --quick: 40 tasks. The server is test/helpers/model-server in this process: stories260K
 * through node-llama-cpp, whose sequences keep what they evaluated and reuse the common
 * prefix of the next prompt, as llama.cpp's server does; it reports the reused tokens as
 * `prompt_tokens_details.cached_tokens`. Runs go ABBA (before, after, after, before, …).
 *
 * The goal (issue 27, goal 6): the cached share of the prompt tokens is at least the share of
 * the prompt that the tasks have in common, less 5 points. That share is measured on the
 * prompts themselves: each task's first request is rendered as the executor renders it and
 * tokenized by the model; its shared prefix is what it has in common, token for token, with
 * every other task of the run. The rendered prompts must count the tokens the server counted,
 * or the benchmark fails.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Token } from 'node-llama-cpp';
import { RolePrompts, systemPrompt } from '../../src/executors/openai/prompt.js';
import { kNoPreviousContext } from '../../src/graph/prev-context.js';
import { loadTestModel, renderChat, startModelServer, type TestModel } from '../../test/helpers/model-server/index.js';
import { tasksCsv } from '../../test/helpers/session-builder.js';
import { commonOptions, ensureBuilt, fail, fixed, isMain, kCommonOptions, kCommonUsage, kRoot, loadAverage, machineLines, positiveInteger, publish, runMain, type CommonOptions } from './lib.js';

interface Options extends CommonOptions {
  tasks: number;
  sequences: number;
  maxTokens: number;
  beforeCommit: string;
}

type Layout = 'before' | 'after';

/** The figures of one run, over the tasks' first requests (a repair request repeats its own first one). */
interface RunFigures {
  layout: Layout;
  requests: number;
  repairs: number;
  promptTokens: number;
  cachedTokens: number;
  /** Tokens of the prompts' shared prefix, summed over the requests. */
  sharedTokens: number;
  seconds: number;
}

const kTopic = 'A picture book of short animal stories for children, one story per page';
const kRole = 'writer';

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...kCommonOptions,
      tasks: { type: 'string' },
      sequences: { type: 'string', default: '4' },
      'max-tokens': { type: 'string', default: '64' },
      'before-commit': { type: 'string', default: '09a98b7' },
    },
    strict: true,
  });
  const common = commonOptions({ ...values, runs: values.runs ?? '2' });
  return {
    ...common,
    tasks: positiveInteger('tasks', values.tasks ?? (common.quick ? '40' : '200')),
    sequences: positiveInteger('sequences', values.sequences),
    maxTokens: positiveInteger('max-tokens', values['max-tokens']),
    beforeCommit: values['before-commit'],
  };
}

function rows(tasks: number): Record<string, string>[] {
  return Array.from({ length: tasks }, (_, i) => {
    const id = `T-${String(i + 1).padStart(3, '0')}`;
    return { id, title: `Story ${i + 1}`, description: `Write one line of a story about animal number ${i + 1}.`, role: kRole };
  });
}

/** A folder holding the generic pipeline's default template as the commit `commit` had it. */
function templatesOf(commit: string, scratch: string): string {
  const shown = spawnSync('git', ['show', `${commit}:prompts/generic/default.md`], { cwd: kRoot, encoding: 'utf8' });
  if (shown.status !== 0) fail(`git show ${commit}:prompts/generic/default.md failed: ${shown.stderr.trim()} (--before-commit names the commit of the "before" layout)`);
  const dir = join(scratch, 'prompts-before');
  mkdirSync(join(dir, 'generic'), { recursive: true });
  writeFileSync(join(dir, 'generic', 'default.md'), shown.stdout);
  return dir;
}

/**
 * The tokens of each task's first request as the server reads it: the system prompt and the
 * role's template filled as the executor fills it (one wave: the board and the wisdom are empty
 * at its start, no task has dependencies or context_from), in the test server's chat format.
 */
function promptTokens(model: TestModel, promptsDir: string | undefined, sessionRows: readonly Record<string, string>[]): Map<string, Token[]> {
  const prompts = new RolePrompts(promptsDir);
  const context = { pipeline: 'generic', topic: kTopic, discoveries: '', upstream: '', wisdom: '' };
  const byTask = new Map<string, Token[]>();
  for (const row of sessionRows) {
    const cells = { deps: '', context_from: '', exec_mode: 'csv-wave', ...row };
    const user = prompts.render({ id: row['id']!, wave: 1, attempt: 1, session: '', row: cells, prev_context: kNoPreviousContext, upstream: { deps: [], wisdom: {}, warnings: [] } }, context);
    const text = renderChat([
      { role: 'system', content: systemPrompt('generic') },
      { role: 'user', content: user },
    ]);
    byTask.set(row['id']!, model.model.tokenize(text));
  }
  return byTask;
}

/** The length of the prefix every token list shares. */
function sharedPrefix(lists: readonly Token[][]): number {
  const first = lists[0]!;
  let shared = first.length;
  for (const list of lists) {
    let n = 0;
    while (n < shared && n < list.length && list[n] === first[n]) n++;
    shared = n;
  }
  return shared;
}

interface RunSessionFn {
  (dir: string, options: Record<string, unknown>): Promise<{ counts: Record<string, number>; durationMs: number }>;
}

async function measure(options: Options, model: TestModel, runSession: RunSessionFn, layout: Layout, promptsDir: string | undefined, dir: string): Promise<RunFigures> {
  const sessionRows = rows(options.tasks);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tasks.csv'), tasksCsv(sessionRows));
  writeFileSync(join(dir, 'session.json'), `${JSON.stringify({ pipeline: 'generic', topic: kTopic })}\n`);
  const tokens = promptTokens(model, promptsDir, sessionRows);
  const shared = sharedPrefix([...tokens.values()]);
  const server = await startModelServer({ model, sequences: options.sequences, defaultMaxTokens: options.maxTokens });
  try {
    const summary = await runSession(dir, {
      executor: { type: 'openai', model: 'stories260K', baseUrl: server.url, maxTokens: options.maxTokens, ...(promptsDir === undefined ? {} : { promptsDir }) },
      concurrency: options.sequences,
      endpointConcurrency: options.sequences,
    });
    if ((summary.counts['pending'] ?? 0) > 0) fail(`the ${layout} run left tasks pending: ${JSON.stringify(summary.counts)}`);
    const answered = server.log.answered().filter((record) => record.status === 200 && record.usage !== undefined);
    const firsts = answered.filter((record) => !record.repair);
    if (firsts.length < options.tasks) fail(`the server answered ${firsts.length} first requests for ${options.tasks} tasks`);
    let promptTotal = 0;
    let cachedTotal = 0;
    for (const record of firsts) {
      const expected = record.task === undefined ? undefined : tokens.get(record.task);
      if (expected === undefined) fail(`a request of no known task (${record.task ?? 'no Task: line'})`);
      // The benchmark's own rendering must be the prompt the server read, else its shared share means nothing.
      if (expected.length !== record.usage!.prompt_tokens) fail(`task ${record.task}: the server counted ${record.usage!.prompt_tokens} prompt tokens, the benchmark's rendering ${expected.length}`);
      promptTotal += record.usage!.prompt_tokens;
      cachedTotal += record.usage!.cached_tokens;
    }
    return {
      layout,
      requests: firsts.length,
      repairs: answered.length - firsts.length,
      promptTokens: promptTotal,
      cachedTokens: cachedTotal,
      sharedTokens: shared * firsts.length,
      seconds: summary.durationMs / 1000,
    };
  } finally {
    await server.close();
  }
}

const percent = (part: number, whole: number) => (whole === 0 ? 0 : (100 * part) / whole);

async function benchmark(options: Options): Promise<void> {
  ensureBuilt(options.build);
  const model = await loadTestModel();
  if (model === undefined) fail('no model to run against (see the warning above)');
  const { runSession } = (await import(pathToFileURL(join(kRoot, 'dist', 'index.js')).href)) as { runSession: RunSessionFn };
  const loadAtStart = loadAverage();
  const scratch = mkdtempSync(join(options.dir, 'csv-wave-bench-prefix-'));
  const before = templatesOf(options.beforeCommit, scratch);
  const figures: RunFigures[] = [];
  try {
    for (let round = 1; round <= options.runs; round++) {
      // ABBA: the order turns each round, so that a drift of the machine's load falls on both.
      const order: Layout[] = round % 2 === 1 ? ['before', 'after'] : ['after', 'before'];
      for (const layout of order) {
        const one = await measure(options, model, runSession, layout, layout === 'before' ? before : undefined, join(scratch, `${layout}-${round}`));
        figures.push(one);
        console.log(
          `round ${round}, ${layout}: ${fixed(percent(one.cachedTokens, one.promptTokens), 1)}% of ${one.promptTokens} prompt tokens cached; ` +
            `shared prefix ${fixed(percent(one.sharedTokens, one.promptTokens), 1)}%; ${one.repairs} repair(s); ${fixed(one.seconds)} s (load ${loadAverage()})`,
        );
      }
    }
    const loadAtEnd = loadAverage();
    const of = (layout: Layout) => figures.filter((run) => run.layout === layout);
    const sum = (runs: RunFigures[], pick: (run: RunFigures) => number) => runs.reduce((total, run) => total + pick(run), 0);
    const row = (layout: Layout) => {
      const runs = of(layout);
      const prompt = sum(runs, (run) => run.promptTokens);
      const cached = percent(sum(runs, (run) => run.cachedTokens), prompt);
      const shared = percent(sum(runs, (run) => run.sharedTokens), prompt);
      const met = cached >= shared - 5;
      return {
        cached,
        shared,
        met,
        line:
          `| ${layout === 'before' ? `before (${options.beforeCommit}'s template)` : 'after (this commit)'} | ${runs.length} | ${fixed(prompt / sum(runs, (run) => run.requests), 0)} | ` +
          `${fixed(shared, 1)}% | ${fixed(cached, 1)}% | ${sum(runs, (run) => run.repairs)} | ${runs.map((run) => fixed(run.seconds, 0)).join(', ')} s |`,
      };
    };
    const rowBefore = row('before');
    const rowAfter = row('after');
    const loaded = Math.max(Number(loadAtStart), Number(loadAtEnd)) > 2;
    const lines = [
      '## Prompt layout and the prompt cache',
      '',
      ...machineLines('scripts/bench/prefix-cache.ts', 'bench:prefix', loadAtStart, [
        `- Session: ${options.tasks} tasks of one role (\`${kRole}\`) of the generic pipeline, one wave, a topic; \`--executor openai --max-tokens ${options.maxTokens}\`, \`--concurrency\` and \`--endpoint-concurrency\` ${options.sequences}; run in-process through runSession of dist/`,
        `- Server: test/helpers/model-server in the benchmark's process: stories260K through node-llama-cpp on the CPU, ${options.sequences} sequence(s) of 4,096 tokens, threads 1. A sequence keeps what it evaluated; a request takes the free sequence that shares the longest start with its prompt and evaluates only the rest, as llama.cpp's server does. It reports the reused tokens as \`prompt_tokens_details.cached_tokens\``,
        `- Before: the generic pipeline's template of commit ${options.beforeCommit} (given as the executor's promptsDir), whose third line is the task's id and title; after: this commit's built-in template. Both run on this commit's engine. ${options.runs} round(s), ABBA`,
      ]),
      '',
      '| layout | runs | prompt tokens per request | shared prefix of the prompt | cached share of the prompt tokens | repair requests (not counted) | run times |',
      '|---|---|---|---|---|---|---|',
      rowBefore.line,
      rowAfter.line,
      '',
      `Goal (issue 27, goal 6): the cached share is at least the shared prefix's share, less 5 points. After: ${fixed(rowAfter.cached, 1)}% cached against ${fixed(rowAfter.shared, 1)}% shared: ` +
        `${rowAfter.met ? 'met in this run' : 'not met'}${loaded ? `; the load average was above 2 (${loadAtStart} at the start, ${loadAtEnd} at the end), so the figure does not count as met` : ''}. ` +
        `Before, ${fixed(rowBefore.cached, 1)}% of the prompt tokens were cached.`,
      '',
      'The shared prefix is what every task\'s first request has in common with all the others, token for token, as the model tokenizes the prompt the executor renders (the benchmark checks that it counts the tokens the server counted). The cached share is over the same first requests. A sequence\'s first request finds nothing cached, so with S sequences the best share is about (N − S) / N of the shared one. The share does not depend on the machine\'s load; the run times do.',
    ];
    publish('prefix', lines.join('\n'), options);
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

export const kUsage = `npx tsx scripts/bench/prefix-cache.ts [--tasks 200] [--sequences 4] [--max-tokens 64] [--before-commit 09a98b7] ${kCommonUsage}`;

if (isMain(import.meta.url)) runMain('bench:prefix', kUsage, () => benchmark(parseOptions(process.argv.slice(2))));
