import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The name of a worker's parent folder in the temporary folder: its pid tells a dead worker's apart. */
const kPrefix = 'csv-wave-worker-';
const kParentName = /^csv-wave-worker-(\d+)-[A-Za-z0-9]{6}$/;

/**
 * The working folders of the jobs a `csv-wave worker` runs without `--workdir`, all inside
 * one private parent folder of the worker process (mkdtemp, mode 0700), made once.
 *
 * Making and removing a folder costs 0.2-0.5 ms of kernel time on an ext4 /tmp, more than
 * a no-op module job costs altogether, so:
 * - a command job gets a folder made for it and removed after it (`<parent>/<n>`): a
 *   process it left behind may still have it as its working folder, so it is never reused;
 * - a module or openai job (the folder is its `task.session`: scratch space a module may
 *   write in; the openai executor does not use it) gets a folder no job holds at that
 *   moment, empty: one given back empty is handed out again, one holding files is removed.
 * No two running jobs ever hold one folder.
 */
export class JobFolders {
  readonly #parent: string;
  /** Empty folders of ended module and openai jobs, ready for the next one. */
  readonly #free: string[] = [];
  #next = 0;

  private constructor(parent: string) {
    this.#parent = parent;
  }

  /** Sweeps the parent folders of dead workers, then makes this worker's. */
  static open(): JobFolders {
    sweepDeadParents();
    return new JobFolders(mkdtempSync(join(tmpdir(), `${kPrefix}${process.pid}-`)));
  }

  get parent(): string {
    return this.#parent;
  }

  /** An empty folder that no running job holds. */
  take(reusable: boolean): string {
    if (reusable) {
      const free = this.#free.pop();
      if (free !== undefined) return free;
    }
    const dir = join(this.#parent, String(this.#next++));
    mkdirSync(dir, { mode: 0o700 });
    return dir;
  }

  /** Takes back the folder of an ended job: kept for the next module or openai job when it is empty, else removed. */
  giveBack(dir: string, reusable: boolean): void {
    if (reusable && isEmpty(dir)) {
      this.#free.push(dir);
      return;
    }
    rmSync(dir, { recursive: true, force: true });
  }

  /** Removes the parent folder with everything in it: the worker stops. */
  remove(): void {
    this.#free.length = 0;
    rmSync(this.#parent, { recursive: true, force: true });
  }
}

function isEmpty(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0;
  } catch {
    return false; // gone or unreadable: removed rather than reused
  }
}

/**
 * Removes the parent folders that workers killed with SIGKILL left behind: those named
 * after a pid that no process has any more, and owned by this user. A pid in use again
 * keeps its folder (it may be another worker's): the safe side.
 */
function sweepDeadParents(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir()).filter((name) => name.startsWith(kPrefix));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(kParentName.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || isAlive(pid)) continue;
    const path = join(tmpdir(), name);
    try {
      // lstat: a symlink planted under that name is not followed, only left alone.
      const stat = lstatSync(path);
      if (!stat.isDirectory() || stat.uid !== process.getuid?.()) continue;
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Another worker swept it first, or it is not ours to remove.
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
