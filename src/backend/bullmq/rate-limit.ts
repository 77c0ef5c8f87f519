import { Queue } from 'bullmq';
import { WaveError } from '../../errors.js';
import { bullmqConnection } from './connection.js';
import { queueNameOf } from './names.js';

/** Attempts started per `durationMs` across every worker of a session (`--rate N/s|N/min`). */
export interface RateLimit {
  max: number;
  durationMs: number;
}

/**
 * The queue's limit when the run sets none: so high it never holds a job back, but present,
 * because BullMQ honours a manual pause (a 429's Retry-After, see pauseQueue) only on a
 * queue that has a limit.
 */
const kUnlimited: RateLimit = { max: 2 ** 31, durationMs: 1000 };

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

/** The rate as `--rate` writes it. */
export function rateText(rate: RateLimit): string {
  return `${rate.max}/${rate.durationMs === 1000 ? 's' : 'min'}`;
}

/**
 * Sets the session queue's rate limit (BullMQ's global rate limit, kept in the queue's
 * meta in Redis, so every worker of the queue obeys it, whenever it started): `rate`, or
 * none when undefined. Called by the coordinator before its first job.
 */
export async function setQueueRate(url: string, sessionId: string, rate: RateLimit | undefined): Promise<void> {
  const queue = new Queue(queueNameOf(sessionId), { connection: bullmqConnection(url) });
  queue.on('error', () => undefined);
  try {
    const { max, durationMs } = rate ?? kUnlimited;
    await queue.setGlobalRateLimit(max, durationMs);
  } finally {
    await queue.close();
  }
}
