import { cpSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { sessionIdOf } from '../../src/session/files/session-id.js';
import { SessionLease } from '../../src/backend/bullmq/session/session-lease.js';
import { lines, readyWorker, redisForEachTest, waitingCommand } from '../helpers/bullmq-session.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows, tasksCsv } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

const kTasks = 12;

/** Rows whose descriptions name the folder they were written for, so that a row holding another folder's output shows. */
function rowsOf(folder: string): Record<string, string>[] {
  return Array.from({ length: kTasks }, (_, index) => ({ id: `T${index + 1}`, description: `${folder}-${index + 1}`, role: 'worker' }));
}

/** A copy of a session folder (`cp -r`), in a folder of its own. */
function copyOf(dir: string): string {
  const copy = join(mkdtempSync(join(tmpdir(), 'csv-wave-copy-')), 'copy');
  cpSync(dir, copy, { recursive: true });
  return copy;
}

/** The journal's start entries: written before their jobs are added (on the code before this change too). */
function startsOf(dir: string): number {
  return lines(join(dir, '.csv-wave', 'journal.ndjson')).filter((line) => line.includes('"type":"start"')).length;
}

/**
 * The identity check bypassed: `.csv-wave/session-id` holding the id alone, as an older
 * csv-wave wrote it, which each folder adopts as its own.
 */
function forceSessionId(dir: string, id: string): void {
  writeFileSync(join(dir, '.csv-wave', 'session-id'), `${id}\n`);
}

describe.runIf(kRunRedisTests)('a session id belongs to one folder', () => {
  const each = redisForEachTest();

  it('a copy (cp -r) run beside the original with one worker gets an id of its own, with a warning: neither takes the other\'s results', { timeout: 600_000 }, async () => {
    const original = buildSession(rowsOf('A'), { sessionId: 'copied-id' });
    // The original has run on bullmq before: its id file records its folder.
    sessionIdOf(original, () => undefined);
    const copy = copyOf(original);
    writeFileSync(join(copy, 'tasks.csv'), tasksCsv(rowsOf('B')));
    const args = ['--cmd', 'echo out-{description}', '--concurrency', String(kTasks), '--backend', 'bullmq', '--redis', each.redis.url];
    const a = spawnCli('run', original, ...args);
    const b = spawnCli('run', copy, ...args);
    each.started.push(a, b);
    // Both have queued every task before any worker runs one: on one shared id, each job would be the first adder's.
    await waitFor(() => startsOf(original) === kTasks && startsOf(copy) === kTasks, 'both runs to start every task');
    each.started.push(await readyWorker(each.redis.url, '--concurrency', '2'));
    const [ranA, ranB] = await Promise.all([a.exited, b.exited]);
    expect(ranA.code, ranA.stderr).toBe(0);
    expect(ranB.code, ranB.stderr).toBe(0);
    for (const [dir, folder] of [[original, 'A'], [copy, 'B']] as const) {
      const rows = readRows(dir);
      for (let index = 1; index <= kTasks; index++) expect(rows.get(`T${index}`), `${folder} T${index}`).toMatchObject({ status: 'completed', findings: `out-${folder}-${index}` });
    }
    const copyId = readFileSync(join(copy, '.csv-wave', 'session-id'), 'utf8').split('\n')[0]!;
    expect(copyId).not.toBe('copied-id');
    expect(readFileSync(join(original, '.csv-wave', 'session-id'), 'utf8').split('\n')[0]).toBe('copied-id');
    expect(ranB.stderr).toContain(`made in the folder ${realpathSync(original)}`);
    expect(ranB.stderr).toContain(`${copyId} (it was copied-id)`);
    expect(ranA.stderr).not.toContain('is a copy');
  });

  it('a second coordinator on a session id that another one holds (a copy whose id was forced) is refused with exit 3, naming the first', { timeout: 600_000 }, async () => {
    const original = buildSession([{ id: 'A', description: 'waits for release', role: 'worker' }], { sessionId: 'forced-id' });
    const copy = copyOf(original);
    forceSessionId(original, 'forced-id');
    forceSessionId(copy, 'forced-id');
    each.started.push(await readyWorker(each.redis.url, '--session-id', 'forced-id'));
    const args = ['--cmd', waitingCommand(each.marks), '--backend', 'bullmq', '--redis', each.redis.url];
    const first = spawnCli('run', original, ...args);
    each.started.push(first);
    await waitFor(() => lines(join(each.marks, 'A.pids')).length === 1, 'the first run\'s task to start');
    const second = spawnCli('run', copy, ...args);
    each.started.push(second);
    let secondEnded = false;
    void second.exited.then(() => (secondEnded = true));
    // Refused before it says where its tasks go; one that got that far was not refused.
    await waitFor(() => secondEnded || second.stderrSoFar().includes('tasks go to queue'), 'the second run to be refused or to go on');
    expect(secondEnded, second.stderrSoFar()).toBe(true);
    const refused = await second.exited;
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toMatch(
      new RegExp(`locked by another run on ${hostname()} \\(this machine\\) \\(pid ${first.child.pid}, folder ${realpathSync(original)}\\), which last beat \\d+ s ago`),
    );
    expect(refused.stderr).toContain(`If ${realpathSync(original)} is a copy of this folder`);
    writeFileSync(join(each.marks, 'release'), '');
    const ran = await first.exited;
    expect(ran.code, ran.stderr).toBe(0);
    expect(readRows(original).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });
    // The refused run never started A, nor wrote tasks.csv: the hold is asked for before the first write.
    expect(readRows(copy).get('A')).toMatchObject({ status: '', findings: '' });
    expect(lines(join(each.marks, 'A.pids'))).toHaveLength(1);
  });

  it('a hold taken on another machine is waited out, not taken over: exit 3 until it lapses, then the run goes on', { timeout: 600_000 }, async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'held-elsewhere' });
    each.started.push(await readyWorker(each.redis.url, '--session-id', 'held-elsewhere'));
    const client = new Redis(each.redis.url);
    try {
      // A coordinator on another machine, beating now, with a pid that is dead here (no pid means anything there).
      const key = 'csv-wave:lease:held-elsewhere';
      await client.hset(key, { run: 'aaaaaaaaaaaa', hostname: 'another-host', pid: '999999', folder: '/srv/session', beat: String(Date.now()) });
      await client.pexpire(key, 30_000);
      const args = ['--cmd', 'echo done-{id}', '--backend', 'bullmq', '--redis', each.redis.url];
      const refused = await runCli('run', dir, ...args);
      expect(refused.code, refused.stderr).toBe(3);
      expect(refused.stderr).toMatch(/locked by another run on another-host \(pid 999999, folder \/srv\/session\), which last beat \d+ s ago/);
      expect(refused.stderr).toMatch(/its hold lapses 30 s after its last beat \(in about \d+ s\)/);
      expect(readRows(dir).get('A')).toMatchObject({ status: '', findings: '' });
      // Lapsed (made to lapse now): Redis drops the hold by itself, and the run goes on.
      await client.pexpire(key, 1);
      for (let look = 0; look < 1000 && (await client.exists(key)) === 1; look++) await new Promise((resolve) => setTimeout(resolve, 10));
      const ran = await runCli('run', dir, ...args);
      expect(ran.code, ran.stderr).toBe(0);
      expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });
      // Released at the end: the next run needs no wait.
      expect(await client.exists(key)).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it('a run whose hold another run took over (it had stopped beating) is told so at its next beat, and leaves the other\'s hold alone', async () => {
    const client = new Redis(each.redis.url);
    try {
      const told: string[] = [];
      const lease = await SessionLease.take(each.redis.url, 'taken-over', '111111111111', '/here', (reason) => told.push(reason));
      const key = 'csv-wave:lease:taken-over';
      expect(await client.hget(key, 'run')).toBe('111111111111');
      expect(await client.pttl(key)).toBeGreaterThan(0);
      await lease.renew();
      expect(told).toEqual([]);
      // Its hold lapsed and another run took it.
      await client.del(key);
      await client.hset(key, { run: '222222222222', hostname: 'another-host', pid: '42', folder: '/there', beat: '0' });
      await lease.renew();
      expect(told).toEqual([expect.stringContaining('another run took over this session\'s id (on another-host, pid 42, folder /there)')]);
      await lease.release(true);
      expect(await client.hget(key, 'run')).toBe('222222222222');
    } finally {
      client.disconnect();
    }
  });
});
