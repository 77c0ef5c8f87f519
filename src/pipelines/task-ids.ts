/** `PREFIX-007` style ids: the next free number of a prefix, three digits at least. */
export function nextId(prefix: string, existing: Iterable<string>): string {
  const pattern = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)$`);
  let highest = 0;
  for (const id of existing) {
    const match = pattern.exec(id);
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return `${prefix}-${String(highest + 1).padStart(3, '0')}`;
}

/** The prefix and number of an id like `IDEA-003`, if it has that shape. */
export function splitId(id: string): { prefix: string; number: number } | undefined {
  const match = /^(.*)-(\d+)$/.exec(id);
  return match ? { prefix: match[1]!, number: Number(match[2]) } : undefined;
}
