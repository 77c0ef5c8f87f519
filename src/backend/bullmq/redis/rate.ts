import { WaveError } from '../../../errors.js';

/** Attempts started per `durationMs` across every worker of a session (`--rate N/s|N/min`). */
export interface RateLimit {
  max: number;
  durationMs: number;
}

const kUnits: Record<string, number> = { s: 1000, sec: 1000, min: 60_000 };

/** Parses `N/s` or `N/min` (N a positive integer); a WaveError USAGE naming `flag` otherwise. */
export function parseRate(text: string, flag: string): RateLimit {
  const match = /^\s*(\d+)\s*\/\s*(s|sec|min)\s*$/.exec(text);
  const max = Number(match?.[1]);
  const durationMs = kUnits[match?.[2] ?? ''];
  if (!match || !Number.isSafeInteger(max) || max < 1 || durationMs === undefined) {
    throw new WaveError('USAGE', `Expected \`${flag}\` to be attempts per second or per minute, as 20/s or 600/min, got \`${text}\``);
  }
  return { max, durationMs };
}
