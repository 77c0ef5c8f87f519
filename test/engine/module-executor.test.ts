import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readDiscoveryFile } from '../../src/knowledge/discovery-files.js';
import { RunEmitter, type TaskRetryEvent } from '../../src/events/events.js';
import { runSession } from '../../src/run/run-session.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows, type RowInput } from '../helpers/session-builder.js';
import { fixturePath } from '../helpers/test-files.js';

/** The fixture's absolute path (a relative --module is relative to the session folder; test/cli/executor-check.test.ts covers that). */
function moduleFlag(name: string): string {
  return fixturePath(name);
}

function errors(dir: string): Record<string, string> {
  return Object.fromEntries([...readRows(dir)].map(([id, row]) => [id, `${row.status}: ${row.error || row.findings}`]));
}

/** Healthy tasks that must complete whatever their neighbour does, and one that runs after them. */
const kBystanders: RowInput[] = [
  { id: 'OK-1', description: 'ok', role: 'r' },
  { id: 'OK-2', description: 'ok', role: 'r' },
  { id: 'OK-3', description: 'ok', role: 'r' },
  { id: 'AFTER', description: 'ok', role: 'r', deps: 'OK-1;OK-2;OK-3' },
];
const kBystandersDone = {
  'OK-1': 'completed: OK-1 ok',
  'OK-2': 'completed: OK-2 ok',
  'OK-3': 'completed: OK-3 ok',
  AFTER: 'completed: AFTER ok',
};

