import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionLock } from '../../src/session/lock.js';

const kLinux = existsSync('/proc/self/stat');

interface LockFile {
  pid: number;
  hostname: string;
  started: string;
  bootId?: string;
  pidNamespace?: string;
  startTicks?: number;
}

function sessionDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-lock-owner-'));
  mkdirSync(join(dir, '.csv-wave'));
  return dir;
}

function lockPath(dir: string): string {
  return join(dir, '.csv-wave', 'lock');
}

/** The lock this process writes, read back: real boot id, pid namespace and start time. */
function ownLock(): LockFile {
  const dir = sessionDir();
  const lock = SessionLock.acquire(dir, () => {});
  const content = JSON.parse(readFileSync(lockPath(dir), 'utf8')) as LockFile;
  lock.release();
  return content;
}

/** Takes the lock of a session whose lock file says `content`: the warnings, or the error. */
function acquireOver(content: LockFile): { dir: string; warnings: string[]; lock?: SessionLock; error?: Error } {
  const dir = sessionDir();
  writeFileSync(lockPath(dir), JSON.stringify(content));
  const warnings: string[] = [];
  try {
    return { dir, warnings, lock: SessionLock.acquire(dir, (message) => warnings.push(message)) };
  } catch (error) {
    return { dir, warnings, error: error as Error };
  }
}

const sleepers: ReturnType<typeof spawn>[] = [];
afterAll(() => {
  for (const sleeper of sleepers) sleeper.kill('SIGKILL');
});

describe.runIf(kLinux)('who owns a lock: boot, pid namespace and start time (a container run is pid 1 every time)', () => {
  it('records this process: pid, boot id, pid namespace and start time', () => {
    const own = ownLock();
    expect(own.pid).toBe(process.pid);
    expect(own.bootId).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    expect(own.pidNamespace).toMatch(/^pid:\[\d+\]$/);
    expect(own.startTicks).toBeGreaterThan(0);
  });

  it('a lock naming this pid but another start time is a dead namesake\'s: taken over with a warning', () => {
    const own = ownLock();
    const taken = acquireOver({ ...own, startTicks: own.startTicks! - 1 });
    expect(taken.error).toBeUndefined();
    expect(taken.warnings).toEqual([`Taking over a stale lock of pid ${process.pid}, which is no longer running`]);
    expect(JSON.parse(readFileSync(lockPath(taken.dir), 'utf8'))).toMatchObject({ pid: process.pid, startTicks: own.startTicks });
    taken.lock!.release();
    expect(existsSync(lockPath(taken.dir))).toBe(false);
  });

  it('a lock naming this pid from an earlier boot is taken over', () => {
    const own = ownLock();
    const taken = acquireOver({ ...own, bootId: '00000000-0000-0000-0000-000000000000' });
    expect(taken.error).toBeUndefined();
    expect(taken.warnings).toHaveLength(1);
    taken.lock!.release();
  });

  it('a lock naming this pid without the identity (an older csv-wave), not held by this process, is taken over', () => {
    const own = ownLock();
    const taken = acquireOver({ pid: own.pid, hostname: own.hostname, started: own.started });
    expect(taken.error).toBeUndefined();
    taken.lock!.release();
  });

  it('a lock this process holds is not taken again by it (a program running one session twice)', () => {
    const dir = sessionDir();
    const held = SessionLock.acquire(dir, () => {});
    const before = readFileSync(lockPath(dir), 'utf8');
    expect(() => SessionLock.acquire(dir, () => {})).toThrow(
      expect.objectContaining({ code: 'SESSION_LOCKED', message: expect.stringContaining(`pid ${process.pid}`) }),
    );
    expect(readFileSync(lockPath(dir), 'utf8')).toBe(before);
    held.release();
    expect(existsSync(lockPath(dir))).toBe(false);
  });

  it('releasing one session\'s lock does not free another this process holds', () => {
    const [first, second] = [sessionDir(), sessionDir()];
    const held = [SessionLock.acquire(first, () => {}), SessionLock.acquire(second, () => {})];
    held[0]!.release();
    expect(() => SessionLock.acquire(second, () => {})).toThrow(expect.objectContaining({ code: 'SESSION_LOCKED' }));
    held[1]!.release();
  });

  it('a lock of a live process is refused; the same pid with another start time (pid reuse) is taken over', async () => {
    const sleeper = spawn('sleep', ['600']);
    sleepers.push(sleeper);
    await new Promise((resolve) => sleeper.on('spawn', resolve));
    const stat = readFileSync(`/proc/${sleeper.pid}/stat`, 'utf8');
    const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const own = ownLock();
    const owner = { ...own, pid: sleeper.pid!, startTicks };

    const refused = acquireOver(owner);
    expect(refused.error).toMatchObject({ code: 'SESSION_LOCKED', message: expect.stringContaining(`pid ${sleeper.pid}`) });
    expect(JSON.parse(readFileSync(lockPath(refused.dir), 'utf8'))).toEqual(owner);

    const reused = acquireOver({ ...owner, startTicks: startTicks + 1 });
    expect(reused.error).toBeUndefined();
    reused.lock!.release();
  });

  it('a lock from another pid namespace of this machine is never presumed stale: refused, naming the lock file', () => {
    const own = ownLock();
    const refused = acquireOver({ ...own, pidNamespace: 'pid:[1]' });
    expect(refused.error).toMatchObject({ code: 'SESSION_LOCKED' });
    expect(refused.error!.message).toContain('another pid namespace');
    expect(refused.error!.message).toContain(lockPath(refused.dir));
  });

  it('a takeover whose claimant died in the middle does not block the session: its claim is taken over too', async () => {
    const dead = spawn('true');
    const deadPid = await new Promise<number>((resolve) => dead.on('exit', () => resolve(dead.pid!)));
    const own = ownLock();
    const stale = JSON.stringify({ ...own, pid: deadPid, startTicks: 1 });
    const dir = sessionDir();
    writeFileSync(lockPath(dir), stale);
    const claim = `${lockPath(dir)}.takeover-${createHash('sha256').update(stale).digest('hex').slice(0, 16)}`;
    writeFileSync(claim, JSON.stringify({ ...own, pid: deadPid, startTicks: 2 }));
    const lock = SessionLock.acquire(dir, () => {});
    expect(JSON.parse(readFileSync(lockPath(dir), 'utf8'))).toMatchObject({ pid: process.pid });
    expect(readdirSync(join(dir, '.csv-wave'))).toEqual(['lock']);
    lock.release();
  });

  it('a lock that is not a file cannot be read: an IO error naming it, not a takeover', () => {
    const dir = sessionDir();
    mkdirSync(lockPath(dir));
    expect(() => SessionLock.acquire(dir, () => {})).toThrow(
      expect.objectContaining({ code: 'IO', message: expect.stringContaining(`Cannot read the session lock ${lockPath(dir)}`) }),
    );
    expect(existsSync(lockPath(dir))).toBe(true);
  });
});
