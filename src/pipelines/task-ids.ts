/** Digits of a new id when its prefix has none yet: `IDEA-001`, as the seed writes them. */
const kDefaultIdDigits = 3;

/**
 * `PREFIX-007` style ids: the next free number of a prefix, as wide as the highest id of
 * that prefix already has (`W2-05` → `W2-06`), three digits when there is none.
 */
export function nextId(prefix: string, existing: Iterable<string>): string {
  const pattern = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)$`);
  let highest = 0;
  let digits = kDefaultIdDigits;
  for (const id of existing) {
    const match = pattern.exec(id);
    if (!match) continue;
    const number = Number(match[1]);
    if (number > highest || (number === highest && match[1]!.length > digits)) {
      highest = number;
      digits = match[1]!.length;
    }
  }
  return `${prefix}-${String(highest + 1).padStart(digits, '0')}`;
}

/** The prefix and number of an id like `IDEA-003`, if it has that shape. */
export function splitId(id: string): { prefix: string; number: number } | undefined {
  const match = /^(.*)-(\d+)$/.exec(id);
  return match ? { prefix: match[1]!, number: Number(match[2]) } : undefined;
}
