/**
 * The crash loop shared by `scripts/crash-loop.ts` (500 tasks, 50 kills) and the test
 * (test/reliability/crash-loop.test.ts): a session of short sleeping tasks in waves, its
 * run killed with SIGKILL mid-task (after a seeded number of task starts) and resumed
 * each time, then checked.
 *
 * Every execution of a task command logs `<id> <run> start` and `<id> <run> end`, tagged
 * with the run that started it (an environment variable of that csv-wave process, which
 * its commands inherit). So an execution is counted for the run that started it even
 * when the run was killed and the command, in its own process group, went on running
 * as an orphan, possibly beside the next run's execution of the same task.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { readJournal, replayJournal } from '../../src/session/journal.js';
import { readTaggedLog, taggedLogCommands, type LoggedEvent } from './runs-log.js';
import { sleep, spawnCliWith, waitFor } from './spawn-cli.js';
import { buildSession } from './session-builder.js';
import { mulberry32 } from '../../scripts/gen-dag.js';
import { sessionCommands } from '../../src/backend/local/child-groups.js';

export interface CrashLoopOptions {
  /** Tasks in the session. */
  tasks: number;
  /** Waves they are spread over; each task after wave 1 depends on 1 to 3 tasks of the wave before. @default 5 */
  waves?: number;
  /** SIGKILLs to land before the last, unkilled resume. */
  kills: number;
  /** `--concurrency` of every run. */
  concurrency: number;
  /** Seed of the PRNG that draws the session and the number of task starts before each kill. */
  seed: number;
  /** A task sleeps a random multiple of 10 ms in this range, in seconds. @default [0.02, 0.2] */
  naps?: [number, number];
  /**
   * Wait until the commands a killed run left behind have ended before resuming. Off,
   * the next run starts at once, as after a real crash, and may run a task beside its orphan.
   * @default false
   */
  settleOrphans?: boolean;
  /** Told a line per run. */
  log?: (line: string) => void;
  /** Keep the session folder afterwards. @default false */
  keep?: boolean;
}

export interface CrashLoopReport {
  seed: number;
  tasks: number;
  waves: number;
  concurrency: number;
  /** SIGKILLs that landed while a run was going. */
  kills: number;
  /** Runs started: the killed ones and the last. */
  runs: number;
  /** Times tasks.csv was parsed (and matched the task list) after a kill. */
  parses: number;
  /** Executions of task commands in all. */
  executions: number;
  /** How many tasks ran how many times: executions → tasks. */
  histogram: Map<number, number>;
  maxExecutions: number;
  /** 1 + the kills that found the task started and its result not accepted, for the task that ran most. */
  boundOfMax: number;
  /** The largest bound of any task. */
  maxBound: number;
  /** Executions by killed runs whose result the run had not accepted: the work the kills cost. */
  interrupted: number;
  /** Executions that started while an earlier execution of the same task (an orphan) still ran. */
  overlaps: number;
  /** Everything that broke a promise: lost results, unparsable tasks.csv, bounds exceeded, … Empty is a pass. */
  violations: string[];
  durationMs: number;
  dir: string;
}

interface CrashSession {
  dir: string;
  ids: string[];
}

/** `tasks` tasks in `waves` waves, each after wave 1 depending on 1 to 3 tasks of the wave before; a `nap` column. */
export function crashSession(random: () => number, tasks: number, waves: number, naps: [number, number]): CrashSession {
  const ids: string[] = [];
  const lines = ['id,title,description,role,deps,context_from,exec_mode,nap'];
  const width = String(tasks - 1).length;
  const perWave = Math.ceil(tasks / waves);
  const steps = Math.round((naps[1] - naps[0]) / 0.01);
  for (let index = 0; index < tasks; index++) {
    const wave = Math.floor(index / perWave);
    const id = `t${String(index).padStart(width, '0')}`;
    const deps = new Set<string>();
    if (wave > 0) {
      const count = 1 + Math.floor(random() * 3);
      for (let d = 0; d < count; d++) deps.add(ids[(wave - 1) * perWave + Math.floor(random() * perWave)]!);
    }
    const nap = naps[0] + Math.floor(random() * (steps + 1)) * 0.01;
    lines.push(`"${id}","Task ${id}","do ${id}","worker","${[...deps].join(';')}","","csv-wave","${nap.toFixed(2)}"`);
    ids.push(id);
  }
  const dir = buildSession(`${lines.join('\n')}\n`, { session: JSON.stringify({ pipeline: 'generic' }) });
  return { dir, ids };
}