describe('module executor', () => {
  test('a module result is the task result, with discoveries, wisdom and upstream', async () => {
    const dir = buildSession([
      { id: 'A', description: 'first', role: 'r' },
      { id: 'B', description: 'second', role: 'r', deps: 'A', context_from: 'A' },
    ]);
    const result = await runCli('run', dir, '--module', moduleFlag('module-ok.mjs'));
    expect(result.code).toBe(0);
    const rows = readRows(dir);
    expect(rows.get('A')).toMatchObject({ status: 'completed', findings: 'A: first | No previous context available' });
    expect(rows.get('B')).toMatchObject({ status: 'completed', findings: 'B: second | [Task A] A: first | No previous context available' });
    expect(readDiscoveryFile(dir, 'B')?.data.key_findings).toEqual(['attempt 1', 'same session true', 'signal true']);
    expect(readFileSync(join(dir, 'wisdom', 'learnings.md'), 'utf8')).toBe('- [A] A saw deps: none\n- [B] B saw deps: A=completed\n');
    const board = readFileSync(join(dir, 'discoveries.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { data: unknown });
    expect(board.map((line) => line.data)).toEqual([{ title: 'idea of A' }, { title: 'idea of B' }]);
  });

  test('thrown non-Errors, Errors and a non-object result fail only their own task, each with a clear error', async () => {
    const dir = buildSession([
      { id: 'STRING', description: 'throw-string', role: 'r' },
      { id: 'OBJECT', description: 'throw-object', role: 'r' },
      { id: 'NULL', description: 'throw-null', role: 'r' },
      { id: 'ERROR', description: 'throw-error', role: 'r' },
      { id: 'RETURN', description: 'return-string', role: 'r' },
      { id: 'RETRIED', description: 'transient-once', role: 'r' },
      ...kBystanders,
    ]);
    const result = await runCli('run', dir, '--module', moduleFlag('module-behaviours.mjs'), '--concurrency', '4', '--threads', '2', '--retry-delay', '0.01');
    expect(result.code).toBe(1);
    expect(errors(dir)).toEqual({
      STRING: 'failed: text thrown by the module',
      OBJECT: 'failed: Non-Error thrown: {"a":1}',
      NULL: 'failed: Non-Error thrown: null',
      ERROR: 'failed: an Error thrown by the module',
      RETURN: 'failed: Invalid result: result: Invalid input: expected object, received string',
      // An Error with errorClass 'transient' asks for a retry.
      RETRIED: 'completed: recovered on attempt 2',
      ...kBystandersDone,
    });
  });

  test('process.exit in a module fails only its task, also when its thread was shared', async () => {
    const dir = buildSession([{ id: 'EXIT', description: 'exit', role: 'r' }, ...kBystanders]);
    // Two tasks per thread: a bystander dies with the exiting task's thread, and its retry
    // on a thread of its own completes.
    const result = await runCli('run', dir, '--module', moduleFlag('module-behaviours.mjs'), '--concurrency', '4', '--threads', '2');
    expect(result.code).toBe(1);
    expect(errors(dir)).toEqual({ EXIT: 'failed: Worker thread died: worker exited with code: 3', ...kBystandersDone });
  });

  test('a module that spins forever fails with --timeout 1 and the run goes on', async () => {
    const dir = buildSession([{ id: 'SPIN', description: 'spin', role: 'r' }, ...kBystanders]);
    const result = await runCli(
      'run', dir, '--module', moduleFlag('module-behaviours.mjs'), '--timeout', '1', '--retries', '0', '--concurrency', '2', '--threads', '2',
    );
    expect(result.code).toBe(1);
    const { SPIN, ...others } = errors(dir);
    expect(SPIN).toMatch(/^failed: Timed out after 1s; its worker thread was ended$/);
    expect(others).toEqual(kBystandersDone);
  });

  test('a module that waits past --timeout is told through ctx.signal', async () => {
    const dir = buildSession([{ id: 'WAIT', description: 'wait-for-abort', role: 'r' }, ...kBystanders]);
    const result = await runCli('run', dir, '--module', moduleFlag('module-behaviours.mjs'), '--timeout', '0.5', '--retries', '0');
    expect(result.code).toBe(1);
    const { WAIT, ...others } = errors(dir);
    expect(WAIT).toBe('failed: Timed out after 0.5s');
    expect(others).toEqual(kBystandersDone);
    expect(readFileSync(join(dir, 'WAIT.aborted'), 'utf8')).toBe('Timed out after 0.5s');
  });

  test('a spinning module that shares its thread takes no bystander down with it', async () => {
    const dir = buildSession([{ id: 'SPIN', description: 'spin', role: 'r' }, ...kBystanders]);
    // One thread for four tasks: the bystanders queue behind the spinner on the same thread.
    const result = await runCli(
      'run', dir, '--module', moduleFlag('module-behaviours.mjs'), '--timeout', '1', '--retries', '0', '--concurrency', '4', '--threads', '1',
    );
    expect(result.code).toBe(1);
    const { SPIN, ...others } = errors(dir);
    expect(SPIN).toMatch(/^failed: Timed out after 1s/);
    expect(others).toEqual(kBystandersDone);
  });

  test('a module that allocates until its worker dies fails only its task (library option workerMemoryMb)', async () => {
    const dir = buildSession([{ id: 'HOG', description: 'allocate', role: 'r' }, ...kBystanders]);
    const events = new RunEmitter();
    const retries: TaskRetryEvent[] = [];
    events.on('task:retry', (event) => retries.push(event));
    const summary = await runSession(dir, {
      executor: { type: 'module', path: fixturePath('module-behaviours.mjs') },
      concurrency: 2,
      threads: 1,
      workerMemoryMb: 64,
      events,
    });
    expect(summary.exitCode).toBe(1);
    const { HOG, ...others } = errors(dir);
    expect(HOG).toMatch(/^failed: Worker thread died: .*memory/);
    expect(others).toEqual(kBystandersDone);
    // The out-of-memory task got one more try on a thread of its own, then failed for good.
    expect(retries.filter((event) => event.id === 'HOG').map((event) => event.errorClass)).toEqual(['worker-crash']);
  });

  test('a module without a default export function stops the run before any task starts, saying what is expected', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    const result = await runCli('run', dir, '--module', moduleFlag('module-no-default.mjs'));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /module-no-default\.mjs has no default export function \(its default export is undefined\): export default async \(task, ctx\) => result\n$/,
    );
    expect(readRows(dir).get('A')!.status).toBe('');
  });
});
