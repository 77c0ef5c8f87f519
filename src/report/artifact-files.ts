import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { kArtifactNamePattern } from '../schema/result.js';
import { kTaskIdPattern } from '../schema/row.js';

/** True for `<name>.md` with a name an executor may give (schema/result.ts): no `/`, no scheme, no `..` alone. */
function isArtifactFileName(fileName: string): boolean {
  return fileName.endsWith('.md') && kArtifactNamePattern.test(fileName.slice(0, -3));
}

/** True when `path` is a real folder, not a symlink: a symlinked folder may lead out of the session. */
function isPlainFolder(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

/**
 * The artifacts the report links, as [task id, `artifacts/<id>/<name>.md`], by id then name:
 * the regular files of `artifacts/<id>/` for each id in `ids`. A symlink (file or folder) is
 * never listed, even one that stays inside: the page and `serve` show only what csv-wave wrote.
 */
export function listArtifacts(sessionDir: string, ids: ReadonlySet<string>): [string, string][] {
  const root = join(sessionDir, 'artifacts');
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
      .sort();
    for (const name of names) paths.push([id, `artifacts/${id}/${name}`]);
  }
  return paths;
}

/**
 * The absolute path of `artifacts/<id>/<fileName>` when both parts are named as csv-wave
 * names them and the path is a regular file reached through no symlink; otherwise undefined.
 */
export function artifactFile(sessionDir: string, id: string, fileName: string): string | undefined {
  if (!kTaskIdPattern.test(id) || !isArtifactFileName(fileName)) return undefined;
  const root = join(sessionDir, 'artifacts');
  if (!isPlainFolder(root) || !isPlainFolder(join(root, id))) return undefined;
  const path = join(root, id, fileName);
  return lstatSync(path, { throwIfNoEntry: false })?.isFile() === true ? path : undefined;
}