/** The session as the next run will see it: tasks.csv (which must parse) with the journal applied. */
function recoveredState(dir: string): { ids: string[]; completed: Map<string, string> } {
  const rows = parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows;
  replayJournal(rows, readJournal(dir));
  return {
    ids: rows.map((row) => row.id),
    completed: new Map(rows.filter((row) => row.status === 'completed').map((row) => [row.id, row.findings])),
  };
}

/** True once `run` logged at least `k` starts and one of its executions has logged no end yet. */
function midTask(events: LoggedEvent[], run: number, k: number): boolean {
  let starts = 0;
  let open = 0;
  for (const event of events) {
    if (event.run !== run) continue;
    if (event.phase === 'start') {
      starts++;
      open++;
    } else {
      open--;
    }
  }
  return starts >= k && open > 0;
}

/**
 * Until no command of the session runs any more: orphans of a killed run end by themselves
 * or are ended by the next run (it kills what a dead run left behind).
 */
async function waitForOrphans(dir: string, limitMs: number): Promise<void> {
  await waitFor(() => sessionCommands(dir).length === 0, 'the commands of killed runs to end', limitMs);
}

/**
 * For --settle only (scripts/crash-loop.ts): a command forked just before its run was
 * killed may not have logged its start yet, nor be visible as a command of the session
 * (before exec it carries the killed run's environment), and nothing announces it; so
 * this waits until the log stops growing. The tests resume at once and never use it.
 */
async function waitForQuietLog(log: string): Promise<void> {
  const size = () => (existsSync(log) ? statSync(log).size : 0);
  for (let last = -1; size() !== last; ) {
    last = size();
    await sleep(150);
  }
}

