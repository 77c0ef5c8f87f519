/**
 * Model-call benchmark (`npm run bench:model`): a session of 200 independent tasks run with
 * `--executor openai` against a real tiny model (stories260K, served in this process by the
 * test model server: node-llama-cpp, one context, threads 1) at endpoint concurrency 1, 4
 * and 16 (`--concurrency` set to the same). Section `<!-- bench:model -->` of BENCHMARKS.md.
 *
 *   npx tsx scripts/bench/model.ts [--tasks 200] [--endpoint-concurrency 1,4,16] [--sequences 4]
 *                                  [--max-tokens 64] [common options]
 *
 * --quick: 50 tasks, 1 run. The model is found as the tests find it: $CSV_WAVE_TEST_MODEL,
 * else ../shared/models/stories260K.gguf next to the project.
 *
 * The runs are interleaved (1, 4, 16, 1, 4, 16, …) and each figure is the median of its
 * runs. What csv-wave itself costs per request is read two ways: wall time, as the part of
 * the run's own duration (the --json summary's durationMs) when no request was at the
 * server, per request; and CPU, as the csv-wave process's CPU time (GNU time, node start-up
 * and worker threads included) per request, beside the server's (this process's) CPU.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadTestModel, startModelServer, type ChatRecord } from '../../test/helpers/model-server/index.js';
import { tasksCsv } from '../../test/helpers/session-builder.js';
import {
  commonOptions,
  detectRssMethod,
  ensureBuilt,
  fail,
  fixed,
  isMain,
  kCommonOptions,
  kCommonUsage,
  loadAverage,
  machineLines,
  median,
  positiveInteger,
  publish,
  runMain,
  spread,
  timed,
  writeSession,
  type CommonOptions,
  type RssMethod,
  type RunSummaryJson,
} from './lib.js';

interface Options extends CommonOptions {
  tasks: number;
  concurrencies: number[];
  sequences: number;
  maxTokens: number;
}

/** The figures of one run. */
interface RunFigures {
  requests: number;
  durationS: number;
  promptTokens: number;
  completionTokens: number;
  /** Time with at least one request at the server, and with at least one generating. */
  serverBusyS: number;
  generationBusyS: number;
  cliCpuS: number;
  serverCpuS: number;
  maxRssMb: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...kCommonOptions,
      tasks: { type: 'string' },
      'endpoint-concurrency': { type: 'string', default: '1,4,16' },
      sequences: { type: 'string', default: '4' },
      'max-tokens': { type: 'string', default: '64' },
    },
    strict: true,
  });
  const common = commonOptions({ ...values, runs: values.runs ?? (values.quick ? '1' : '3') });
  return {
    ...common,
    tasks: positiveInteger('tasks', values.tasks ?? (common.quick ? '50' : '200')),
    concurrencies: values['endpoint-concurrency'].split(',').map((text) => positiveInteger('endpoint-concurrency', text.trim())),
    sequences: positiveInteger('sequences', values.sequences),
    maxTokens: positiveInteger('max-tokens', values['max-tokens']),
  };
}

/** Total length of the union of intervals [start, end) (ms), in seconds. */
function unionSeconds(intervals: [number, number][]): number {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let [from, to] = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
  for (const [start, end] of sorted) {
    if (start > to) {
      if (to > from) total += to - from;
      [from, to] = [start, end];
    } else to = Math.max(to, end);
  }
  if (to > from) total += to - from;
  return total / 1000;
}

function benchmarkSession(dir: string, tasks: number): string {
  const rows = Array.from({ length: tasks }, (_, i) => {
    const id = `T-${String(i + 1).padStart(3, '0')}`;
    return { id, title: `Story ${i + 1}`, description: `Write one line of a story about animal number ${i + 1}.`, role: 'worker' };
  });
  return writeSession(dir, tasksCsv(rows));
}

async function measure(options: Options, model: NonNullable<Awaited<ReturnType<typeof loadTestModel>>>, concurrency: number, scratch: string, rssMethod: RssMethod, run: number): Promise<RunFigures> {
  const server = await startModelServer({ model, sequences: options.sequences, defaultMaxTokens: options.maxTokens });
  try {
    const dir = benchmarkSession(join(scratch, `c${concurrency}-r${run}`), options.tasks);
    const cpuBefore = process.cpuUsage();
    const result = await timed(
      { node: ['run', dir, '--json', '--executor', 'openai', '--model', 'stories260K', '--base-url', server.url, '--endpoint-concurrency', String(concurrency), '--concurrency', String(concurrency)] },
      { cwd: dir, scratch, rssMethod, env: { OPENAI_API_KEY: '' } },
    );
    const cpu = process.cpuUsage(cpuBefore);
    if (result.status === null || result.status > 1) fail(`the run at endpoint concurrency ${concurrency} exited ${result.status ?? result.signal}: ${result.stderr.slice(-2000)}`);
    const summary = JSON.parse(result.stdout) as RunSummaryJson;
    if ((summary.counts['pending'] ?? 0) > 0) fail(`the run at endpoint concurrency ${concurrency} left tasks pending: ${JSON.stringify(summary.counts)}`);
    const records: ChatRecord[] = server.log.answered();
    if (records.length < options.tasks) fail(`the server answered ${records.length} requests for ${options.tasks} tasks`);
    return {
      requests: records.length,
      durationS: summary.durationMs / 1000,
      promptTokens: records.reduce((sum, record) => sum + (record.usage?.prompt_tokens ?? 0), 0),
      completionTokens: records.reduce((sum, record) => sum + (record.usage?.completion_tokens ?? 0), 0),
      serverBusyS: unionSeconds(records.map((record) => [record.arrivedAt, record.arrivedAt + record.totalMs])),
      generationBusyS: unionSeconds(records.map((record) => [record.arrivedAt + record.waitMs, record.arrivedAt + record.waitMs + record.generationMs])),
      cliCpuS: result.cpuSeconds,
      serverCpuS: (cpu.user + cpu.system) / 1e6,
      maxRssMb: result.maxRssKb / 1024,
    };
  } finally {
    await server.close();
  }
}

