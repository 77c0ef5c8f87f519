import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private folder under the system's temporary folder, never the session's, for the files
 * one attempt hands a program and reads back (the codex executor's answer schema and last
 * message). `files` are written there first; the folder goes when `use` settles.
 */
export async function withScratchFolder<T>(prefix: string, files: Readonly<Record<string, string>>, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
    return await use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
