import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli } from './cli.js';
import { buildSession } from './session-builder.js';

/** What task `A-b` returns: an artifact named `notes`. */
export const kNotes = '# Notes of A-b\n\nWritten by the task, through its result.\n';

/**
 * A finished session whose artifacts the engine wrote: task `A`'s findings pass 500
 * characters (so `artifacts/A/output.md`), task `A-b` returns the artifact `notes`. Ids
 * that share a prefix: a flat `A-…` naming would mix them up. Beside them, symlinks that
 * must be neither linked nor served: `artifacts/A/escape.md` to a file outside the session,
 * and `artifacts/A-b/inside.md` to A's output (inside, but still a symlink).
 */
export async function artifactSession(): Promise<string> {
  const result = JSON.stringify({ findings: 'notes written', artifacts: [{ name: 'notes', content: kNotes }] });
  const dir = buildSession([
    { id: 'A', description: 'long', role: 'r' },
    { id: 'A-b', description: result, role: 'r' },
  ]);
  const run = await runCli('run', dir, '--cmd', "case {id} in A) yes 'a long finding' | head -c 2000;; *) printf %s {description};; esac");
  expect(run.code, run.stderr).toBe(0);
  const outside = join(mkdtempSync(join(tmpdir(), 'csv-wave-outside-')), 'secret.md');
  writeFileSync(outside, 'secret outside the session\n');
  symlinkSync(outside, join(dir, 'artifacts', 'A', 'escape.md'));
  symlinkSync(join('..', 'A', 'output.md'), join(dir, 'artifacts', 'A-b', 'inside.md'));
  return dir;
}
