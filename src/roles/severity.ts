/** The challenger's severity levels, in the order its summary is written. */
export const kSeverityLevels = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'] as const;
export type SeverityCounts = Record<(typeof kSeverityLevels)[number], number>;

/** The counts a summary gives, level by level (a later count of a level wins); levels it does not name are absent. */
export function readSeverity(summary: string): Partial<SeverityCounts> {
  const counts: Partial<SeverityCounts> = {};
  for (const match of summary.matchAll(/\b(critical|high|medium|low)\s*[:=]\s*(\d+)/gi)) {
    counts[match[1]!.toUpperCase() as keyof SeverityCounts] = Number(match[2]);
  }
  return counts;
}

/** Reads `CRITICAL:0 HIGH:2 MEDIUM:3 LOW:1` (any order, case, separators); undefined when none is there. */
export function parseSeverity(summary: string): SeverityCounts | undefined {
  const found = readSeverity(summary);
  if (Object.keys(found).length === 0) return undefined;
  return { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, ...found };
}

/** CRITICAL or HIGH above zero means revision (DESIGN.md section 6); no counts, no signal. */
export function signalFromSeverity(summary: string): 'REVISION_NEEDED' | 'CONVERGED' | '' {
  const counts = parseSeverity(summary);
  if (!counts) return '';
  return counts.CRITICAL + counts.HIGH > 0 ? 'REVISION_NEEDED' : 'CONVERGED';
}