async function benchmark(options: Options): Promise<void> {
  ensureBuilt(options.build);
  const model = await loadTestModel();
  if (model === undefined) fail('no model to run against (see the warning above)');
  const loadAtStart = loadAverage();
  const scratch = mkdtempSync(join(options.dir, 'csv-wave-bench-model-'));
  const rssMethod = detectRssMethod(scratch);
  const figures = new Map<number, RunFigures[]>(options.concurrencies.map((concurrency) => [concurrency, []]));
  try {
    for (let run = 1; run <= options.runs; run++) {
      for (const concurrency of options.concurrencies) {
        const one = await measure(options, model, concurrency, scratch, rssMethod, run);
        figures.get(concurrency)!.push(one);
        console.log(`run ${run}, endpoint concurrency ${concurrency}: ${one.requests} requests in ${fixed(one.durationS)} s, csv-wave CPU ${fixed(one.cliCpuS)} s, server CPU ${fixed(one.serverCpuS)} s (load ${loadAverage()})`);
      }
    }
    const lines = [
      '## Model calls against a real tiny model',
      '',
      ...machineLines('scripts/bench/model.ts', 'bench:model', loadAtStart, [
        `- Session: ${options.tasks} independent tasks of the generic pipeline (one wave), \`--executor openai\`, \`--concurrency\` equal to \`--endpoint-concurrency\`; ${options.runs} run(s) per setting, interleaved; medians (min–max)`,
        `- Server: test/helpers/model-server in the benchmark's process: stories260K (260K parameters, vocabulary of 512) through node-llama-cpp 3.21.1 on the CPU, one context of ${options.sequences} sequence(s) of 4,096 tokens, threads 1, answers capped at ${options.maxTokens} tokens, each sequence keeping its evaluated prompt (prompt cache); the JSON-schema grammar as a llama.cpp server applies it`,
      ]),
      '',
      '| endpoint concurrency | requests/s | prompt tokens/s | completion tokens/s | tokens per request (prompt + completion) | server busy | csv-wave alone, wall per request | csv-wave CPU per request | server CPU per request | csv-wave peak RSS |',
      '|---|---|---|---|---|---|---|---|---|---|',
    ];
    for (const [concurrency, runs] of figures) {
      const per = (pick: (run: RunFigures) => number) => runs.map(pick);
      const show = (values: number[], digits = 1) => (values.length > 1 ? `${fixed(median(values), digits)} (${spread(values, digits)})` : fixed(median(values), digits));
      lines.push(
        `| ${concurrency} | ${show(per((run) => run.requests / run.durationS), 2)} | ${show(per((run) => run.promptTokens / run.durationS), 0)} | ${show(per((run) => run.completionTokens / run.durationS), 0)} | ` +
          `${fixed(median(per((run) => run.promptTokens / run.requests)), 0)} + ${fixed(median(per((run) => run.completionTokens / run.requests)), 1)} | ` +
          `${show(per((run) => (100 * run.serverBusyS) / run.durationS), 0)}% of the run (generating ${fixed(median(per((run) => (100 * run.generationBusyS) / run.durationS)), 0)}%) | ` +
          `${show(per((run) => (1000 * Math.max(0, run.durationS - run.serverBusyS)) / run.requests))} ms | ${show(per((run) => (1000 * run.cliCpuS) / run.requests))} ms | ` +
          `${show(per((run) => (1000 * run.serverCpuS) / run.requests))} ms | ${fixed(median(per((run) => run.maxRssMb)), 0)} MB |`,
      );
    }
    lines.push(
      '',
      '"csv-wave alone" is the part of the run (its --json durationMs: from reading tasks.csv to the last write) during which no request was at the server, divided by the requests: the engine\'s own latency per request where nothing overlaps it. With more requests in flight than the server has sequences, requests queue at the server and its busy share nears 100%.',
    );
    publish('model', lines.join('\n'), options);
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

export const kUsage = `npx tsx scripts/bench/model.ts [--tasks 200] [--endpoint-concurrency 1,4,16] [--sequences 4] [--max-tokens 64] ${kCommonUsage}`;

if (isMain(import.meta.url)) runMain('bench:model', kUsage, () => benchmark(parseOptions(process.argv.slice(2))));
