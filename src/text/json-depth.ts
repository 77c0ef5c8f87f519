/**
 * How deep a task's JSON output may nest objects and arrays (serde_json's default limit).
 * Deeper output is refused where it is parsed: a few thousand levels parse and serialise
 * in a worker thread but cannot be cloned back to the main thread, whose reply then never
 * arrives; no real result needs more than a handful of levels.
 */
export const kMaxJsonDepth = 128;

/**
 * Whether JSON text nests objects and arrays deeper than `max` levels. A scan of the text
 * (brackets inside strings do not count), so it needs no stack and works on invalid JSON.
 */
export function nestsDeeperThan(text: string, max: number = kMaxJsonDepth): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') {
      if (++depth > max) return true;
    } else if (char === '}' || char === ']') depth--;
  }
  return false;
}

/** The error text for JSON that nests too deep. */
export function tooDeepText(max: number = kMaxJsonDepth): string {
  return `it nests objects and arrays deeper than ${max} levels, the most csv-wave reads`;
}
