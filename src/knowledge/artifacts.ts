import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cutText } from './cut-text.js';

/** The findings cell holds at most this many characters (DESIGN.md section 2). */
export const kMaxFindingsChars = 500;

/** Writes `artifacts/<id>-<name>.md` and returns its path relative to the session folder. */
export function writeArtifact(sessionDir: string, taskId: string, name: string, content: string): string {
  const relative = `artifacts/${taskId}-${name}.md`;
  mkdirSync(join(sessionDir, 'artifacts'), { recursive: true });
  writeFileSync(join(sessionDir, relative), content);
  return relative;
}

/**
 * Findings that fit go to the cell as they are. Longer ones are written whole to
 * `artifacts/<id>-output.md`, and the cell keeps their beginning and a pointer to the file.
 */
export function fitFindings(sessionDir: string, taskId: string, findings: string): { cell: string; artifact?: string } {
  if (findings.length <= kMaxFindingsChars) return { cell: findings };
  const artifact = writeArtifact(sessionDir, taskId, 'output', findings);
  const pointer = ` [… full output: ${artifact}]`;
  return { cell: cutText(findings, kMaxFindingsChars - pointer.length) + pointer, artifact };
}
