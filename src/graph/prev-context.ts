import { kRunDefaults } from '../option-table.js';
/** prev_context when no context_from task has findings yet (DESIGN.md section 4). */
export const kNoPreviousContext = 'No previous context available';

/** The cap when none is given: the options table's default (16,000 characters). */
export const kDefaultPrevContextCap = kRunDefaults.prevContextCap;

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
  // A cap too small to hold the marker still bounds the text: the cap is the promise.
  if (marker(0).length > cap) return text.slice(0, withoutHalfPair(text, cap));
  const kept = withoutHalfPair(text, Math.max(0, cap - marker(cap).length));
  return text.slice(0, kept) + marker(kept);
}

/** `end`, or one less when the cut would split a surrogate pair (a lone half is not valid UTF-8). */
function withoutHalfPair(text: string, end: number): number {
  const last = text.charCodeAt(end - 1);
  return end > 0 && last >= 0xd800 && last <= 0xdbff ? end - 1 : end;
}
