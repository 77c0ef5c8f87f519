import { lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { WaveError } from '../errors.js';

/** True when `path` is `root` itself or lies under it (both absolute). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * The absolute path of `relativePath` inside the session folder, ready to be written.
 * Task ids and artifact names are checked where they enter, but a path is also refused
 * here, where it is used: an absolute path, a `..` that climbs out of the session, or a
 * symlink on the way (a folder such as `artifacts/`, or the file itself) that leads out
 * of the session or nowhere. Missing folders are created one at a time after their parent
 * was checked, so that `mkdir -p` never runs through a symlink. Throws WaveError IO.
 *
 * Symlinks that stay inside the session are followed. The check and the write are two
 * steps: a person who swaps a folder for a symlink between them is not guarded against.
 */
export function sessionPathForWrite(sessionDir: string, relativePath: string): string {
  const root = resolve(sessionDir);
  const target = resolve(root, relativePath);
  if (isAbsolute(relativePath) || !isInside(root, target) || target === root) {
    throw refusal(root, relativePath, 'it does not name a file inside the session folder');
  }
  const parts = relative(root, target).split(sep);
  let current = root;
  for (const [index, part] of parts.entries()) {
    current = join(current, part);
    const last = index === parts.length - 1;
    // A folder checked once stays checked: a run writes thousands of files into a few folders.
    if (!last && checkedFolders.has(current)) continue;
    let stat = lstatOrUndefined(current);
    if (!stat && !last) {
      try {
        mkdirSync(current);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new WaveError('IO', `Cannot write ${target}: ${(error as Error).message}`, { path: target, cause: error });
        }
      }
      stat = lstatOrUndefined(current);
    }
    if (stat?.isSymbolicLink()) {
      const shown = relative(root, current);
      let real: string;
      try {
        real = realpathSync(current);
      } catch {
        throw refusal(root, relativePath, `${shown} is a symlink that leads nowhere`);
      }
      if (!isInside(realpathSync(root), real)) {
        throw refusal(root, relativePath, `${shown} is a symlink to ${real}, outside the session folder`);
      }
    }
    if (!last) rememberFolder(current);
  }
  return target;
}

/**
 * The absolute path of a file the session names for reading (a module path in
 * session.json): a relative path must stay inside the session folder, through symlinks
 * too. A file that does not exist is returned as it is, for the caller to report.
 */
export function sessionPathForRead(sessionDir: string, relativePath: string): string {
  const root = resolve(sessionDir);
  const target = resolve(root, relativePath);
  if (isAbsolute(relativePath) || !isInside(root, target)) {
    throw refusal(root, relativePath, 'it leads out of the session folder', 'Refused to read');
  }
  let real: string;
  try {
    real = realpathSync(target);
  } catch {
    return target;
  }
  if (!isInside(realpathSync(root), real)) {
    throw refusal(root, relativePath, `it resolves to ${real}, outside the session folder`, 'Refused to read');
  }
  return target;
}

function lstatOrUndefined(path: string): Stats | undefined {
  // Without an exception for a missing file: building one per task was most of the cost.
  return lstatSync(path, { throwIfNoEntry: false });
}

/** Folders found safe to write into, per thread; bounded, as a run may name many. */
const checkedFolders = new Set<string>();
const kMaxCheckedFolders = 1024;

/**
 * Forgets the folders checked so far: a new run on this thread must check them again, as
 * they may have been removed or replaced since (`init --force`, a person) while the
 * process lived on (a library user's, or a test's, that runs session after session).
 */
export function forgetCheckedFolders(): void {
  checkedFolders.clear();
}

function rememberFolder(path: string): void {
  if (checkedFolders.size >= kMaxCheckedFolders) checkedFolders.clear();
  checkedFolders.add(path);
}

function refusal(root: string, relativePath: string, why: string, verb = 'Refused to write'): WaveError {
  return new WaveError('IO', `${verb} ${relativePath} in the session ${root}: ${why}`, { path: join(root, relativePath) });
}
