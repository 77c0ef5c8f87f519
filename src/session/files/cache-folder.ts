import { closeSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { sessionPathForWrite } from '../../files/session-path.js';
import { writeAll } from '../../files/write-all.js';
import { kLayout } from '../../layout.js';

/** The folder of a cache's packs and their indexes, inside the cache's folder. */
export const kPacksFolder = 'packs';

/**
 * The one writer of a result cache's folder (cache/cache-store.ts holds the format): a pack
 * appended by one run, and the pack's index, written whole by a rename once the pack is
 * closed. The session's own cache (`.csv-wave/cache/`) is reached through the session's
 * path checks (no symlink out of the folder); a shared one (session.json's `cache_dir`) is
 * a folder the user named, made if missing.
 *
 * Nothing here is made durable (no fsync): an entry a crash loses is a miss, and one cut
 * short fails its digest when it is read. A cache write must cost a run almost nothing
 * (docs/cache.md, the figures in BENCHMARKS.md).
 */
export class CacheFolder {
  /** The cache's folder, absolute. */
  readonly dir: string;
  readonly #sessionDir: string | undefined;
  #made = false;

  /** The cache of the session `sessionDir`: `cacheDir` when session.json names one (relative to the session folder), else `.csv-wave/cache/`. */
  static of(sessionDir: string, cacheDir: string | undefined): CacheFolder {
    if (cacheDir === undefined) return new CacheFolder(join(resolve(sessionDir), kLayout.cache), resolve(sessionDir));
    return new CacheFolder(isAbsolute(cacheDir) ? cacheDir : resolve(sessionDir, cacheDir), undefined);
  }

  private constructor(dir: string, sessionDir: string | undefined) {
    this.dir = dir;
    this.#sessionDir = sessionDir;
  }

  /** The packs' folder, absolute (for reading: it may not exist). */
  get packs(): string {
    return join(this.dir, kPacksFolder);
  }

  /** Creates a new, empty pack named `name` (a name no other run uses); throws when the folder cannot take it. */
  createPack(name: string): PackFile {
    return new PackFile(this.#path(name));
  }

  /** Writes `name` in the packs' folder whole, by a rename: a reader sees the old file or the new one. */
  replace(name: string, text: string | Uint8Array): void {
    const path = this.#path(name);
    const temporary = `${path}.${process.pid}.tmp`;
    try {
      const fd = openSync(temporary, 'w');
      try {
        writeAll(fd, text);
      } finally {
        closeSync(fd);
      }
      renameSync(temporary, path);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
  }

  /**
   * Removes `name` from the packs' folder (`cache --prune`, `--clear`); one already gone is
   * no error. A run that still appends to a removed pack writes to no name: its entries are
   * lost, never mixed into another file.
   */
  remove(name: string): void {
    rmSync(this.#path(name), { force: true });
  }

  /** The absolute path of a file of the packs' folder, its folders made (once). */
  #path(name: string): string {
    if (this.#sessionDir !== undefined) return sessionPathForWrite(this.#sessionDir, join(kLayout.cache, kPacksFolder, name));
    if (!this.#made) {
      mkdirSync(this.packs, { recursive: true });
      this.#made = true;
    }
    return join(this.packs, name);
  }
}

/**
 * A pack being written: opened once, appended to, closed. Its size is where the next
 * append starts. A write that fails (a full disk) leaves the pack as it stands: the caller
 * stops writing to it, and the cut line fails its digest if it is ever read.
 */
export class PackFile {
  readonly #fd: number;
  #size = 0;

  constructor(path: string) {
    this.#fd = openSync(path, 'wx');
  }

  /** Bytes written so far. */
  get size(): number {
    return this.#size;
  }

  append(bytes: Buffer): void {
    writeAll(this.#fd, bytes);
    this.#size += bytes.length;
  }

  close(): void {
    closeSync(this.#fd);
  }
}
