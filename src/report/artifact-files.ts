import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { kArtifactNamePattern } from '../schema/result.js';
import { kTaskIdPattern } from '../schema/row.js';
import { kLayout } from '../layout.js';

/** True for `<name>.md` (or a `<name>.patch`, knowledge/artifacts.ts) with a name an executor may give (schema/result.ts): no `/`, no scheme, no `..` alone. */
function isArtifactFileName(fileName: string): boolean {
  if (fileName.endsWith('.patch')) return kArtifactNamePattern.test(fileName);
  return fileName.endsWith('.md') && kArtifactNamePattern.test(fileName.slice(0, -3));
}

/** True when `path` is a real folder, not a symlink: a symlinked folder may lead out of the session. */
function isPlainFolder(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

/**
 * True for a file as csv-wave writes an artifact: a regular file (not a symlink, a FIFO or a
 * device) with one name only. A second name is a hard link, which a command task can make
 * (`ln /etc/passwd artifacts/A/x.md`) to a file outside the session that no folder check sees;
 * csv-wave writes each artifact as a new file, so its own files have one link.
 */
function isWrittenFile(stat: Stats | undefined): stat is Stats {
  return stat !== undefined && stat.isFile() && stat.nlink === 1;
}

/**
 * The artifacts the report links, as [task id, `artifacts/<id>/<name>.md`], by id then name:
 * the files of `artifacts/<id>/` for each id in `ids` that pass `isWrittenFile`. A symlink
 * (file or folder) is never listed, even one that stays inside, nor a hard link: the page and
 * `serve` show only what csv-wave wrote.
 */
export function listArtifacts(sessionDir: string, ids: ReadonlySet<string>): [string, string][] {
  const root = join(sessionDir, kLayout.artifacts);
  if (!isPlainFolder(root)) return [];
  const paths: [string, string][] = [];
  // One readdir of artifacts/ rather than a stat per task: a session may hold 100,000 tasks.
  const folders = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && ids.has(entry.name) && kTaskIdPattern.test(entry.name))
    .map((entry) => entry.name)
    .sort();
  for (const id of folders) {
    const names = readdirSync(join(root, id), { withFileTypes: true })
      .filter((entry) => entry.isFile() && isArtifactFileName(entry.name))
      .map((entry) => entry.name)
      .filter((name) => isWrittenFile(lstatSync(join(root, id, name), { throwIfNoEntry: false })))
      .sort();
    for (const name of names) paths.push([id, `artifacts/${id}/${name}`]);
  }
  return paths;
}

/** `artifacts/<id>/<fileName>` and what lstat says of it, when both parts are named as csv-wave names them and no folder on the way is a symlink. */
function artifactPath(sessionDir: string, id: string, fileName: string): { path: string; stat: Stats | undefined } | undefined {
  if (!kTaskIdPattern.test(id) || !isArtifactFileName(fileName)) return undefined;
  const root = join(sessionDir, kLayout.artifacts);
  if (!isPlainFolder(root) || !isPlainFolder(join(root, id))) return undefined;
  const path = join(root, id, fileName);
  return { path, stat: lstatSync(path, { throwIfNoEntry: false }) };
}

/** An artifact open for reading; the caller closes `fd`. */
export interface OpenArtifact {
  fd: number;
  size: number;
}

/**
 * `artifacts/<id>/<fileName>` opened, when it is a file csv-wave wrote (`isWrittenFile`) at
 * that path; otherwise undefined. The checks are made on the open file too, and the path is
 * looked at again after the open: a folder swapped for a symlink while the file was opened
 * would have opened another file, whose inode is not the one now at the path (a file with
 * one link has one path). The open never follows a last symlink and never waits (a FIFO
 * planted there would block the server until a writer came).
 */
export function openArtifact(sessionDir: string, id: string, fileName: string): OpenArtifact | undefined {
  const before = artifactPath(sessionDir, id, fileName);
  if (before === undefined || !isWrittenFile(before.stat)) return undefined;
  let fd: number;
  try {
    fd = openSync(before.path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  const opened = fstatSync(fd);
  const after = artifactPath(sessionDir, id, fileName)?.stat;
  if (isWrittenFile(opened) && isWrittenFile(after) && after.ino === opened.ino && after.dev === opened.dev) return { fd, size: opened.size };
  closeSync(fd);
  return undefined;
}
