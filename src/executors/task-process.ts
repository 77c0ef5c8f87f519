import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { TaskInput } from './types.js';

/**
 * Starts a task's program in the session folder, in a process group of its own (so that a
 * timeout kills everything it started), with its three pipes and the task's CSV_WAVE_*
 * environment, by which a run that stops finds whatever left the group. The command and
 * agent executors start their programs here. `setup` may name another folder to work in
 * (an agent's workdir) and more environment (claude's ANTHROPIC_BASE_URL).
 */
export function spawnTaskProcess(
  program: string,
  args: readonly string[],
  task: TaskInput,
  setup: { cwd?: string; env?: Readonly<Record<string, string>> } = {},
): ChildProcessWithoutNullStreams {
  return spawn(program, args, {
    cwd: setup.cwd ?? task.session,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {
      ...process.env,
      CSV_WAVE_SESSION: task.session,
      CSV_WAVE_TASK_ID: task.id,
      CSV_WAVE_WAVE: String(task.wave),
      CSV_WAVE_ROLE: task.row.role ?? '',
      CSV_WAVE_ATTEMPT: String(task.attempt),
      ...setup.env,
    },
  });
}

/**
 * SIGKILL to a process group that is usually gone already (it is sent when the program
 * exits and again when its result is taken): the error that says so is expected, and
 * its stack trace, captured for nothing, costs more than the kill.
 */
export function killGroupQuietly(pid: number | undefined): void {
  if (pid === undefined) return;
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  } finally {
    Error.stackTraceLimit = limit;
  }
}
