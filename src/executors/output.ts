import type { AttemptOutcome } from './types.js';

/**
 * Reads a command's stdout (DESIGN.md section 6): the whole of it, or else its last
 * non-empty line, if that is a JSON object, is the result; otherwise the trimmed text is
 * the findings. `cutAtBytes` says the output was longer than kept.
 */
export function parseTaskOutput(stdout: string, cutAtBytes?: number): AttemptOutcome {
  const trimmed = stdout.trim();
  const whole = parseObject(trimmed);
  if (whole !== undefined) return { kind: 'result', result: whole };
  const lines = trimmed.split(/\r?\n/).filter((line) => line.trim() !== '');
  const last = lines.length > 0 ? parseObject(lines[lines.length - 1]!.trim()) : undefined;
  if (last !== undefined) return { kind: 'result', result: last };
  const note = cutAtBytes === undefined ? '' : `\n[output cut at ${cutAtBytes} bytes]`;
  return { kind: 'result', result: { status: 'completed', findings: trimmed + note } };
}

function parseObject(text: string): object | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
