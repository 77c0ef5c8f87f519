import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lines, readyWorker, redisForEachTest } from '../helpers/bullmq-session.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

/** The private parent folder of the worker with this pid (job-folders.ts). */
function parentsOf(pid: number): string[] {
  return readdirSync(tmpdir())
    .filter((name) => name.startsWith(`csv-wave-worker-${pid}-`))
    .map((name) => join(tmpdir(), name));
}

/**
 * A worker without `--workdir` runs each job in a folder of its own, inside one private
 * folder of the worker process: no two running jobs share a folder, a job's folder is
 * gone after it, and the worker's folder is gone once it stops.
 */
describe.runIf(kRunRedisTests)('csv-wave worker: the jobs\' working folders', () => {
  const each = redisForEachTest();

  it('two concurrent command jobs run in two folders of the worker\'s own, each gone after its job, the worker\'s gone after SIGTERM', { timeout: 300_000 }, async () => {
    const dir = buildSession([
      { id: 'A', description: 'a', role: 'worker' },
      { id: 'B', description: 'b', role: 'worker' },
    ], { sessionId: 'folders-cmd' });
    const worker = await readyWorker(each.redis.url, '--session-id', 'folders-cmd', '--concurrency', '2');
    each.started.push(worker);
    const pid = worker.child.pid!;
    expect(parentsOf(pid)).toHaveLength(1);
    const parent = parentsOf(pid)[0]!;
    const command = `pwd >> ${each.marks}/dirs; while [ ! -e ${each.marks}/release ]; do sleep 0.05; done; echo done-{id}`;
    const coordinator = spawnCli('run', dir, '--cmd', command, '--backend', 'bullmq', '--redis', each.redis.url);
    each.started.push(coordinator);
    await waitFor(() => lines(join(each.marks, 'dirs')).length === 2, 'both commands running');
    const folders = lines(join(each.marks, 'dirs'));
    expect(new Set(folders).size).toBe(2);
    for (const folder of folders) {
      expect(dirname(folder)).toBe(parent);
      expect(existsSync(folder)).toBe(true);
    }
    writeFileSync(join(each.marks, 'release'), '');
    const ran = await coordinator.exited;
    expect(ran.code, ran.stderr).toBe(0);
    expect(readRows(dir).get('B')).toMatchObject({ status: 'completed', findings: 'done-B' });
    for (const folder of folders) expect(existsSync(folder)).toBe(false);
    expect(existsSync(parent)).toBe(true);
    worker.child.kill('SIGTERM');
    const ended = await worker.exited;
    expect(ended.code, ended.stderr).toBe(0);
    expect(existsSync(parent)).toBe(false);
  });

  it('module jobs: each starts in an empty folder no running job holds; a folder a job wrote in is not handed out again', { timeout: 300_000 }, async () => {
    // Waits at its start for `<marks>/go-<id>`, so that the test decides which jobs run together.
    const module = join(each.marks, 'folder.mjs');
    writeFileSync(
      module,
      `import { appendFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
export default async function (task, ctx) {
  const empty = readdirSync(ctx.session).length === 0;
  appendFileSync(${JSON.stringify(join(each.marks, 'starts'))}, task.id + ' ' + ctx.session + '\\n');
  while (!existsSync(${JSON.stringify(each.marks)} + '/go-' + task.id)) await new Promise((resolve) => setTimeout(resolve, 20));
  if (task.row.description === 'writes') writeFileSync(ctx.session + '/left-behind', 'x');
  return { findings: (empty ? 'empty ' : 'NOT EMPTY ') + ctx.session };
}
`,
    );
    const rows = ['A', 'B', 'C', 'D', 'E', 'F'].map((id, index) => ({ id, description: index % 2 === 0 ? 'writes' : 'reads', role: 'worker' }));
    const dir = buildSession(rows, { sessionId: 'folders-module' });
    const worker = await readyWorker(each.redis.url, '--session-id', 'folders-module', '--concurrency', '2');
    each.started.push(worker);
    const coordinator = spawnCli('run', dir, '--module', module, '--backend', 'bullmq', '--redis', each.redis.url);
    each.started.push(coordinator);
    const startsOf = () => lines(join(each.marks, 'starts')).map((line) => line.split(' ') as [string, string]);
    const written: string[] = [];
    // Two jobs run at a time: each pair is let go together once both started.
    for (let pair = 0; pair < 3; pair++) {
      await waitFor(() => startsOf().length === 2 * (pair + 1), `jobs ${2 * pair + 1} and ${2 * pair + 2} running`);
      const [first, second] = startsOf().slice(2 * pair);
      expect(first![1]).not.toBe(second![1]);
      for (const [id] of [first!, second!]) writeFileSync(join(each.marks, `go-${id}`), '');
      for (const [id, folder] of [first!, second!]) if (rows.find((row) => row.id === id)?.description === 'writes') written.push(folder);
    }
    const ran = await coordinator.exited;
    expect(ran.code, ran.stderr).toBe(0);
    const results = readRows(dir);
    for (const { id } of rows) expect(results.get(id)?.findings).toMatch(/^empty /);
    // A folder a job left a file in was removed, never handed to a later job.
    for (const folder of written) expect(existsSync(folder)).toBe(false);
    const used = startsOf().map(([, folder]) => folder);
    startsOf().forEach(([id, folder], index) => {
      if (rows.find((row) => row.id === id)?.description === 'writes') expect(used.slice(index + 1)).not.toContain(folder);
    });
    // A folder given back empty was handed out again.
    expect(new Set(used).size).toBeLessThan(rows.length);
  });

  it('a worker sweeps the folder a worker killed with SIGKILL left, and no folder of a live process', { timeout: 300_000 }, async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.pid']).pid!;
    const dead = join(tmpdir(), `csv-wave-worker-${gone}-aB3dE9`);
    const alive = join(tmpdir(), `csv-wave-worker-${process.pid}-aB3dE9`);
    for (const folder of [dead, alive]) mkdirSync(join(folder, '0'), { recursive: true });
    try {
      const worker = await readyWorker(each.redis.url, '--session-id', 'folders-sweep');
      each.started.push(worker);
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(alive)).toBe(true);
    } finally {
      spawnSync('rm', ['-rf', dead, alive]);
    }
  });
});
