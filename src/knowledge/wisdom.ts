import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kLayout, type SessionFileWriter } from '../layout.js';

/** The append-only wisdom files (seed 000). */
export const kWisdomKinds = ['learnings', 'decisions', 'conventions', 'issues'] as const;
export type WisdomKind = (typeof kWisdomKinds)[number];

/** Appends entries to `wisdom/<kind>.md`, one `- [task] text` line each, newest last. */
export function appendWisdom(files: SessionFileWriter, taskId: string, kind: WisdomKind, entries: readonly string[]): void {
  if (entries.length === 0) return;
  const lines = entries.map((entry) => `- [${taskId}] ${entry.replace(/\r?\n/g, ' ')}\n`).join('');
  files.append(join(kLayout.wisdom, `${kind}.md`), lines);
}

/** Every `wisdom/*.md` file by name. */
export function readWisdom(sessionDir: string): Record<string, string> {
  const folder = join(sessionDir, kLayout.wisdom);
  if (!existsSync(folder)) return {};
  const wisdom: Record<string, string> = {};
  for (const name of readdirSync(folder).sort()) {
    if (name.endsWith('.md')) wisdom[name] = readFileSync(join(folder, name), 'utf8');
  }
  return wisdom;
}
