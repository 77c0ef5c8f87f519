/** prev_context when no context_from task has findings yet (DESIGN.md section 4). */
export const kNoPreviousContext = 'No previous context available';

/** @default 16000 characters */
export const kDefaultPrevContextCap = 16_000;

export interface ContextSource {
  status: string;
  findings: string;
}

/**
 * `[Task <id>] <findings>` for each context_from id, in order, whose task completed with
 * findings, joined with newlines; capped at `cap` characters, the cut said in a marker.
 */
export function buildPrevContext(
  contextFrom: readonly string[],
  lookup: (id: string) => ContextSource | undefined,
  cap: number = kDefaultPrevContextCap,
): string {
  const parts: string[] = [];
  for (const id of contextFrom) {
    const source = lookup(id);
    if (source?.status === 'completed' && source.findings !== '') parts.push(`[Task ${id}] ${source.findings}`);
  }
  if (parts.length === 0) return kNoPreviousContext;
  const text = parts.join('\n');
  if (text.length <= cap) return text;
  const marker = (kept: number) => `\n[prev_context cut: ${kept} of ${text.length} characters kept]`;
  const kept = Math.max(0, cap - marker(cap).length);
  return text.slice(0, kept) + marker(kept);
}
