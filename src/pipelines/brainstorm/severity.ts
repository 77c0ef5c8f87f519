export type SeverityCounts = Record<'CRITICAL' | 'HIGH' | 'MEDIUM' | 'LOW', number>;

/** Reads `CRITICAL:0 HIGH:2 MEDIUM:3 LOW:1` (any order, case, separators); undefined when none is there. */
export function parseSeverity(summary: string): SeverityCounts | undefined {
  const counts: SeverityCounts = { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0 };
  let found = false;
  for (const match of summary.matchAll(/\b(critical|high|medium|low)\s*[:=]\s*(\d+)/gi)) {
    counts[match[1]!.toUpperCase() as keyof SeverityCounts] = Number(match[2]);
    found = true;
  }
  return found ? counts : undefined;
}

/** CRITICAL or HIGH above zero means revision (DESIGN.md section 6); no counts, no signal. */
export function signalFromSeverity(summary: string): 'REVISION_NEEDED' | 'CONVERGED' | '' {
  const counts = parseSeverity(summary);
  if (!counts) return '';
  return counts.CRITICAL + counts.HIGH > 0 ? 'REVISION_NEEDED' : 'CONVERGED';
}
