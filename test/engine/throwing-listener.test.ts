import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { RunEmitter, type RunEvents } from '../../src/events/events.js';
import { readJournal } from '../../src/session/journal.js';
// The package's runSession: report.html is attached there, as the CLI attaches it.
import { runSession } from '../../src/index.js';
import { expectTasksCsvValid } from '../hostile/helpers.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

/** Two waves of three and two tasks, each printing its description. */
const kRows = [
  { id: 'A', description: 'alpha', role: 'r' },
  { id: 'B', description: 'beta', role: 'r' },
  { id: 'C', description: 'gamma', role: 'r' },
  { id: 'D', description: 'delta', role: 'r', deps: 'A;B' },
  { id: 'E', description: 'epsilon', role: 'r', deps: 'C' },
];
const kIds = kRows.map((row) => row.id);
const kExecutor = { type: 'command', cmd: 'printf %s {description}' } as const;

/**
 * The run's promise, rejected at the first unhandled rejection in the process meanwhile:
 * a listener's error that escapes the engine is a failure of the test at once, not a hang
 * until the test's timeout.
 */
function settledOrEscaped<T>(run: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const escaped = (reason: unknown) => reject(new Error(`unhandled rejection during the run: ${String(reason)}`));
    process.on('unhandledRejection', escaped);
    run.then(resolve, reject).finally(() => process.off('unhandledRejection', escaped));
  });
}

/** An emitter whose `name` listener fails once (the first event) with `fail`, and what the run told. */
function emitterFailingOnce<K extends keyof RunEvents>(name: K, fail: () => unknown) {
  const events = new RunEmitter();
  let failed = false;
  // Registered first, as a library user's listener is, before the engine's own.
  events.on(name, ((..._args: RunEvents[K]) => {
    if (failed) return undefined;
    failed = true;
    return fail();
  }) as never);
  const warnings: string[] = [];
  const done: string[] = [];
  events.on('warning', (message) => warnings.push(message));
  // A listener registered after the failing one still hears every event.
  events.on('task:done', (event) => done.push(event.id));
  return { events, warnings, done };
}

/** Every task completed with its own findings, tasks.csv and attempts.ndjson whole, the run's reports written. */
function expectWholeSession(dir: string): void {
  const rows = readRows(dir);
  expect(kIds.map((id) => [id, rows.get(id)?.status, rows.get(id)?.findings])).toEqual(
    kRows.map((row) => [row.id, 'completed', row.description]),
  );
  expectTasksCsvValid(dir);
  const attempts = readFileSync(join(dir, 'attempts.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { task: string; outcome: string });
  expect(attempts.map((line) => `${line.task} ${line.outcome}`).sort()).toEqual(kIds.map((id) => `${id} completed`));
  // The journal was emptied by the last rewrite of tasks.csv, which holds everything.
  expect(readJournal(dir)).toEqual([]);
  expect(existsSync(join(dir, 'context.md'))).toBe(true);
  expect(existsSync(join(dir, 'report.html'))).toBe(true);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a library listener that throws loses nothing', () => {
  const kFailures: { name: string; event: 'task:done' | 'task:start'; fail: () => unknown; warning: RegExp }[] = [
    {
      name: 'a task:done listener that throws once',
      event: 'task:done',
      fail: () => {
        throw new Error('listener boom');
      },
      warning: /^a listener of task:done threw: listener boom \(the run goes on/,
    },
    {
      name: 'an async task:done listener whose promise rejects (no unhandled rejection)',
      event: 'task:done',
      fail: () => Promise.reject(new Error('async listener boom')),
      warning: /^a listener of task:done failed: async listener boom \(the run goes on/,
    },
    {
      name: 'a task:start listener that throws once (the task still runs)',
      event: 'task:start',
      fail: () => {
        throw new Error('start listener boom');
      },
      warning: /^a listener of task:start threw: start listener boom \(the run goes on/,
    },
  ];

  for (const { name, event, fail, warning } of kFailures) {
    test(`${name}: the run resolves, every result is recorded, a warning names the error`, async () => {
      const dir = buildSession(kRows);
      const { events, warnings, done } = emitterFailingOnce(event, fail);
      const summary = await settledOrEscaped(runSession(dir, { executor: kExecutor, concurrency: 3, events }));
      expect(summary.exitCode).toBe(0);
      expect(summary.counts.completed).toBe(kIds.length);
      // The run's own tally heard every start; the listener after the failing one heard every finish.
      expect([summary.ran, summary.attempts]).toEqual([kIds.length, kIds.length]);
      expect([...done].sort()).toEqual(kIds);
      expect(warnings.filter((message) => message.startsWith('a listener of'))).toEqual([expect.stringMatching(warning)]);
      expectWholeSession(dir);
    });
  }

  test('a warning listener that throws too: printed to stderr once, never a loop of warnings, the run whole', async () => {
    const dir = buildSession(kRows);
    const { events, done } = emitterFailingOnce('task:done', () => {
      throw new Error('listener boom');
    });
    let warningCalls = 0;
    events.on('warning', () => {
      warningCalls++;
      throw new Error('warning listener boom');
    });
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const summary = await settledOrEscaped(runSession(dir, { executor: kExecutor, concurrency: 3, events }));
    vi.restoreAllMocks();
    expect(summary.exitCode).toBe(0);
    expect([...done].sort()).toEqual(kIds);
    // One warning (the task:done listener's), heard once: the warning listener's own error is not a warning.
    expect(warningCalls).toBe(1);
    expect(written.filter((text) => text.includes('warning listener boom'))).toEqual([
      expect.stringMatching(/a listener of warning threw: warning listener boom/),
    ]);
    expectWholeSession(dir);
  });
});

describe('durable before public', () => {
  test("a task's finish entry and attempt line are in the journal files when its task:done is emitted", async () => {
    const dir = buildSession(kRows);
    const events = new RunEmitter();
    const seen: string[] = [];
    events.on('task:done', (event) => {
      // Read synchronously, as the event comes: the entry is already written, not only buffered.
      const finished = readJournal(dir).filter((entry) => entry.type === 'finish' && entry.id === event.id);
      const attempts = readFileSync(join(dir, 'attempts.ndjson'), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { task: string; attempt: number; outcome: string })
        .filter((line) => line.task === event.id);
      seen.push(`${event.id} ${finished.map((entry) => entry.type === 'finish' && entry.status).join()} ${attempts.map((line) => line.outcome).join()}`);
    });
    const summary = await runSession(dir, { executor: kExecutor, concurrency: 3, events });
    expect(summary.exitCode).toBe(0);
    expect(seen.sort()).toEqual(kIds.map((id) => `${id} completed completed`));
  });
});
