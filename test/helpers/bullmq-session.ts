import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { genericSession, type RowInput } from './generic-session.js';
import { spawnCli, waitFor, type SpawnedCli } from './spawn-cli.js';

/** Lines of a file that may not exist yet. */
export function lines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((line) => line !== '') : [];
}

/** A session of these rows whose id is set, so that workers can be started before its run. */
export function sessionWithId(sessionId: string, rows: readonly RowInput[]): string {
  const dir = genericSession(rows);
  mkdirSync(join(dir, '.csv-wave'), { recursive: true });
  writeFileSync(join(dir, '.csv-wave', 'session-id'), `${sessionId}\n`);
  return dir;
}

/**
 * A command that notes the pid of its shell in `<marks>/<id>.pids` and then waits for
 * `<marks>/release`, so that a test acts while the job is known to be running and can
 * look for the process afterwards.
 */
export function waitingCommand(marks: string): string {
  return `echo $$ >> ${marks}/{id}.pids; while [ ! -e ${marks}/release ]; do sleep 0.05; done; echo done-{id}`;
}

/**
 * A `csv-wave worker`, once it says it takes jobs. BullMQ's own stalled-job check (30 s):
 * a shorter one loses job locks on a loaded machine, and a job whose lock was lost runs again.
 */
export async function readyWorker(url: string, ...args: string[]): Promise<SpawnedCli> {
  const worker = spawnCli('worker', '--redis', url, ...args);
  await waitFor(() => worker.stdoutSoFar().includes('taking jobs'), 'a ready worker', 60_000);
  return worker;
}