/** Runs the crash loop and checks it; the report's `violations` list what went wrong. */
export async function crashLoop(options: CrashLoopOptions): Promise<CrashLoopReport> {
  const started = performance.now();
  const waves = options.waves ?? 5;
  const naps = options.naps ?? [0.02, 0.2];
  const say = options.log ?? (() => {});
  const random = mulberry32(options.seed); // seeded, so that a failure can be replayed
  const { dir, ids } = crashSession(random, options.tasks, waves, naps);
  const log = join(dir, 'runs.log');
  const tag = taggedLogCommands();
  const cmd = `${tag.start}; sleep {nap}; ${tag.end}; echo "done $CSV_WAVE_TASK_ID"`;
  const violations: string[] = [];

  /** Results accepted (in tasks.csv or the journal) before each run started, and when each killed run died. */
  const acceptedBefore = new Map<number, Set<string>>();
  const acceptedAfterKill = new Map<number, Set<string>>();
  let accepted = new Map<string, string>();
  let kills = 0;
  let parses = 0;
  let run = 0;
  let lastRunKilled = false;
  let finished = false;

  while (kills < options.kills) {
    run++;
    acceptedBefore.set(run, new Set(accepted.keys()));
    // Eager runs rewrite tasks.csv at each wave end while later tasks run, so that some
    // kills find tasks shown in_progress in the file too.
    const schedule = run % 2 === 0 ? 'eager' : 'waves';
    const child = spawnCliWith(
      { env: { CSV_WAVE_TEST_RUN: String(run) } },
      run === 1 ? 'run' : 'resume',
      dir,
      '--cmd',
      cmd,
      '--concurrency',
      String(options.concurrency),
      '--schedule',
      schedule,
    );
    let ended = false;
    void child.exited.then(() => {
      ended = true;
    });
    // The kill lands mid-task: after this run logged the start of its k-th execution (k
    // drawn from the seed, spread so that the kills left cover the work left) and while at
    // least one of its executions has logged no end, so that a command the engine has not
    // yet heard back from is cut short. Counting starts rather than milliseconds keeps the
    // kill in the same place on an idle and on a loaded machine.
    let left = 0;
    for (const id of ids) if (!accepted.has(id)) left++;
    const killsLeft = options.kills - kills;
    const span = Math.max(1, Math.min(left - options.concurrency, Math.floor((2 * left) / (killsLeft + 1))));
    const k = 1 + Math.floor(random() * span);
    // The log is read and the run killed with no wait in between: for the execution seen
    // running to be accepted first, it would have to end and be journaled in that instant.
    await waitFor(() => ended || midTask(readTaggedLog(log), run, k), `run ${run} to start ${k} executions`);
    const signalled = child.child.kill('SIGKILL');
    const exit = await child.exited;

    if (exit.signal !== 'SIGKILL' || !signalled) {
      // The run ended before the kill: it must have finished everything.
      if (exit.code !== 0) violations.push(`run ${run} ended by itself with exit ${exit.code}: ${exit.stderr.trim()}`);
      lastRunKilled = false;
      finished = true;
      say(`run ${run}: finished before its kill`);
      break;
    }
    kills++;
    lastRunKilled = true;
    if (options.settleOrphans) {
      await waitForOrphans(dir, 30_000);
      await waitForQuietLog(log);
    }

    let state: ReturnType<typeof recoveredState>;
    try {
      state = recoveredState(dir);
      parses++;
    } catch (error) {
      violations.push(`after kill ${kills}: tasks.csv does not parse: ${(error as Error).message}`);
      break;
    }
    if (state.ids.join() !== ids.join()) violations.push(`after kill ${kills}: tasks.csv lists other tasks`);
    for (const [id, findings] of accepted) {
      if (state.completed.get(id) !== findings) violations.push(`after kill ${kills}: the result of ${id} was lost`);
    }
    for (const [id, findings] of state.completed) {
      if (findings !== `done ${id}`) violations.push(`after kill ${kills}: ${id} has findings ${JSON.stringify(findings)}`);
    }
    accepted = state.completed;
    acceptedAfterKill.set(run, new Set(accepted.keys()));
    say(`run ${run}: killed (kill ${kills}/${options.kills}); ${accepted.size}/${ids.length} results accepted`);
  }

  if (!finished) {
    run++;
    acceptedBefore.set(run, new Set(accepted.keys()));
    const last = await spawnCliWith(
      { env: { CSV_WAVE_TEST_RUN: String(run) } },
      'resume',
      dir,
      '--cmd',
      cmd,
      '--concurrency',
      String(options.concurrency),
    ).exited;
    if (last.code !== 0) violations.push(`the last resume exited ${last.code}: ${last.stderr.trim()}`);
    if (lastRunKilled && !/stale lock/.test(last.stderr)) violations.push('the last resume did not take over the stale lock');
    say(`run ${run}: resumed to the end (exit ${last.code})`);
  }
  // The last run ended what killed runs left before it started a task, and waited for its
  // own commands: nothing of the session should still run (or write to the log).
  await waitForOrphans(dir, 30_000);

  // The end state: every task completed once in tasks.csv, nothing left behind.
  const rows = parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows;
  if (rows.map((row) => row.id).join() !== ids.join()) violations.push('the final tasks.csv lists other tasks');
  for (const row of rows) {
    if (row.status !== 'completed' || row.findings !== `done ${row.id}`) {
      violations.push(`${row.id} ended ${row.status} with findings ${JSON.stringify(row.findings)}`);
    }
  }
  if (readJournal(dir).length > 0) violations.push('the journal was not emptied by the last run');
  if (existsSync(join(dir, '.csv-wave', 'lock'))) violations.push('the lock was left behind');
  const temporaries = readdirSync(dir).filter((name) => name.endsWith('.tmp'));
  if (temporaries.length > 0) violations.push(`temporary files left: ${temporaries.join(', ')}`);

  // Executions, by task and by run.
  const events = readTaggedLog(log);
  const byTask = new Map<string, Map<number, number>>(ids.map((id) => [id, new Map()]));
  // Executions still running, by task and by the run that started them. A run ends what
  // earlier runs left running before it starts any task, so the first event of a later run
  // closes every execution of the runs before it that never logged its end.
  const running = new Map<string, Map<number, number>>();
  let latestRun = 0;
  let overlaps = 0;
  for (const event of events) {
    const runs = byTask.get(event.id);
    if (!runs) {
      violations.push(`an unknown task ${event.id} ran`);
      continue;
    }
    if (event.run > latestRun) {
      latestRun = event.run;
      for (const open of running.values()) for (const run of [...open.keys()]) if (run < latestRun) open.delete(run);
    }
    const open = running.get(event.id) ?? new Map<number, number>();
    running.set(event.id, open);
    if (event.phase === 'end') {
      const left = (open.get(event.run) ?? 1) - 1;
      if (left > 0) open.set(event.run, left);
      else open.delete(event.run);
      continue;
    }
    if (open.size > 0) overlaps++;
    open.set(event.run, (open.get(event.run) ?? 0) + 1);
    runs.set(event.run, (runs.get(event.run) ?? 0) + 1);
  }
  const histogram = new Map<number, number>();
  let executions = 0;
  let maxExecutions = 0;
  let boundOfMax = 1;
  let maxBound = 1;
  let interrupted = 0;
  for (const [id, runs] of byTask) {
    let count = 0;
    let inFlightKills = 0;
    for (const [by, times] of runs) {
      count += times;
      // No task runs twice in one run (these never fail, so never retry) …
      if (times > 1) violations.push(`${id} ran ${times} times in run ${by}`);
      // … nor in a run that started with its result accepted: finished work is never redone.
      if (acceptedBefore.get(by)?.has(id)) violations.push(`${id} ran again in run ${by}, its result accepted before`);
      const afterKill = acceptedAfterKill.get(by);
      if (afterKill && !afterKill.has(id)) {
        inFlightKills++;
        interrupted += times;
      }
    }
    const bound = 1 + inFlightKills;
    if (count === 0) violations.push(`${id} never ran`);
    if (count > bound) violations.push(`${id} ran ${count} times; bound 1 + ${inFlightKills} kills while it ran`);
    executions += count;
    histogram.set(count, (histogram.get(count) ?? 0) + 1);
    maxBound = Math.max(maxBound, bound);
    if (count > maxExecutions) {
      maxExecutions = count;
      boundOfMax = bound;
    }
  }

  if (!options.keep) rmSync(dir, { recursive: true, force: true });
  return {
    seed: options.seed,
    tasks: ids.length,
    waves,
    concurrency: options.concurrency,
    kills,
    runs: run,
    parses,
    executions,
    histogram: new Map([...histogram].sort(([a], [b]) => a - b)),
    maxExecutions,
    boundOfMax,
    maxBound,
    interrupted,
    overlaps,
    violations,
    durationMs: performance.now() - started,
    dir,
  };
}

/** The report as the lines the script prints and RELIABILITY.md shows. */
export function describeCrashLoop(report: CrashLoopReport): string[] {
  const histogram = [...report.histogram].map(([times, tasks]) => `${times}×: ${tasks}`).join(', ');
  return [
    `kills: ${report.kills} SIGKILLs, ${report.runs} runs (the last one not killed); tasks.csv parsed after every kill: ${report.parses}/${report.kills}`,
    `tasks: ${report.tasks} in ${report.waves} waves, concurrency ${report.concurrency}, seed ${report.seed}`,
    `executions: ${report.executions} (histogram, executions per task: ${histogram})`,
    `max executions per task: ${report.maxExecutions}, bound for that task ${report.boundOfMax} (1 + kills while it ran); largest bound of any task ${report.maxBound}`,
    `executions cut short by a kill (orphans): ${report.interrupted}; of all executions, ${report.overlaps} started while an orphan of the same task still ran`,
    `lost results: ${report.violations.filter((v) => v.includes('was lost')).length}; violations: ${report.violations.length}`,
    `duration: ${(report.durationMs / 1000).toFixed(1)} s`,
  ];
}
