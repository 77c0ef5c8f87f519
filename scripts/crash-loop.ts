/**
 * The crash loop: a session of short sleeping tasks (default 500, in 5 waves) run at
 * concurrency 16, the engine killed with SIGKILL 50 times mid-task (each after a seeded
 * random number of task starts, while a command runs) and resumed each time. Afterwards: no result the engine had accepted is lost, tasks.csv parsed after
 * every kill, and each task ran at most 1 + (kills while it ran) times. Prints the figures
 * and writes them into RELIABILITY.md between `<!-- reliability:crash-loop -->` markers.
 *
 *   npx tsc -p tsconfig.json            # the runs spawn dist/cli/bin.js
 *   npx tsx scripts/crash-loop.ts [--tasks 500] [--kills 50] [--concurrency 16] [--seed S]
 *                                 [--waves 5] [--naps 0.05,0.5] [--settle] [--keep] [--no-write]
 *                                 [--section crash-loop]
 *
 * Each task sleeps a random 10 ms step between the two --naps bounds, in seconds. --section
 * names the RELIABILITY.md section written (to keep the figures of another configuration).
 *
 * --settle waits for the commands a killed run left behind before resuming (by default the
 * next run starts at once, as after a real crash). The core is test/helpers/crash-loop.ts,
 * which `npm test` runs with 150 tasks and 5 kills (test/reliability/crash-loop.test.ts).
 */
import { parseArgs } from 'node:util';
import { crashLoop, describeCrashLoop } from '../test/helpers/crash-loop.js';
import { writeReliabilitySection } from './reliability-md.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '500' },
    kills: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '16' },
    seed: { type: 'string' },
    waves: { type: 'string', default: '5' },
    naps: { type: 'string', default: '0.05,0.5' },
    settle: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    section: { type: 'string', default: 'crash-loop' },
  },
});

function integer(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be an integer ≥ 0, got ${text}`);
  return value;
}

const naps = values.naps.split(',').map(Number);
if (naps.length !== 2 || !naps.every((nap) => Number.isFinite(nap) && nap >= 0) || naps[0]! > naps[1]!) {
  throw new Error(`--naps must be MIN,MAX in seconds, got ${values.naps}`);
}
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 32) : integer('seed', values.seed);
const options = {
  tasks: integer('tasks', values.tasks),
  kills: integer('kills', values.kills),
  concurrency: integer('concurrency', values.concurrency),
  waves: integer('waves', values.waves),
  naps: [naps[0]!, naps[1]!] as [number, number],
  seed,
  settleOrphans: values.settle,
  keep: values.keep,
  log: (line: string) => console.log(line),
};
console.log(`crash loop: ${options.tasks} tasks, ${options.kills} kills, concurrency ${options.concurrency}, seed ${seed}`);
const report = await crashLoop(options);
const lines = describeCrashLoop(report);
console.log(`\n${lines.join('\n')}`);
for (const violation of report.violations) console.log(`VIOLATION: ${violation}`);
if (values.keep) console.log(`session kept in ${report.dir}`);

/** What the default section says about how executions are counted. */
const kExplanation = [
  '',
  'Each kill lands mid-task: after the run logged a seeded random number of task starts,',
  'while one of its commands still runs (counted in starts, not milliseconds, so the kills',
  'land alike on an idle and a loaded machine); the next run',
  '(`resume`) starts at once, as after a real crash, while the commands of the killed run',
  '(in process groups of their own) may still be running as orphans. Every execution logs',
  'its start and end tagged with the run that started it (an environment variable of that',
  'csv-wave process, inherited by its commands), so an orphan counts for the run that started',
  'it. The bound checked per task: executions ≤ 1 + the kills that found it started by the',
  'killed run and its result not yet accepted (journaled); and no run executes a task twice,',
  'or at all once its result was accepted. "Started while an orphan still ran" counts the',
  'executions that overlapped an orphan of the same task: none, as each run ends what the',
  'killed runs left running before it starts a task (see "Orphans of a killed run" above).',
];

const command =
  `npx tsx scripts/crash-loop.ts --tasks ${options.tasks} --kills ${options.kills} --concurrency ${options.concurrency} --seed ${seed}` +
  (options.waves === 5 ? '' : ` --waves ${options.waves}`) +
  (values.naps === '0.05,0.5' ? '' : ` --naps ${values.naps}`) +
  (options.settleOrphans ? ' --settle' : '') +
  (values.section === 'crash-loop' ? '' : ` --section ${values.section}`);
if (!values['no-write']) {
  writeReliabilitySection(
    values.section,
    [
      `## Crash loop: ${options.tasks} tasks, SIGKILL ${options.kills} times mid-task`,
      ...(values.section === 'crash-loop' ? kExplanation : ['', 'The same loop with other settings (see reliability:crash-loop for what is counted).']),
      '',
      `Measured ${new Date().toISOString().slice(0, 10)} with \`${command}\`` +
        ` (after \`npx tsc -p tsconfig.json\`; Node ${process.version}, ${process.platform}):`,
      '',
      ...lines.map((line) => `- ${line}`),
      ...(report.violations.length === 0
        ? ['- result: **pass**: no result lost, tasks.csv parsed after every kill, no task above its bound']
        : ['- result: **FAIL**', ...report.violations.slice(0, 20).map((violation) => `  - ${violation}`)]),
    ].join('\n'),
  );
  console.log(`RELIABILITY.md updated (section reliability:${values.section})`);
}
process.exitCode = report.violations.length === 0 ? 0 : 1;
